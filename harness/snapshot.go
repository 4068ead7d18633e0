package harness

import (
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/image"
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
// that unwinds later or in another process. On a fresh stack the image
// declares (symbols of kind stack) the copy ends at that stack's end: the
// frames there are all an unwinder can reach.
func takeSnapshot(s *emu.Step, t target.Target, stacks []image.Symbol) *machine.Snapshot {
	snap := new(machine.Snapshot)
	snapshotInto(snap, s, t, stacks)
	return snap
}

// snapshotInto is takeSnapshot into dst, reusing its stack buffer: a
// batch consumer's steps are copied at every instruction (1-11 KiB on
// average, up to hundreds), and the copies live only until the batch is
// judged.
func snapshotInto(dst *machine.Snapshot, s *emu.Step, t target.Target, stacks []image.Symbol) {
	sp := s.Regs.Regs[t.SP()]
	lo := uint64(emu.StackBase)
	if sp >= emu.StackBase+snapshotSlack {
		lo = sp - snapshotSlack
	}
	top := uint64(snapshotTop)
	for _, st := range stacks {
		if st.IsStack() && sp > st.Addr && sp <= st.End() {
			top = st.End()
			break
		}
	}
	addr, b := s.Stack(min(lo, top))
	if end := addr + uint64(len(b)); end > top {
		b = b[:top-addr]
	}
	*dst = machine.Snapshot{Regs: *s.Regs, StackAddr: addr, Stack: append(dst.Stack[:0], b...), BigEndian: s.BigEndian()}
}
