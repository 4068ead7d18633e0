package gen

// skeletons are the patterns every target has, written once over the
// target's prims. Their shapes, and the call positions they offer:
//
//	leaf            no frame; sometimes a second return behind a branch
//	fp-frame        FP-based CFA; one of the target's epilogues
//	sp-frame        SP-based CFA through two allocations and releases;
//	                calls after the prologue, in the body and inside the
//	                epilogue
//	callee-saved    callee-saved registers saved, written and restored
//	multi-epilogue  an early return on an argument bit, the two epilogues
//	                in different forms
//	tail-call       leaves through a jump to a deeper function, with or
//	                without a frame first
//	noreturn-call   a call that never returns as the last instruction,
//	                on an argument bit (skeleton_noreturn.go)
//	shrink-wrap     a fast path in the entry state right after such a
//	                call, so the row changes at the return address
//	                (skeleton_noreturn.go)
//	plt-stubs       a block of PLT-like stubs under one PCMASK FDE
//	                (skeleton_plt.go)
//	hot-cold        a cold part after every function, entered and left
//	                by jumps with the frame live (skeleton_hotcold.go)
//	long-function   256+ or 64 KiB+ bytes; on x86-64 frames of 128+ or
//	                32 KiB+ bytes (skeleton_long.go)
//	far-code        an fp-frame function 5 GiB from the rest, called
//	                through a register (skeleton_far.go; v3 only)
//	new-stack       switches to a fresh stack on two argument bits: RA
//	                undefined from there, calls on the new stack, exit
//	                (skeleton_newstack.go)
//	empty-fde       the entry stub gets an FDE with no rows
//	                (skeleton_emptyfde.go; v3 only)
//	signal          a signal handler (one of the above) nothing calls,
//	                and the trampoline it returns to (skeleton_signal.go)
//	signal-empty-fde  the same, the trampoline's FDE with the signal
//	                flag and no rows (skeleton_signal.go; v3 only)
var skeletons = []*pattern{
	{name: "leaf", doc: "no frame, no calls; the RA stays where the call left it", build: leafSkeleton},
	{name: "fp-frame", doc: "frame pointer set up; CFA based on FP", calls: true, plain: true, build: fpFrameSkeleton},
	{name: "sp-frame", doc: "no frame pointer; CFA based on SP through several adjustments", calls: true, epilogueCalls: true, build: spFrameSkeleton},
	{name: "callee-saved", doc: "callee-saved registers saved, written, restored", calls: true, epilogueCalls: true, build: calleeSavedSkeleton},
	{name: "multi-epilogue", doc: "early return on an argument bit; two epilogues in different forms", calls: true, earlyExit: true, build: multiEpilogueSkeleton},
	{name: "tail-call", doc: "frame torn down, then a jump to a deeper function", calls: true, tail: true, build: tailCallSkeleton},
	{name: "noreturn-call", doc: "last instruction a call that never returns, on some paths: the return address lies past the function", calls: true, earlyExit: true, exits: true, build: noreturnCallSkeleton},
	{name: "shrink-wrap", doc: "a fast path that returns before the prologue, placed right after a call that never returns: the return address is the fast path's first instruction, whose row (the entry rules) is not the call's", calls: true, earlyExit: true, entryExit: true, exits: true, build: shrinkWrapSkeleton},
	{name: "plt-stubs", doc: "PLT-like stubs of one size under one PCMASK FDE, each jumping to its own function", stubs: true, cannot: "SFrame v1's PCMASK lookup takes the row whose start's bits are all set in the offset, not the offset modulo the stub size, so these rows are no v1 PCMASK FDE; the builtin encoder writes v2 and v3", build: pltStubsSkeleton},
	{name: "hot-cold", doc: "hot/cold split: the cold part placed after every function, entered by a jump with the frame live", calls: true, earlyExit: true, build: hotColdSkeleton},
	{name: "long-function", doc: "256+ bytes, sometimes 64 KiB+, with rows past those offsets executed (2- and 4-byte FRE starts); x86-64: frames of 128+ and 32 KiB+ bytes", calls: true, epilogueCalls: true, build: longFunctionSkeleton},
	farCodeSkeleton,
	newStackSkeleton,
	emptyFDESkeleton,
	signalPattern,
	signalEmptyFDEPattern,
}

func leafSkeleton(b *builder, f *plan) {
	b.body()
	if b.rng.IntN(2) == 0 {
		l := b.newLabel()
		b.cond(l)
		b.t.filler(b)
		b.t.prims.ret(b)
		b.place(l)
	}
	b.t.prims.ret(b)
}

func fpFrameSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	p.fpSetup(b)
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b)
	p.ret(b)
}

func spFrameSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	p.spSetup(b)
	b.calls(posPrologue)
	b.t.filler(b)
	c := p.alloc(b, 0)
	b.body()
	if p.wiggle != nil && b.rng.IntN(2) == 0 {
		p.wiggle(b)
	}
	b.calls(posBody)
	p.alloc(b, -c)
	p.spTeardown(b, func() { b.calls(posEpilogue) })
	p.ret(b)
}

func calleeSavedSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	regs, epilogue := p.saveRegs(b)
	b.calls(posPrologue)
	for _, r := range regs {
		p.setReg(b, r)
	}
	b.body()
	b.calls(posBody)
	epilogue(b, func() { b.calls(posEpilogue) })
	p.ret(b)
}

func multiEpilogueSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	reg, epilogues := p.fpSaveOne(b)
	b.calls(posPrologue)
	p.setReg(b, reg)
	early := b.newLabel()
	b.cond(early)
	saved := b.st
	b.body()
	b.calls(posBody)
	first := b.rng.IntN(2)
	epilogues[first](b)
	p.ret(b)
	b.st = saved
	b.place(early)
	epilogues[1-first](b)
	p.ret(b)
}

func tailCallSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	if len(f.calls) == 0 && b.rng.IntN(3) == 0 {
		b.body()
		p.tailJump(b, f.tail)
		return
	}
	p.fpSetup(b)
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b)
	p.tailJump(b, f.tail)
}
