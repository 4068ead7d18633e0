package gen

import (
	"math/rand/v2"
	"slices"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
)

// signalPattern makes a function a signal handler: an ordinary function
// (one of the shared skeletons, possibly calling deeper functions) that
// nothing calls, entered when the kernel delivers a signal, which it
// returns from to the program's signal trampoline. The program then gets
// the trampoline (the target's sigTrampoline prim, after every other
// function) and, per path, a signal at some instruction: the emulator
// delivers it there as the kernel does.
var signalPattern = &pattern{
	name: "signal",
	doc:  "a signal handler, entered by a signal at an arbitrary instruction; returns through a trampoline whose FDE is a signal frame's",
	// The handler's calls: it may call deeper functions like any other.
	calls:    true,
	signal:   true,
	versions: []int{3},
	cannot: "version 2 has no signal flag: an unwinder cannot know that the trampoline's caller is an interrupted " +
		"context in a signal frame, to be read from there (its PC exact, every register saved), and not a caller " +
		"found by the trampoline's rows",
	build: signalSkeleton,
}

// signalEmptyFDEPattern is the signal pattern with the trampoline
// described by an FDE that has the signal flag and no rows: what GNU as
// 2.47 writes for x86-64's __restore_rt, whose CFI SFrame cannot express
// (signal_gas_test.go). Version 3 reads it as a trampoline, never as an
// outermost frame: an unwinder must look at the signal flag before the
// FDE's rows, or lack of them.
var signalEmptyFDEPattern = &pattern{
	name:               "signal-empty-fde",
	doc:                "a signal handler, as in signal, whose trampoline's FDE has the signal flag and no rows (GNU as 2.47 writes one for x86-64's __restore_rt)",
	calls:              true,
	signal:             true,
	emptyTrampolineFDE: true,
	versions:           []int{3},
	cannot:             signalPattern.cannot,
	build:              signalSkeleton,
}

// handlerBodies are the skeletons a handler is built from: every one of
// them is an ordinary function whose entry is the ABI's.
var handlerBodies = []func(b *builder, f *plan){fpFrameSkeleton, spFrameSkeleton, calleeSavedSkeleton, multiEpilogueSkeleton}

func signalSkeleton(b *builder, f *plan) {
	bodies := handlerBodies
	if len(f.calls) == 0 {
		bodies = append(bodies[:len(bodies):len(bodies)], leafSkeleton)
	}
	bodies[b.rng.IntN(len(bodies))](b, f)
}

// sigSpec is one path's signal, before layout: the interrupted
// instruction as a function and op index.
type sigSpec struct {
	path          int
	fn, op, count int
	signo         int
	handler       int // function index
}

// Signal numbers a handler receives; the same on x86-64, AArch64 and
// s390x: SIGUSR1, SIGUSR2, SIGALRM, SIGPROF.
var signalNumbers = []int{10, 12, 14, 27}

