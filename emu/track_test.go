package emu

import (
	"testing"

	"github.com/sfconform/sfconform/target"
)

// SetTrack adds registers to every step's file and takes them away again.
func TestSetTrack(t *testing.T) {
	m := newMachine(t, target.X86_64)
	code := []byte{0x41, 0xba, 0x2a, 0x00, 0x00, 0x00, 0x90, 0x90} // mov $42,%r10d; nop; nop
	run := func() (seen bool, val uint64) {
		_, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 7, Budget: 10}, func(s *Step) error {
			if s.Regs.PC == CodeBase+6 {
				val, seen = s.Regs.Get(10)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return seen, val
	}
	if seen, _ := run(); seen {
		t.Fatal("r10 in the register file without being tracked")
	}
	m.SetTrack(10)
	if seen, v := run(); !seen || v != 42 {
		t.Fatalf("tracked r10: %v %d", seen, v)
	}
	m.SetTrack()
	if seen, _ := run(); seen {
		t.Fatal("r10 still tracked after SetTrack()")
	}
}
