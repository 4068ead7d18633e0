package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// DefaultBase is where Generate lays a program out; Layout moves it.
const DefaultBase = 0x10000

// Options shape a generated program. Zero values pick the defaults.
type Options struct {
	Funcs    int      // functions besides the entry stub; default 8, at least MaxDepth (exactly 1 when MaxDepth is 1)
	MaxDepth int      // longest chain of calls from the root; default 4, at least 1
	Patterns []string // pattern names to use; nil = every pattern of the target (that SFrameVersion expresses)
	// SFrameVersion, when not 0, restricts the patterns to those the
	// version can express: with Patterns nil, the default mix leaves the
	// others out; a named pattern it cannot express is a
	// *CannotExpressError.
	SFrameVersion int
	// Paths is how many argument vectors the program is run with (Args is
	// the first); default DefaultPaths. Each takes its own branches and
	// early returns through the same code.
	Paths int
}

// DefaultPaths is how many argument vectors a program gets by default: the
// emulator translates a program's code once and runs it this many times.
const DefaultPaths = 4

// Program is a generated program: an entry stub and the functions it
// reaches, with the unwind rule of every instruction.
type Program struct {
	Target target.Target
	Seed   int64
	// Funcs[0] is the entry stub: it calls the root function Funcs[1]; its
	// rows are outermost (RA undefined); execution ends at Exit.
	Funcs []*Func
	// ArgRegs are DWARF numbers of argument registers and Args the values
	// they must hold at Entry. Functions branch on bits of them. ArgSets
	// are the argument vectors of every path, ArgSets[0] being Args.
	ArgRegs []int
	Args    []uint64
	ArgSets [][]uint64
	// Set by Layout.
	Base        uint64
	Code        []byte
	Entry, Exit uint64

	t *isa
	// sigs are the paths' signals and tramp the signal trampoline's index
	// in Funcs (skel_signal.go).
	sigs  []sigSpec
	tramp int
}

// Func is one function of a Program.
type Func struct {
	Name, Pattern string
	Addr          uint64
	Size          uint32
	Insns         []Insn
	Rows          []sframe.Row // compressed: a new row where the rule changes
	// Kind is the image symbol kind: a signal handler or trampoline.
	Kind string

	ops []*op
}

// Insn is one instruction of a laid-out function.
type Insn struct {
	Off   uint32 // from the function start
	Bytes []byte
	Text  string     // GNU syntax, as in the assembly text
	Row   sframe.Row // the rule that holds at this instruction, before it executes; Start = Off
	Call  bool       // a call (its return address is the next instruction's address)
}

// callPos says where in a function a call sits.
type callPos int

const (
	posPrologue callPos = iota // right after the frame is set up
	posBody                    // in the body, after the early-return test if any
	posEpilogue                // between a partial teardown and the return
)

type callSite struct {
	target string
	pos    callPos
	cond   bool // skipped on a test of an argument bit
	fixed  bool // part of the depth chain: unconditional, never dropped
}

// plan is what Generate decides for a function before its pattern builds it.
type plan struct {
	name    string
	pat     *pattern
	level   int
	calls   []callSite
	tail    string // tail-call target
	fillers int
	loop    int // loop iterations in the body, 0 for none
}

func (f *plan) hasPos(pos callPos) bool {
	for _, c := range f.calls {
		if c.pos == pos {
			return true
		}
	}
	return false
}

// budget bounds the estimated instructions one run executes.
const budget = 2000

// ownCost estimates a function's own executed instructions.
func (f *plan) ownCost() int { return 14 + f.fillers + 2*f.loop + 3*len(f.calls) }

