package harness

import (
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// snapshotSlack is how far below the SP a snapshot starts: the x86-64
// psABI's red zone is 128 bytes; unwinders never read below the SP, but
// the red zone costs little to include.
const snapshotSlack = 256

// takeSnapshot copies the registers and the live stack, from a little
// below the SP to the top of the stack region, for a consumer that
// unwinds later or in another process.
func takeSnapshot(s *emu.Step, t target.Target) *machine.Snapshot {
	sp := s.Regs.Regs[t.SP()]
	lo := uint64(emu.StackBase)
	if sp >= emu.StackBase+snapshotSlack {
		lo = sp - snapshotSlack
	}
	addr, b := s.Stack(lo)
	return &machine.Snapshot{Regs: *s.Regs, StackAddr: addr, Stack: append([]byte(nil), b...), BigEndian: s.BigEndian()}
}
