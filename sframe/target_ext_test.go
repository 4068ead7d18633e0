package sframe_test

import (
	"testing"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// sframe keeps its own copy of the facts per machine it needs, so that it
// imports nothing of the project. The copy must say what package target
// says, for every target: a new target, or a changed fact, fails here
// until both agree.
func TestSFrameCopyAgrees(t *testing.T) {
	t.Parallel()
	if len(sframe.Targets) != len(target.All) {
		t.Fatalf("sframe lists %d ABIs, target %d targets", len(sframe.Targets), len(target.All))
	}
	for i, tg := range target.All {
		t.Run(tg.Name(), func(t *testing.T) {
			t.Parallel()
			a := sframe.ABI(tg)
			if sframe.Targets[i] != a {
				t.Errorf("sframe.Targets[%d] = %v, target.All[%d] = %v", i, sframe.Targets[i], i, tg)
			}
			if a.Name() != tg.Name() {
				t.Errorf("Name: sframe %q, target %q", a.Name(), tg.Name())
			}
			if p, err := sframe.ParseTarget(tg.Name()); err != nil || p != a {
				t.Errorf("ParseTarget(%q) = %v, %v", tg.Name(), p, err)
			}
			if a.ByteOrder() != tg.ByteOrder() {
				t.Errorf("ByteOrder: sframe %v, target %v", a.ByteOrder(), tg.ByteOrder())
			}
			if a.IsAArch64() != tg.IsAArch64() {
				t.Errorf("IsAArch64: sframe %v, target %v", a.IsAArch64(), tg.IsAArch64())
			}
			if a.ELFMachine() != tg.ELFMachine() {
				t.Errorf("ELFMachine: sframe %v, target %v", a.ELFMachine(), tg.ELFMachine())
			}
			if a.SPRegister() != tg.SP() || a.FPRegister() != tg.FP() || a.RARegister() != tg.RA() {
				t.Errorf("SP, FP, RA: sframe %d, %d, %d; target %d, %d, %d", a.SPRegister(), a.FPRegister(), a.RARegister(), tg.SP(), tg.FP(), tg.RA())
			}
			if sframe.WordSize != target.WordSize {
				t.Errorf("WordSize: sframe %d, target %d", sframe.WordSize, target.WordSize)
			}
		})
	}
}
