package gen

import (
	"fmt"
	"math/rand/v2"
)

// Idle functions make a program's section a large table: hundreds to tens
// of thousands of FDEs, most of them for small functions that never run,
// placed right after the entry stub (before every function it reaches),
// between the functions that run and after all of them. A consumer has to
// find the right FDE among them at every step, which is where a bug in a
// large table's index, its binary search or its sorted order lives; the
// rows of a small table never reach that code.
//
// An idle function is one of a few fixed bodies (a bare return, filler
// instructions and a return, a frame set up and torn down), built once per
// program and shared by all its idle functions: a table of ten thousand
// costs ten thousand FDEs and symbols, not ten thousand builds. Their FDEs
// are real rows, as a producer writes for any function.
//
// How many a program gets follows from its seed alone, so that a run of
// consecutive seeds has them deterministically and a reproducer makes the
// same program again: 1 seed in 20 (seed mod 20 = 0) gets 1,000 to 1,999;
// of those, seed mod 500 = 0 gets 10,000 to 11,999 instead (so every 500
// consecutive seeds hold one); seed mod 20 = 10 gets 100 to 499. That is
// about 100 idle functions per program on average, which the main job
// pays for in generation, layout, encoding and decoding (not in steps:
// they never run).
// Options.Idle overrides the count.

// Idle counts.
const (
	IdleLarge = 1000  // at least this many, for seed mod 20 = 0
	IdleHuge  = 10000 // at least this many, for seed mod 500 = 0
)

// IdleCount is how many idle functions Generate gives the program of seed
// with opt.Idle 0.
func IdleCount(seed int64) int {
	n, _ := idleCount(seed)
	return n
}

// idleCount is IdleCount and the generator that placed them.
func idleCount(seed int64) (int, *rand.Rand) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e37_79b9_7f4a_7c15))
	s := uint64(seed)
	switch {
	case s%500 == 0:
		return IdleHuge + rng.IntN(2000), rng
	case s%20 == 0:
		return IdleLarge + rng.IntN(1000), rng
	case s%20 == 10:
		return 100 + rng.IntN(400), rng
	}
	return 0, rng
}

// idleName is the name of idle function k.
func idleName(k int) string { return fmt.Sprintf("idle%d", k) }

// idleGap says whether idle functions may go between a and b: not where
// a's last instruction is a call (its return address is b's first byte,
// which noreturn-call means), nor inside a block of PLT-like stubs.
func idleGap(a, b *Func) bool {
	if n := len(a.ops); n > 0 && a.ops[n-1].call {
		return false
	}
	return b == nil || a.StubBlock == "" || a.StubBlock != b.StubBlock
}

// addIdle adds n idle functions to p.Funcs (built, not laid out), their
// bodies and places drawn from rng.
func (p *Program) addIdle(t *isa, n int, rng *rand.Rand) {
	if n <= 0 {
		return
	}
	bodies := t.idleBodies(rng, p)
	var gaps []int // insert before Funcs[i]; len(Funcs): after every one
	for i := 1; i <= len(p.Funcs); i++ {
		var next *Func
		if i < len(p.Funcs) {
			next = p.Funcs[i]
		}
		if idleGap(p.Funcs[i-1], next) {
			gaps = append(gaps, i)
		}
	}
	if len(gaps) == 0 {
		return
	}
	per := make([]int, len(gaps))
	// A quarter right after the entry stub, when it may go there, and a
	// quarter after every function; the rest anywhere.
	rest := n
	if gaps[0] == 1 {
		per[0] += n / 4
		rest -= n / 4
	}
	if gaps[len(gaps)-1] == len(p.Funcs) {
		per[len(per)-1] += n / 4
		rest -= n / 4
	}
	for ; rest > 0; rest-- {
		per[rng.IntN(len(gaps))]++
	}
	// Signals and the trampoline are kept by index into Funcs.
	moved := make([]int, len(p.Funcs))
	out := make([]*Func, 0, len(p.Funcs)+n)
	k, g := 0, 0
	for i := 0; i <= len(p.Funcs); i++ {
		if g < len(gaps) && gaps[g] == i {
			for j := 0; j < per[g]; j++ {
				out = append(out, &Func{Name: idleName(k), Idle: true, ops: bodies[rng.IntN(len(bodies))]})
				k++
			}
			g++
		}
		if i < len(p.Funcs) {
			moved[i] = len(out)
			out = append(out, p.Funcs[i])
		}
	}
	p.Funcs = out
	p.tramp = moved[p.tramp]
	for i := range p.sigs {
		p.sigs[i].fn, p.sigs[i].handler = moved[p.sigs[i].fn], moved[p.sigs[i].handler]
	}
}

// idleBodies are the bodies idle functions share: a bare return, filler
// instructions and a return, and a frame set up and torn down around a
// filler (rows that change, as a real function's). Their ops are shared:
// Layout gives each the same offset in every function, and none branches.
func (t *isa) idleBodies(rng *rand.Rand, p *Program) [][]*op {
	build := func(emit func(b *builder)) []*op {
		b := newBuilder(t, "idle", rng, p)
		emit(b)
		for _, o := range b.ops {
			if o.br != nil || len(o.labels) != 0 || o.call {
				panic(fmt.Sprintf("gen: %s: an idle body branches (%s)", t.abi.Name(), o.text))
			}
		}
		return b.ops
	}
	pr := &t.prims
	return [][]*op{
		build(func(b *builder) { pr.ret(b) }),
		build(func(b *builder) {
			for range 1 + rng.IntN(3) {
				t.filler(b)
			}
			pr.ret(b)
		}),
		build(func(b *builder) {
			pr.fpSetup(b)
			t.filler(b)
			pr.fpTeardowns[0](b)
			pr.ret(b)
		}),
	}
}

// IdleFuncs counts the program's idle functions.
func (p *Program) IdleFuncs() int {
	n := 0
	for _, f := range p.Funcs {
		if f.Idle {
			n++
		}
	}
	return n
}
