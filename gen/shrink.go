package gen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sfconform/sfconform/target"
)

// Shrinking: a smaller program made by gen's own machinery, for a
// reproducer. A Reduction changes the plan of the program (a function
// dropped, a call dropped, a function's filler instructions or loop
// dropped, all paths but one dropped) and Reduce builds the program again
// from the changed plans: every function through its pattern and the
// builder, so its instructions, rows and CFI are what gen makes and not an
// edit of them, then Layout. A function whose plan did not change comes
// out as it was: each is rebuilt from the random generator's state Generate
// was in when it built that function. Functions that nothing reaches any
// more (no call, tail jump, stub or noreturn call leads to them from the
// root or a signal handler) are dropped too.
//
// A reduced program is an ordinary Program: it renders, lays out and has
// its rows like any other; Applied lists the reductions that made it from
// Generate's program, and Regenerate makes it again from the seed.

// ErrNotReducible is wrapped by Reduce's errors about a reduction that does
// not apply to the program (a function it does not have, the root, a
// function another one jumps to).
var ErrNotReducible = errors.New("gen: reduction does not apply")

// Reduction kinds.
const (
	ReducePath      = "keep-path"  // keep path N only
	ReduceFunc      = "drop-func"  // drop function Func and every call to it
	ReduceCall      = "drop-call"  // drop Func's call site N, a call to Callee
	ReduceLoop      = "drop-loop"  // no loop in Func's body
	ReduceFillers   = "fillers"    // keep N of Func's filler instructions
	ReduceStubBlock = "drop-stubs" // keep only stub N of Func's PLT stubs
	ReducePlain     = "plain"      // build Func with fp-frame, the plainest pattern that calls
	ReduceIdle      = "idle"       // keep N idle functions (placed anew)
)

// Reduction is one change to a program's plan. It names functions, so a
// list of them replays on the program Generate makes from the same
// arguments (Regenerate).
type Reduction struct {
	Op     string `json:"op"`
	Func   string `json:"func,omitempty"`
	Callee string `json:"callee,omitempty"`
	N      int    `json:"n,omitempty"`
}

func (r Reduction) String() string {
	switch r.Op {
	case ReducePath:
		return fmt.Sprintf("keep path %d only", r.N)
	case ReduceFunc:
		return "drop " + r.Func
	case ReduceCall:
		return fmt.Sprintf("drop %s's call to %s (call site %d)", r.Func, r.Callee, r.N)
	case ReduceLoop:
		return "drop " + r.Func + "'s loop"
	case ReduceFillers:
		return fmt.Sprintf("%d filler instructions in %s", r.N, r.Func)
	case ReduceStubBlock:
		return fmt.Sprintf("keep stub %d of %s only", r.N, r.Func)
	case ReducePlain:
		return "build " + r.Func + " as a plain fp-frame function"
	case ReduceIdle:
		return fmt.Sprintf("keep %d idle functions", r.N)
	}
	return fmt.Sprintf("%s %s %s %d", r.Op, r.Func, r.Callee, r.N)
}

// origin is what Generate made a program from, and what Reduce changed.
type origin struct {
	opt     Options
	plans   []*plan // in layout order, the root first
	stubRNG []byte  // the generator's state when the entry stub was built
	argSets [][]uint64
	keep    []int // the paths kept: indexes into argSets
	applied []Reduction
	far     map[string]bool // the far functions, dropped ones included
	idle    int             // idle functions (idle.go)
}

func pcgState(src *rand.PCG) []byte {
	b, err := src.MarshalBinary()
	if err != nil {
		panic(err) // PCG's marshalling cannot fail
	}
	return b
}

func pcgFrom(state []byte) *rand.Rand {
	src := &rand.PCG{}
	if err := src.UnmarshalBinary(state); err != nil {
		panic(fmt.Sprintf("gen: a kept generator state does not restore: %v", err))
	}
	return rand.New(src)
}

