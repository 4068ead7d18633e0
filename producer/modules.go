package producer

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
)

// The modules layout: the program's functions, as gen laid them out, are
// cut at function starts into 2 to 4 loaded objects, an executable
// ("exe") followed by shared objects ("lib1.so", ...), each with its own
// section holding the FDEs of its functions; the far segment, when the
// program has one, is a shared object of its own, as ld.so maps a DSO
// far from the executable. Calls between functions of different modules
// cross objects as calls into a DSO do. A consumer must find the module
// holding a PC (image.Module's code range) and look the PC up in that
// module's section only: another module's section has no FDE for it.

// modulesChosen says whether the program of seed is made of several
// modules: 1 program in 8, at seeds the other shapes leave alone, unless
// its table is large (maxConcatenated functions or more), which keeps its
// size in one section.
func modulesChosen(seed int64) bool { return uint64(seed)%8 == 4 }

// encodeModules cuts the program into modules and encodes each one's
// FDEs (fdes, in the order the layout left them) with opt, its section
// placed after the code (8-byte aligned, one after the other; the far
// module's after the far code), then padding zero bytes. It returns nil
// when the program has too few functions with rows to make two modules.
func encodeModules(p *gen.Program, fdes []sframe.FDE, opt sframe.EncodeOptions, padding int) ([]image.Module, error) {
	cuts, far := moduleCuts(p, fdes, nil)
	if cuts == nil {
		return nil, nil
	}
	nearEnd := p.Base + uint64(len(p.Code))
	mods := make([]image.Module, len(cuts))
	next := alignUp(nearEnd, sectionAlign)
	for i, c := range cuts {
		var own []sframe.FDE
		for _, f := range fdes {
			if f.Start >= c.start && f.Start < c.end {
				own = append(own, f)
			}
		}
		addr := next
		if far && i == len(cuts)-1 {
			addr = alignUp(c.end, sectionAlign)
		}
		o := opt
		o.Base = addr
		sec, err := sframe.Encode(own, o)
		if err != nil {
			return nil, err
		}
		sec = append(sec, make([]byte, padding)...)
		name := "exe"
		if i > 0 {
			name = fmt.Sprintf("lib%d.so", i)
		}
		mods[i] = image.Module{Name: name, Start: c.start, End: c.end, SFrame: sec, SFrameAddr: addr}
		if addr == next {
			next = alignUp(addr+uint64(len(sec)), sectionAlign)
		}
	}
	return mods, nil
}

// moduleCut is one module's code range, [start, end).
type moduleCut struct{ start, end uint64 }

// moduleCuts cuts the program into modules at function starts, as
// encodeModules describes, from the seed and fdes (gen's FDEs, in any
// order), at starts keep allows (nil: every one): the code ranges in
// address order, the far segment last when
// it is a module (far true), or nil when the program has too few
// functions with rows to make two modules.
func moduleCuts(p *gen.Program, fdes []sframe.FDE, keep func(start uint64) bool) ([]moduleCut, bool) {
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0xbb67_ae85_84ca_a73b))
	nearEnd := p.Base + uint64(len(p.Code))
	var far *moduleCut
	if len(p.FarCode) > 0 {
		far = &moduleCut{p.FarBase, p.FarBase + uint64(len(p.FarCode))}
	}
	hasRows := func(c moduleCut) bool {
		return slices.ContainsFunc(fdes, func(f sframe.FDE) bool { return len(f.Rows) > 0 && f.Start >= c.start && f.Start < c.end })
	}
	// Boundaries: starts of functions that run (not idle fillers, not a
	// cold part, which belongs with its owner), the first excepted, where
	// an FDE starts and none spans (one PCMASK FDE covers every PLT
	// entry: its entries stay in one object, as a linker's .plt does).
	inside := func(a uint64) bool {
		return slices.ContainsFunc(fdes, func(f sframe.FDE) bool { return f.Start < a && a-f.Start < uint64(f.Size) })
	}
	var starts []uint64
	for _, f := range p.Funcs {
		if !f.Idle && f.PartOf == "" && !f.Far && f.Addr > p.Base && f.Addr < nearEnd &&
			slices.ContainsFunc(fdes, func(d sframe.FDE) bool { return d.Start == f.Addr }) && !inside(f.Addr) &&
			(keep == nil || keep(f.Addr)) {
			starts = append(starts, f.Addr)
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	want := 2 + rng.IntN(3)
	if far != nil {
		want--
	}
	rng.Shuffle(len(starts), func(a, b int) { starts[a], starts[b] = starts[b], starts[a] })
	cuts := []moduleCut{{p.Base, nearEnd}}
	for _, s := range starts {
		if len(cuts) >= want {
			break
		}
		i := slices.IndexFunc(cuts, func(c moduleCut) bool { return s > c.start && s < c.end })
		lo, hi := moduleCut{cuts[i].start, s}, moduleCut{s, cuts[i].end}
		if hasRows(lo) && hasRows(hi) {
			cuts = slices.Replace(cuts, i, i+1, lo, hi)
		}
	}
	if far != nil && hasRows(*far) {
		cuts = append(cuts, *far)
	} else if far != nil {
		// Far code without rows joins no module: its PCs have none.
		far = nil
	}
	if len(cuts) < 2 {
		return nil, false
	}
	return cuts, far != nil
}
