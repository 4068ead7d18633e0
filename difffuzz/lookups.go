package difffuzz

import (
	"github.com/sfconform/sfconform/machine"
)

// WithLookups returns a copy of c whose steps are c's recorded ones
// followed by lookups: machine states whose PC the section itself names,
// by the classifier's layout of it (each function's start, each FRE's
// start, the function's last byte and the first byte past it), then the
// PCs in extra, at most max in all. Each takes the registers and stack
// of a recorded step in turn, so that a walk from it goes on through real
// frames. Where no FDE can be read (a mangled header), the lookups are
// extra's PCs only: asking about a section that cannot be read is the
// load's business.
func WithLookups(c *Case, max int, extra []uint64) *Case {
	d := *c
	d.Steps = append([]*machine.Snapshot(nil), c.Steps...)
	var pcs []uint64
	l := readLayout(c.Section, c.Addr)
	var fdes []*rawFDE
	for _, s := range l.sections {
		fdes = append(fdes, s.fdes...)
	}
	// Spread over the functions when there are more than the budget
	// allows: every function gets its start, some their rows and end.
	stride := 1
	if n := len(fdes) * 4; n > max {
		stride = (n + max - 1) / max
	}
	for i := 0; i < len(fdes); i += stride {
		f := fdes[i]
		pcs = append(pcs, f.start)
		for j, r := range f.fres {
			if j > 0 && j < 3 {
				pcs = append(pcs, f.start+uint64(r.start))
			}
		}
		if f.size > 0 {
			pcs = append(pcs, f.end()-1)
		}
		pcs = append(pcs, f.end())
	}
	pcs = append(pcs, extra...)
	if len(pcs) > max {
		pcs = pcs[:max]
	}
	for i, pc := range pcs {
		d.Steps = append(d.Steps, lookupState(c.Steps, i, pc, c.Target.ByteOrder().Uint16([]byte{0, 1}) == 1))
	}
	return &d
}

// lookupState is recorded state i (in turn) with its PC set to pc, or a
// bare state on an empty stack when nothing was recorded.
func lookupState(recorded []*machine.Snapshot, i int, pc uint64, bigEndian bool) *machine.Snapshot {
	var s machine.Snapshot
	if len(recorded) > 0 {
		s = *recorded[i%len(recorded)]
	} else {
		s = machine.Snapshot{StackAddr: 0x70000000, Stack: make([]byte, 256), BigEndian: bigEndian}
		for r := 0; r < 32; r++ {
			s.Regs.Set(r, 0x70000080)
		}
	}
	s.Regs.PC = pc
	return &s
}