// Generate builds the program for abi and seed. The same arguments give the
// same program everywhere.
func Generate(abi target.Target, seed int64, opt Options) (p *Program, err error) {
	t := isaFor(abi)
	if t == nil {
		return nil, fmt.Errorf("gen: no generator for ABI %v", abi)
	}
	pats, err := t.selectPatterns(opt.Patterns, opt.SFrameVersion)
	if err != nil {
		return nil, err
	}
	depth := opt.MaxDepth
	if depth <= 0 {
		depth = 4
	}
	n := opt.Funcs
	if n <= 0 {
		n = 8
	}
	n = max(n, depth)
	if depth == 1 {
		n = 1 // nothing could call the others
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5f2c_0f0a_9e37_79b9^uint64(abi)))

	p = &Program{Target: abi, Seed: seed, t: t}
	p.ArgRegs = slices.Clone(t.argRegs)
	p.Args = make([]uint64, len(t.argRegs))
	for i := range p.Args {
		p.Args[i] = rng.Uint64()
	}

	plans := planGraph(t, pats, rng, n, depth)

	// The other paths' arguments come from a generator of their own, so
	// the program is the same whatever the number of paths.
	paths := opt.Paths
	if paths <= 0 {
		paths = DefaultPaths
	}
	p.ArgSets = [][]uint64{p.Args}
	prng := rand.New(rand.NewPCG(uint64(seed), 0x3c6e_f372_fe94_f82b^uint64(abi)))
	for len(p.ArgSets) < paths {
		a := make([]uint64, len(p.Args))
		for i := range a {
			a[i] = prng.Uint64()
		}
		p.ArgSets = append(p.ArgSets, a)
	}

	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("gen: %s seed %d: %v", abi.Name(), seed, r)
		}
	}()
	stub := newBuilder(t, "_start", rng, p)
	stub.st.outermost = true
	t.stub(stub, plans[0].name)
	p.Funcs = append(p.Funcs, &Func{Name: "_start", Pattern: "entry", ops: stub.ops})
	for _, f := range plans {
		b := newBuilder(t, f.name, rng, p)
		b.plan = f
		f.pat.build(b, f)
		if len(b.next) != 0 {
			panic(fmt.Sprintf("%s: label %v after the last instruction", f.name, b.next))
		}
		p.Funcs = append(p.Funcs, &Func{Name: f.name, Pattern: f.pat.name, ops: b.ops})
	}
	addSignals(t, p, plans, paths)
	if err := p.Layout(DefaultBase); err != nil {
		return nil, err
	}
	return p, nil
}