func allPaths(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// GenOptions are the options the program was generated with.
func (p *Program) GenOptions() Options {
	if p.origin == nil {
		return Options{}
	}
	o := p.origin.opt
	o.Patterns = slices.Clone(o.Patterns)
	return o
}

// Applied lists the reductions that made p from the program Generate
// made, in order.
func (p *Program) Applied() []Reduction {
	if p.origin == nil {
		return nil
	}
	return slices.Clone(p.origin.applied)
}

// Regenerate is Generate followed by the reductions, one at a time, as
// Applied lists them: the reduced program again, from its coordinates.
func Regenerate(abi target.Target, seed int64, opt Options, rs []Reduction) (*Program, error) {
	p, err := Generate(abi, seed, opt)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if p, err = p.Reduce(r); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Reductions lists the reductions that apply to p, the largest first:
// every function but the root dropped, every call dropped, every loop
// dropped, every function's fillers dropped, every PLT block cut to one
// stub. Keeping one path (ReducePath) is left to the caller, who knows
// which path matters. The order is deterministic.
func (p *Program) Reductions() []Reduction {
	if p.origin == nil {
		return nil
	}
	var out []Reduction
	if n := p.origin.idle; n > 0 {
		out = append(out, Reduction{Op: ReduceIdle, N: 0})
		if n > 1 {
			out = append(out, Reduction{Op: ReduceIdle, N: n / 2})
		}
	}
	plans := p.origin.plans
	for _, f := range plans[1:] {
		out = append(out, Reduction{Op: ReduceFunc, Func: f.name})
	}
	for _, f := range plans {
		for i, c := range f.calls {
			if !c.dropped {
				out = append(out, Reduction{Op: ReduceCall, Func: f.name, Callee: c.target, N: i})
			}
		}
	}
	for _, f := range plans {
		if len(f.stubs) > 1 {
			for i := range f.stubs {
				out = append(out, Reduction{Op: ReduceStubBlock, Func: f.name, N: i})
			}
		}
	}
	for _, f := range plans {
		if plainable(f) {
			out = append(out, Reduction{Op: ReducePlain, Func: f.name})
		}
	}
	for _, f := range plans {
		if f.loop > 0 && !f.dropLoop && !f.pat.stubs {
			out = append(out, Reduction{Op: ReduceLoop, Func: f.name})
		}
	}
	for _, f := range plans {
		if f.fillers-f.dropFillers > 0 && !f.pat.stubs {
			out = append(out, Reduction{Op: ReduceFillers, Func: f.name, N: 0})
		}
	}
	for _, f := range plans {
		if kept := f.fillers - f.dropFillers; kept > 1 && !f.pat.stubs {
			out = append(out, Reduction{Op: ReduceFillers, Func: f.name, N: kept / 2})
		}
	}
	return out
}

// Paths is how many paths the program runs (its argument vectors).
func (p *Program) Paths() int { return len(p.ArgSets) }

// Reduce makes the program p becomes with r applied, built again and laid
// out at DefaultBase; p is left as it was. An error wrapping
// ErrNotReducible says r does not apply; any other, that the changed
// plans broke one of gen's rules (the candidate is simply not a program).
func (p *Program) Reduce(r Reduction) (q *Program, err error) {
	o := p.origin
	if o == nil {
		return nil, fmt.Errorf("%w: the program was not made by Generate", ErrNotReducible)
	}
	plans := clonePlans(o.plans)
	keep := slices.Clone(o.keep)
	byName := func(name string) *plan {
		for _, f := range plans {
			if f.name == name {
				return f
			}
		}
		return nil
	}
	idle := o.idle
	f := byName(r.Func)
	if r.Op != ReducePath && r.Op != ReduceIdle && f == nil {
		return nil, fmt.Errorf("%w: %s: no function %q", ErrNotReducible, r, r.Func)
	}
	switch r.Op {
	case ReducePath:
		if r.N < 0 || r.N >= len(keep) {
			return nil, fmt.Errorf("%w: %s: the program has %d paths", ErrNotReducible, r, len(keep))
		}
		keep = []int{keep[r.N]}
	case ReduceFunc:
		if f == plans[0] {
			return nil, fmt.Errorf("%w: %s: the entry stub calls it", ErrNotReducible, r)
		}
		names := append([]string{f.name}, f.stubs...)
		plans = slices.DeleteFunc(plans, func(q *plan) bool { return q == f })
		for _, q := range plans {
			for i := range q.calls {
				if slices.Contains(names, q.calls[i].target) {
					q.calls[i].dropped = true
				}
			}
		}
	case ReduceCall:
		if r.N < 0 || r.N >= len(f.calls) || f.calls[r.N].target != r.Callee || f.calls[r.N].dropped {
			return nil, fmt.Errorf("%w: %s: %s's call #%d is not one to %s", ErrNotReducible, r, f.name, r.N, r.Callee)
		}
		f.calls[r.N].dropped = true
	case ReduceLoop:
		if f.loop == 0 || f.dropLoop {
			return nil, fmt.Errorf("%w: %s: no loop", ErrNotReducible, r)
		}
		f.dropLoop = true
	case ReduceFillers:
		if kept := f.fillers - f.dropFillers; r.N < 0 || r.N >= kept {
			return nil, fmt.Errorf("%w: %s: it has %d", ErrNotReducible, r, kept)
		}
		f.dropFillers = f.fillers - r.N
	case ReduceStubBlock:
		if len(f.stubs) < 2 || r.N < 0 || r.N >= len(f.stubs) {
			return nil, fmt.Errorf("%w: %s: %d stubs", ErrNotReducible, r, len(f.stubs))
		}
		kept := f.stubs[r.N]
		dropped := slices.Delete(slices.Clone(f.stubs), r.N, r.N+1)
		f.stubs, f.stubTargets = []string{kept}, []string{f.stubTargets[r.N]}
		for _, q := range plans {
			for i := range q.calls {
				if slices.Contains(dropped, q.calls[i].target) {
					q.calls[i].target = kept
				}
			}
			if slices.Contains(dropped, q.tail) {
				q.tail = kept
			}
			for i, s := range q.stubTargets {
				if slices.Contains(dropped, s) {
					q.stubTargets[i] = kept
				}
			}
		}
	case ReduceIdle:
		if r.N < 0 || r.N >= idle {
			return nil, fmt.Errorf("%w: %s: it has %d", ErrNotReducible, r, idle)
		}
		idle = r.N
	case ReducePlain:
		if !plainable(f) {
			return nil, fmt.Errorf("%w: %s: a %s function", ErrNotReducible, r, f.pat.name)
		}
		f.pat = p.t.plainPattern()
	default:
		return nil, fmt.Errorf("%w: unknown reduction %q", ErrNotReducible, r.Op)
	}
	plans = reachable(plans)
	if err := dangling(plans); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotReducible, r, err)
	}

	q = &Program{Target: p.Target, Seed: p.Seed, t: p.t, ArgRegs: slices.Clone(p.ArgRegs), far: o.far}
	q.origin = &origin{opt: o.opt, plans: plans, stubRNG: o.stubRNG, argSets: o.argSets, keep: keep, far: o.far,
		applied: append(slices.Clone(o.applied), r), idle: idle}
	defer func() {
		if e := recover(); e != nil {
			q, err = nil, fmt.Errorf("gen: %s seed %d, %s: %v", p.Target.Name(), p.Seed, r, e)
		}
	}()
	// Signals are chosen for every generated path, as Generate chose
	// them, then the kept paths' are kept.
	q.ArgSets = o.argSets
	q.buildFuncs(p.t, plans, pcgFrom(o.stubRNG), func(f *plan) *rand.Rand { return pcgFrom(f.rng) }, len(o.argSets))
	q.keepPaths(keep)
	if err := q.Layout(DefaultBase); err != nil {
		return nil, err
	}
	if len(keep) == len(o.keep) && slices.Equal(q.Code, p.Code) && slices.Equal(q.FarCode, p.FarCode) {
		return nil, fmt.Errorf("%w: %s changes nothing", ErrNotReducible, r)
	}
	return q, nil
}

