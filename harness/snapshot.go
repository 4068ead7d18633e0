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

// takeSnapshot copies the registers and the live stack, from a little
// below the SP to the top of the stack region, for a consumer that
// unwinds later or in another process. On a fresh stack the image
// declares (symbols of kind stack) the copy ends at that stack's end:
// the frames there are all an unwinder can reach.
func takeSnapshot(s *emu.Step, t target.Target, stacks []image.Symbol) *machine.Snapshot {
	sp := s.Regs.Regs[t.SP()]
	lo := uint64(emu.StackBase)
	if sp >= emu.StackBase+snapshotSlack {
		lo = sp - snapshotSlack
	}
	addr, b := s.Stack(lo)
	for _, st := range stacks {
		if st.IsStack() && sp > st.Addr && sp <= st.End() && st.End() > addr && st.End()-addr < uint64(len(b)) {
			b = b[:st.End()-addr]
			break
		}
	}
	return &machine.Snapshot{Regs: *s.Regs, StackAddr: addr, Stack: append([]byte(nil), b...), BigEndian: s.BigEndian()}
}