// addSignals completes a program whose plans include signal handlers:
// it marks the handlers, appends the trampoline, and chooses each path's
// signal. It runs before Layout.
func addSignals(t *isa, p *Program, plans []*plan, paths int) {
	var handlers []int
	emptyFDE := ""
	for _, f := range plans {
		if f.pat.signal {
			fi := p.funcIndex(f.name)
			handlers = append(handlers, fi)
			p.Funcs[fi].Kind = image.KindSignalHandler
			if f.pat.emptyTrampolineFDE {
				emptyFDE = f.pat.name
			}
		}
	}
	if len(handlers) == 0 {
		return
	}
	b := newBuilder(t, "sigreturn_trampoline", nil, p)
	t.prims.sigTrampoline(b)
	p.Funcs = append(p.Funcs, &Func{Name: b.name, Pattern: signalPattern.name, Kind: image.KindSignalRestorer, ops: b.ops,
		EmptyFDE: emptyFDE != "", EmptyFDEPattern: emptyFDE})
	p.tramp = len(p.Funcs) - 1

	// Where a signal may strike, by how sure it is to strike on every
	// path and by shape. The choices depend on nothing but the program,
	// the seed and the path.
	sure := reachedOnEveryPath(p, plans)
	var lrOrEdge, edge, bounds, any [][2]int
	for fi, f := range p.Funcs {
		if f.Kind != "" {
			continue // not in a handler, not in the trampoline
		}
		for oi, o := range f.ops {
			if o.exit {
				continue
			}
			at := [2]int{fi, oi}
			any = append(any, at)
			if fi == 0 {
				continue
			}
			// A function's bounds (gaps.go): its last instruction, and the
			// first of a function right after one that ends in a call,
			// where PC-1 lies in that call: the interrupted PC is exact,
			// and an unwinder that looks it up minus one, as it would a
			// return address, takes the wrong function's row.
			if oi == len(f.ops)-1 && o.pad == 0 || oi == 0 && p.Funcs[fi-1].endsInCall() {
				bounds = append(bounds, at)
			}
			// The instructions where the rule changes: prologues,
			// epilogues, around a call's frame adjustments.
			changes := oi == 0 || !sameRule(f.ops[oi-1].row, o.row) || oi+1 < len(f.ops) && !sameRule(f.ops[oi+1].row, o.row)
			if changes {
				edge = append(edge, at)
			}
			// The RA still in the link register (a leaf, a prologue before
			// the RA is saved): legal only because a signal frame follows.
			// On x86-64, where a call pushes it, the function's entry and
			// exit stand in.
			if t.abi.HasLinkRegister() && o.row.RA.Kind == sframe.RuleSame ||
				!t.abi.HasLinkRegister() && o.row.CFA.Reg == t.sp && !o.row.CFA.Deref && o.row.CFA.Offset == t.entrySPOff {
				lrOrEdge = append(lrOrEdge, at)
			}
		}
	}
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x9e37_79b9_7f4a_7c15^uint64(t.abi)))
	stacks := newStackUse(plans)
	for path := 0; path < paths; path++ {
		s := sigSpec{path: path, count: 1, handler: handlers[rng.IntN(len(handlers))], signo: signalNumbers[rng.IntN(len(signalNumbers))]}
		// Only where the handler's calls cannot switch to a fresh stack
		// the interrupted chain may be on: they would overwrite its frames.
		h := p.Funcs[s.handler].plan
		// Whether h clashes depends on the function alone: asked once
		// per function, and a list none of whose functions clash is
		// kept as it is (the lists are only read from here on).
		clashes := make([]int8, len(p.Funcs)) // 0 not asked yet, 1 no, 2 yes
		clash := func(at [2]int) bool {
			if clashes[at[0]] == 0 {
				clashes[at[0]] = 1
				if stacks.clash(h, p.Funcs[at[0]].plan) {
					clashes[at[0]] = 2
				}
			}
			return clashes[at[0]] == 2
		}
		ok := func(c [][2]int) [][2]int {
			if !slices.ContainsFunc(c, clash) {
				return c
			}
			return slices.DeleteFunc(slices.Clone(c), clash)
		}
		sure, lrOrEdge, edge, bounds, any := ok(sure), ok(lrOrEdge), ok(edge), ok(bounds), ok(any)
		if len(any) == 0 {
			continue // no signal on this path
		}
		pick := func(c [][2]int) [2]int {
			if len(c) == 0 {
				c = any
			}
			return c[rng.IntN(len(c))]
		}
		var at [2]int
		switch k := rng.IntN(12); {
		case k >= 10 && len(bounds) > 0:
			at = pick(bounds)
		case k < 3 || len(lrOrEdge) == 0 && k < 6:
			at = pick(sure)
		case k < 6:
			at = pick(lrOrEdge)
		case k < 8 && len(edge) > 0:
			at = pick(edge)
		default:
			at = pick(any)
			if rng.IntN(4) == 0 {
				s.count = 2 // a loop's, a function called twice
			}
		}
		s.fn, s.op = at[0], at[1]
		p.sigs = append(p.sigs, s)
	}
}

