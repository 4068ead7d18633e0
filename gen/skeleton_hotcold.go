package gen

// hot-cold: GCC's hot/cold split (-freorder-blocks-and-partition): one
// logical function as two symbols and two FDEs. The hot part sets up the
// frame and, on an argument bit, jumps to the cold part, placed after
// every other function, with the frame live. The cold part's rows start
// from the hot part's state at the jump, as GCC's CFI for f.cold does
// (.cfi_startproc, then the directives restating the CFA and the saved
// registers). It makes the plan's body calls, then either jumps back into
// the hot part before its epilogue (GCC's usual shape) or tears the frame
// down and returns itself. The image marks the cold part as a part of the
// hot one (image.Symbol.PartOf): entering it is no call.
func hotColdSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	fp := b.rng.IntN(2) == 0
	if fp {
		p.fpSetup(b)
	} else {
		p.spSetup(b)
	}
	teardown := func(b *builder) {
		if fp {
			p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b)
		} else {
			p.spTeardown(b, func() {})
		}
	}
	b.calls(posPrologue)
	b.body()
	cold := b.part(b.name + ".cold")
	cold.partOf, cold.atEnd = b.name, true
	// A conditional branch may not reach the cold part (a 64 KiB function
	// can lie between): branch over the long jump to it.
	hot := b.newLabel()
	b.cond(hot)
	cold.st = b.st
	p.tailJump(b, cold.name)
	b.place(hot)
	b.t.filler(b)
	back := b.newLabel()
	b.place(back)
	rejoin := b.st
	teardown(b)
	p.ret(b)

	cold.t.filler(cold)
	cold.calls(posBody)
	if b.rng.IntN(2) == 0 {
		if cold.st != rejoin {
			panic("gen: " + b.name + ": the cold part's frame differs from the hot part's where it jumps back")
		}
		p.tailJump(cold, back)
		return
	}
	teardown(cold)
	p.ret(cold)
}
