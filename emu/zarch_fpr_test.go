package emu

import (
	"testing"

	"github.com/sfconform/sfconform/target"
)

// TestS390XAllFloatRegisters writes a different value to each of f0-f15
// (ldgr) and reads them back through SetTrack by DWARF number, as the
// harness does for rules naming them (gen's fpr-save pattern keeps the RA
// and FP in FPRs): DWARF 16-31 are f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,
// f14,f9,f11,f13,f15 (s390x ELF ABI). Unicorn 2.0.1 read every FPR as
// 0 through the API; 2.1.4 reads them. The next run starts with them 0.
func TestS390XAllFloatRegisters(t *testing.T) {
	t.Parallel()
	const v = 0x0123456789ab0000
	abiOrder := [16]uint64{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}
	var code []byte
	for f := byte(0); f < 16; f++ {
		code = append(code, 0xb3, 0xc1, 0x00, f<<4|2) // ldgr %f<f>,%r2
		code = append(code, 0xa7, 0x2b, 0x00, 0x01)   // aghi %r2,1
	}
	code = append(code, s390Nop...)
	m := newMachine(t, target.S390X)
	dwarf := make([]int, 16)
	for i := range dwarf {
		dwarf[i] = 16 + i
	}
	m.SetTrack(dwarf...)
	for runNo := 0; runNo < 2; runNo++ {
		var first, last [16]uint64
		_, err := run(m, code, map[int]uint64{2: v}, func(s *Step) error {
			for i := range dwarf {
				x, ok := s.Regs.Get(16 + i)
				if !ok {
					t.Fatalf("DWARF %d not in the register file", 16+i)
				}
				if s.Index == 0 {
					first[i] = x
				}
				last[i] = x
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range dwarf {
			if first[i] != 0 {
				t.Errorf("run %d: DWARF %d is %#x at the first instruction, want 0", runNo, 16+i, first[i])
			}
			if want := v + abiOrder[i]; last[i] != want {
				t.Errorf("run %d: DWARF %d = %#x, want %#x (f%d)", runNo, 16+i, last[i], want, abiOrder[i])
			}
		}
	}
}
