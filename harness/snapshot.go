package harness

import (
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/sframe"
)

// snapshotSlack is how far below the SP a snapshot starts: unwinders never
// read below the SP, but a red zone costs little to include.
const snapshotSlack = 256

// snapshot is a copy of the registers and the live stack taken at one
// step, for consumers that unwind later, in batches.
type snapshot struct {
	regs  sframe.RegisterFile
	base  uint64
	words []uint64
}

func takeSnapshot(s *emu.Step, abi sframe.ABI) *snapshot {
	sp := s.Regs.Regs[abi.SPRegister()] &^ 7
	lo := max(sp-snapshotSlack, emu.StackBase)
	if sp < snapshotSlack {
		lo = emu.StackBase
	}
	snap := &snapshot{regs: *s.Regs, base: lo}
	for a := lo; a+8 <= emu.StackTop; a += 8 {
		w, ok := s.ReadWord(a)
		if !ok {
			break
		}
		snap.words = append(snap.words, w)
	}
	return snap
}

// ReadWord implements sframe.Memory over the snapshot: aligned words
// only, as unwinders read saved slots.
func (m *snapshot) ReadWord(addr uint64) (uint64, bool) {
	if addr < m.base || addr&7 != 0 {
		return 0, false
	}
	i := (addr - m.base) / 8
	if i >= uint64(len(m.words)) {
		return 0, false
	}
	return m.words[i], true
}