// plainable says whether a function can be built with fp-frame instead of
// its pattern: one that needs nothing of the plan but its calls, fillers
// and loop (no tail jump, noreturn callee or stubs; not a signal handler,
// far or switching stacks; not an empty FDE's), and is not plain already.
// Its calls from an epilogue position, which fp-frame has not, are not
// made.
func plainable(f *plan) bool {
	p := f.pat
	return p.build != nil && !p.tail && !p.exits && !p.stubs && !p.signal && !p.far && p.calls &&
		!p.plain && !p.switchesStack && !p.emptyEntryFDE && !p.noReturn
}

// keepPaths keeps the paths keep (indexes into ArgSets) and their
// signals, renumbered in that order.
func (p *Program) keepPaths(keep []int) {
	all := p.ArgSets
	p.ArgSets = nil
	var sigs []sigSpec
	for j, k := range keep {
		p.ArgSets = append(p.ArgSets, all[k])
		for _, s := range p.sigs {
			if s.path == k {
				s.path = j
				sigs = append(sigs, s)
			}
		}
	}
	p.sigs = sigs
	p.Args = p.ArgSets[0]
}

func clonePlans(plans []*plan) []*plan {
	out := make([]*plan, len(plans))
	for i, f := range plans {
		c := *f
		c.calls = slices.Clone(f.calls)
		c.stubs = slices.Clone(f.stubs)
		c.stubTargets = slices.Clone(f.stubTargets)
		out[i] = &c
	}
	return out
}