// stackUse knows, for the plans of a program, which fresh stacks
// (new-stack, one per call level) a function's calls may switch to, and
// which may be in use while it runs.
type stackUse struct {
	reach map[*plan]map[*plan]bool // the plans a plan may enter, itself included
}

func newStackUse(plans []*plan) *stackUse {
	byName := map[string]*plan{}
	for _, q := range plans {
		byName[q.name] = q
		for _, s := range q.stubs {
			byName[s] = q
		}
	}
	u := &stackUse{reach: map[*plan]map[*plan]bool{}}
	var visit func(f *plan, seen map[*plan]bool)
	visit = func(f *plan, seen map[*plan]bool) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		for _, c := range f.calls {
			visit(byName[c.target], seen)
		}
		for _, n := range append([]string{f.tail, f.noret}, f.stubTargets...) {
			if n != "" {
				visit(byName[n], seen)
			}
		}
	}
	for _, f := range plans {
		seen := map[*plan]bool{}
		visit(f, seen)
		u.reach[f] = seen
	}
	return u
}

// clash reports whether handler h, entered while at runs, may switch to a
// fresh stack that a function on at's call chain (at included) switched
// to. at is nil for the entry stub, which runs on the initial stack.
func (u *stackUse) clash(h, at *plan) bool {
	if at == nil {
		return false
	}
	for q := range u.reach[h] {
		if !q.pat.switchesStack {
			continue
		}
		for r, reach := range u.reach {
			if r.pat.switchesStack && r.level == q.level && reach[at] {
				return true
			}
		}
	}
	return false
}

// reachedOnEveryPath lists instructions every run executes: the entry
// stub's up to its exit, and those of the functions on the depth chain
// (each called unconditionally, before any early return) up to their
// first branch.
func reachedOnEveryPath(p *Program, plans []*plan) [][2]int {
	var out [][2]int
	for oi, o := range p.Funcs[0].ops {
		if !o.exit {
			out = append(out, [2]int{0, oi})
		}
	}
	index := map[string]int{}
	for i, f := range plans {
		index[f.name] = i
	}
	for i, ok := 0, true; ok; {
		fi := p.funcIndex(plans[i].name)
		for oi, o := range p.Funcs[fi].ops {
			out = append(out, [2]int{fi, oi})
			if o.br != nil && !o.call {
				break
			}
		}
		ok = false
		for _, c := range plans[i].calls {
			if c.fixed && !c.dropped {
				i, ok = index[c.target], true
			}
		}
	}
	return out
}

// Signals returns, per path, the signal the program's runs receive: none
// when it has no signal handler. The program must be laid out.
func (p *Program) Signals() []image.Signal {
	if len(p.sigs) == 0 {
		return nil
	}
	tramp := p.Funcs[p.tramp]
	restorer := tramp.Addr + uint64(tramp.Insns[1].Off) // after the leading nop
	out := make([]image.Signal, len(p.sigs))
	for i, s := range p.sigs {
		f := p.Funcs[s.fn]
		out[i] = image.Signal{Path: s.path, At: f.Addr + uint64(f.Insns[s.op].Off), Count: s.count, Signo: s.signo,
			Handler: p.Funcs[s.handler].Addr, Restorer: restorer}
	}
	return out
}

// SignalTrampoline returns the program's signal trampoline, nil when it
// has none.
func (p *Program) SignalTrampoline() *Func {
	if len(p.sigs) == 0 {
		return nil
	}
	return p.Funcs[p.tramp]
}

// funcIndex is the index in Funcs of the function named name (a plan's
// function: parts, stubs and helper functions lie between them).
func (p *Program) funcIndex(name string) int {
	for i, f := range p.Funcs {
		if f.Name == name {
			return i
		}
	}
	panic("gen: no function " + name)
}
