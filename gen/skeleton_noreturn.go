package gen

// noreturn-call: what a compiler makes of `if (bad) fatal();` with fatal
// declared noreturn. The call to it is placed at the very end, after the
// function's return, and nothing follows it: its return address is the
// first byte past the function, in the next function or past the code.
// An unwinder that looks the caller's row up at the return address
// instead of the return address minus one finds another function's row,
// or none. The call sits on a path some argument vectors take; the others
// return normally. The callee (noreturnCallee, a plan of its own one level
// down) never returns: it jumps to the entry stub's exit, which ends the
// run.
func noreturnCallSkeleton(b *builder, f *plan) { framedFatal(b, f) }

// framedFatal builds a function with a frame (FP- or SP-based) that
// returns, and a path on an argument bit that ends in a call to f.noret:
// the last instruction built so far.
func framedFatal(b *builder, f *plan) {
	p := &b.t.prims
	fp := b.rng.IntN(2) == 0
	if fp {
		p.fpSetup(b)
	} else {
		p.spSetup(b)
	}
	b.calls(posPrologue)
	b.body()
	fatal := b.newLabel()
	b.cond(fatal)
	framed := b.st
	b.t.filler(b)
	b.calls(posBody)
	if fp {
		p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b)
	} else {
		p.spTeardown(b, func() {})
	}
	p.ret(b)
	b.st = framed
	b.place(fatal)
	b.t.filler(b)
	b.checkCall()
	b.emitCall(f.noret)
}

// shrink-wrap: what GCC's shrink-wrapping makes of
//
//	if (fast) return x;  /* no frame needed */
//	... frame, calls ...
//	if (bad) fatal();    /* noreturn */
//
// The fast path, in the entry state, is placed right after the call to
// fatal, so that call's return address is the fast path's first
// instruction: the row there (the entry rules) is not the one in force
// at the call. An unwinder that looks the caller's row up at the return
// address instead of the return address minus one takes the frame for
// one that has not been set up. The row changes across the call, inside
// the function (noreturn-call's return address lies past the function).
func shrinkWrapSkeleton(b *builder, f *plan) {
	fast := b.newLabel()
	b.cond(fast)
	entry := b.st
	framedFatal(b, f)
	b.st = entry
	b.place(fast)
	b.t.filler(b)
	b.t.prims.ret(b)
}

// noreturnCallee is the function a noreturn-call calls: it ends the
// program with a jump to the entry stub's exit, with or without a frame
// of its own live. It is no catalog entry: the planner adds one per
// noreturn-call function and nothing else calls it.
var noreturnCallee = &pattern{
	name:     "noreturn",
	noReturn: true,
	doc:      "never returns: jumps to the entry stub's exit (the callee of noreturn-call)",
	build:    noreturnCalleeSkeleton,
}

func noreturnCalleeSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	if b.rng.IntN(2) == 0 {
		p.fpSetup(b)
	}
	b.body()
	p.tailJump(b, exitLabel)
}
