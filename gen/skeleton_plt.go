package gen

import "fmt"

// plt-stubs: a block of PLT-like stubs of one fixed size, each jumping to
// its own deeper function, described by one PCMASK FDE whose rows repeat
// every stub (the repetition size is the stub size). Callers call a stub;
// the stub moves SP (or saves the RA) and back, then jumps to its target
// with the frame as the call left it: a tail call. Every stub is a symbol
// of its own, so a call entering one is a frame. The assembly renders each
// stub as a small function with its own CFI: GNU as has no directive for a
// PCMASK FDE (ld synthesises them for the PLTs it makes).
func pltStubsSkeleton(b *builder, f *plan) {
	var first *builder
	for i, name := range f.stubs {
		s := b.part(name)
		s.block = f.name
		b.t.prims.pltStub(s, i, f.stubTargets[i])
		if first == nil {
			first = s
			continue
		}
		if err := sameShape(first, s); err != nil {
			panic(fmt.Sprintf("gen: %s: stub %d: %v", f.name, i, err))
		}
	}
}

// sameShape checks that two stubs have instructions of the same sizes
// under the same rows, as one PCMASK FDE requires.
func sameShape(a, b *builder) error {
	if len(a.ops) != len(b.ops) {
		return fmt.Errorf("%d instructions, the first stub %d", len(b.ops), len(a.ops))
	}
	for i, o := range b.ops {
		if o.size() != a.ops[i].size() || o.row != a.ops[i].row {
			return fmt.Errorf("instruction %d (%s) differs from the first stub's (%s)", i, o.text, a.ops[i].text)
		}
	}
	return nil
}