// selectPatterns returns the catalog entries named (nil: all), in catalog
// order, keeping those version v expresses (v 0: all).
func (t *isa) selectPatterns(names []string, v int) ([]*pattern, error) {
	var out []*pattern
	if names == nil {
		for _, p := range t.patterns {
			if v == 0 || p.expresses(v) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	for _, n := range names {
		p := t.pattern(n)
		if p == nil {
			return nil, fmt.Errorf("gen: %s has no pattern %q (have %s)", t.abi.Name(), n, strings.Join(Patterns(t.abi), ", "))
		}
		if v != 0 && !p.expresses(v) {
			return nil, &CannotExpressError{Target: t.abi, Pattern: n, Version: v, Reason: p.cannot}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gen: empty pattern list for %s", t.abi.Name())
	}
	slices.SortFunc(out, func(a, b *pattern) int { return slices.Index(t.patterns, a) - slices.Index(t.patterns, b) })
	return out, nil
}

func (t *isa) pattern(name string) *pattern {
	for _, p := range t.patterns {
		if p.name == name {
			return p
		}
	}
	return nil
}

// planGraph picks each function's level, pattern, callees and call
// positions. Levels strictly increase along every call and tail call, so
// there is no recursion and no call chain is longer than depth. Functions
// 0..depth-1 form a chain of unconditional calls, so the longest chain is
// exactly depth.
func planGraph(t *isa, pats []*pattern, rng *rand.Rand, n, depth int) []*plan {
	plans := make([]*plan, n)
	for i := range plans {
		lvl := i + 1
		if i >= depth {
			lvl = depth
			if depth > 1 {
				lvl = 2 + rng.IntN(depth-1)
			}
		}
		plans[i] = &plan{level: lvl, fillers: 2 + rng.IntN(5)}
		// Loops on the depth chain give every run a floor of executed
		// instructions; elsewhere they are a coin toss.
		if i < depth {
			plans[i].loop = 8 + rng.IntN(9)
		} else if rng.IntN(2) == 0 {
			plans[i].loop = 3 + rng.IntN(8)
		}
	}
	// Patterns: deal from a shuffled deck so that every chosen pattern
	// appears when there are enough functions.
	var deck []*pattern
	for i := 0; i < n; i++ {
		if i%len(pats) == 0 {
			round := slices.Clone(pats)
			rng.Shuffle(len(round), func(a, b int) { round[a], round[b] = round[b], round[a] })
			deck = append(deck, round...)
		}
	}
	for i, f := range plans {
		mustCall := i < depth-1
		deeper := f.level < depth
		// A signal handler is never called: not on the depth chain.
		ok := func(p *pattern) bool {
			return (p.calls || !mustCall) && (!p.tail || deeper) && !(p.signal && i < depth)
		}
		j := slices.IndexFunc(deck, ok)
		if j >= 0 {
			f.pat = deck[j]
			deck = slices.Delete(deck, j, j+1)
		} else if mustCall || !deeper {
			// The chosen patterns cannot fill this slot: use the target's
			// plainest pattern that can.
			f.pat = t.pattern("fp-frame")
		} else {
			f.pat = pats[rng.IntN(len(pats))]
		}
		f.name = fmt.Sprintf("f%d_%s", i+1, strings.ReplaceAll(f.pat.name, "-", "_"))
	}
	pos := func(f *plan) callPos {
		if f.pat.epilogueCalls {
			return callPos(rng.IntN(3))
		}
		return callPos(rng.IntN(2))
	}
	// The depth chain.
	for i := 0; i+1 < depth; i++ {
		// Before any early return, so the chain always runs.
		pos := callPos(rng.IntN(2))
		if plans[i].pat.earlyExit {
			pos = posPrologue
		}
		plans[i].calls = append(plans[i].calls, callSite{target: plans[i+1].name, pos: pos, fixed: true})
	}
	// Every other function gets a caller one level up.
	for i := depth; i < n; i++ {
		if plans[i].pat.signal {
			continue
		}
		var parents []*plan
		for _, q := range plans {
			if q.level == plans[i].level-1 && q.pat.calls {
				parents = append(parents, q)
			}
		}
		if len(parents) == 0 {
			continue
		}
		q := parents[rng.IntN(len(parents))]
		q.calls = append(q.calls, callSite{target: plans[i].name, pos: pos(q), cond: rng.IntN(2) == 0})
	}
	byName := func(name string) *plan {
		return plans[slices.IndexFunc(plans, func(q *plan) bool { return q.name == name })]
	}
	deeperThan := func(f *plan) []*plan {
		var out []*plan
		for _, q := range plans {
			if q.level > f.level && !q.pat.signal {
				out = append(out, q)
			}
		}
		return out
	}
	// Tail calls.
	for _, f := range plans {
		if f.pat.tail {
			d := deeperThan(f)
			f.tail = d[rng.IntN(len(d))].name
		}
	}
	runCost := func() int {
		memo := make(map[string]int, n)
		var cost func(f *plan) int
		cost = func(f *plan) int {
			if c, ok := memo[f.name]; ok {
				return c
			}
			c := f.ownCost()
			for _, s := range f.calls {
				c += cost(byName(s.target))
			}
			if f.tail != "" {
				c += cost(byName(f.tail))
			}
			memo[f.name] = c
			return c
		}
		// A path runs one signal handler at most.
		h := 0
		for _, f := range plans {
			if f.pat.signal {
				h = max(h, cost(f))
			}
		}
		return cost(plans[0]) + h
	}
	// Extra calls while the run stays within budget.
	for _, f := range plans {
		if !f.pat.calls {
			continue
		}
		d := deeperThan(f)
		for k := rng.IntN(4); k > 0 && len(d) > 0; k-- {
			s := callSite{target: d[rng.IntN(len(d))].name, pos: pos(f), cond: rng.IntN(2) == 0}
			f.calls = append(f.calls, s)
			if runCost() > budget {
				f.calls = f.calls[:len(f.calls)-1]
			}
		}
	}
	// Keep calls in position order so a pattern emits each group in turn.
	for _, f := range plans {
		slices.SortStableFunc(f.calls, func(a, b callSite) int { return int(a.pos) - int(b.pos) })
	}
	return plans
}
