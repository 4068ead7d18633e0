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

// snapshotTop is the end of what a snapshot copies: every frame of a run
// lies below the SP it starts with (emu.InitialSP); the slack above covers
// the entry stub's own slots.
const snapshotTop = emu.InitialSP + snapshotSlack

// takeSnapshot copies the registers and the live stack, from a little
// below the SP to a little above the SP a run starts with, for a consumer
// that unwinds later or in another process.
func takeSnapshot(s *emu.Step, t target.Target) *machine.Snapshot {
	sp := s.Regs.Regs[t.SP()]
	lo := uint64(emu.StackBase)
	if sp >= emu.StackBase+snapshotSlack {
		lo = sp - snapshotSlack
	}
	addr, b := s.Stack(min(lo, snapshotTop))
	if end := addr + uint64(len(b)); end > snapshotTop {
		b = b[:snapshotTop-addr]
	}
	return &machine.Snapshot{Regs: *s.Regs, StackAddr: addr, Stack: append([]byte(nil), b...), BigEndian: s.BigEndian()}
}