// reachable keeps the plans the root or a signal handler can reach, in
// their order.
func reachable(plans []*plan) []*plan {
	byName := map[string]*plan{}
	for _, q := range plans {
		byName[q.name] = q
		for _, s := range q.stubs {
			byName[s] = q
		}
	}
	seen := map[*plan]bool{}
	var visit func(f *plan)
	visit = func(f *plan) {
		if f == nil || seen[f] {
			return
		}
		seen[f] = true
		for _, c := range f.calls {
			if !c.dropped {
				visit(byName[c.target])
			}
		}
		for _, n := range append([]string{f.tail, f.noret}, f.stubTargets...) {
			if n != "" {
				visit(byName[n])
			}
		}
	}
	visit(plans[0])
	for _, f := range plans {
		if f.pat.signal {
			visit(f)
		}
	}
	return slices.DeleteFunc(plans, func(f *plan) bool { return !seen[f] })
}

// dangling reports a transfer to a function the plans no longer have.
func dangling(plans []*plan) error {
	have := map[string]bool{}
	for _, q := range plans {
		have[q.name] = true
		for _, s := range q.stubs {
			have[s] = true
		}
	}
	for _, f := range plans {
		for _, c := range f.calls {
			if !c.dropped && !have[c.target] {
				return fmt.Errorf("%s calls %s, which is gone", f.name, c.target)
			}
		}
		for _, n := range append([]string{f.tail, f.noret}, f.stubTargets...) {
			if n != "" && !have[n] {
				return fmt.Errorf("%s jumps to %s, which is gone", f.name, n)
			}
		}
	}
	return nil
}

// Size measures a program for a reproducer's report.
type Size struct {
	Functions    int `json:"functions"`
	Instructions int `json:"instructions"` // padding counted instruction by instruction
	Bytes        int `json:"bytes"`        // code, far code included
	Paths        int `json:"paths"`
}

func (s Size) String() string {
	return fmt.Sprintf("%d functions, %d instructions, %d bytes, %d paths", s.Functions, s.Instructions, s.Bytes, s.Paths)
}

// Size measures the laid-out program.
func (p *Program) Size() Size {
	s := Size{Functions: len(p.Funcs), Bytes: len(p.Code) + len(p.FarCode), Paths: len(p.ArgSets)}
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			s.Instructions += max(1, in.Pad)
		}
	}
	return s
}
