package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// DefaultBase is where Generate lays a program out; Layout moves it.
const DefaultBase = 0x10000

// Options shape a generated program. Zero values pick the defaults.
type Options struct {
	// Funcs is the number of functions planned besides the entry stub;
	// default 8, at least MaxDepth (exactly 1 when MaxDepth is 1). Some
	// patterns bring more along: a noreturn callee, a cold part, PLT stubs
	// (one per target).
	Funcs    int
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
	// Idle is how many idle functions (never executed, idle.go) the
	// program gets besides the ones it runs: 0 the seed's count
	// (IdleCount), below 0 none.
	Idle int
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
	// rows are outermost (RA undefined); execution ends at Exit, when the
	// root returns or a function that never returns jumps there. Funcs are
	// in address order, each followed by its Gap (gaps.go).
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
	// FarBase and FarCode are the far segment (set by Layout when some
	// function is Far): Base + FarOffset, more than 4 GiB from Code.
	FarBase uint64
	FarCode []byte

	t *isa
	// far names the functions laid out in the far segment, known before
	// any function is built so that calls to them go through a register.
	far map[string]bool
	// stacks are the fresh stacks new-stack functions switch to.
	stacks []image.Symbol
	// sigs are the paths' signals and tramp the signal trampoline's index
	// in Funcs (skeleton_signal.go).
	sigs  []sigSpec
	tramp int
	// origin is what the program was generated from (shrink.go).
	origin *origin
	// insnBuf and rowBuf back every function's Insns and Rows (Layout);
	// laying the program out again reuses them, as the functions' own
	// slices were reused before.
	insnBuf []Insn
	rowBuf  []sframe.Row
}

// Func is one function of a Program: one symbol, one FDE (but see
// StubBlock).
type Func struct {
	Name, Pattern string
	Addr          uint64
	Size          uint32
	Insns         []Insn
	Rows          []sframe.Row // compressed: a new row where the rule changes
	// PartOf names the function this one is a part of (a cold part,
	// entered by a jump with that function's frame live); empty for a
	// function of its own.
	PartOf string
	// StubBlock, when set, names the block of PLT-like stubs this one
	// belongs to: consecutive Funcs of one block have the same size and
	// rows, and share one PCMASK FDE (FDEs) whose repetition size is that
	// size.
	StubBlock string
	// Far: laid out in the far segment (FarBase), more than 4 GiB from
	// the rest of the code.
	Far bool
	// EmptyFDE: the function is outermost for its whole life and its FDE
	// has no rows, which SFrame version 3 reads as an outermost frame;
	// Rows still say what holds (RA undefined). For the signal trampoline
	// (signal-empty-fde) the FDE keeps the signal flag, which version 3
	// reads first: a trampoline, whatever its rows.
	EmptyFDE bool
	// EmptyFDEPattern, with EmptyFDE on the entry stub or the signal
	// trampoline, names the pattern that gave the function an FDE without
	// rows (Pattern stays what built it).
	EmptyFDEPattern string
	// Kind is the image symbol kind: a signal handler or trampoline.
	Kind string
	// Idle: one of the functions that never run and make the section a
	// large table (idle.go); Pattern is empty.
	Idle bool
	// After says what follows the function (gaps.go): the next function
	// (EdgeNext), or Gap, bytes in no function, a gap or padding.
	After string
	Gap   []byte

	ops  []*op
	plan *plan // the plan it was built from; nil for the entry stub and the trampoline
}

// Insn is one instruction of a laid-out function.
type Insn struct {
	Off   uint32 // from the function start
	Bytes []byte
	Text  string     // GNU syntax, as in the assembly text
	Row   sframe.Row // the rule that holds at this instruction, before it executes; Start = Off
	Call  bool       // a call (its return address is the next instruction's address)
	// Pad > 0: padding the function jumps over, never executed: Text's
	// instruction Pad times over, all in Bytes.
	Pad int
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
	// dropped by a reduction (shrink.go): not emitted.
	dropped bool
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
	// noret is the callee that never returns (pattern exits); stubs are
	// the stub names of a PLT block and stubTargets the function each one
	// jumps to (pattern stubs).
	noret       string
	stubs       []string
	stubTargets []string
	// rng is the generator's state when the function was first built
	// (shrink.go rebuilds it from there); dropFillers and dropLoop are
	// what reductions took out of its body.
	rng         []byte
	dropFillers int
	dropLoop    bool
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
func (f *plan) ownCost() int {
	if f.pat.stubs {
		return 4
	}
	return 14 + f.fillers + 2*f.loop + 3*len(f.calls)
}

// exitLabel marks the entry stub's exit point, where a function that never
// returns jumps.
const exitLabel = ".Lexit"

// Generate builds the program for abi and seed, laid out at DefaultBase.
// The same arguments give the same program everywhere.
func Generate(abi target.Target, seed int64, opt Options) (p *Program, err error) {
	return GenerateAt(abi, seed, opt, DefaultBase)
}

// GenerateAt is Generate laid out at base (Layout(base)): the same program
// as Generate followed by Layout(base), without laying it out twice.
func GenerateAt(abi target.Target, seed int64, opt Options, base uint64) (p *Program, err error) {
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
	src := rand.NewPCG(uint64(seed), 0x5f2c_0f0a_9e37_79b9^uint64(abi))
	rng := rand.New(src)

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
	// Each function is built from the generator's state as it was when
	// its turn came, which shrink.go keeps to rebuild it alone.
	p.origin = &origin{opt: opt, plans: plans, argSets: slices.Clone(p.ArgSets), keep: allPaths(paths), stubRNG: pcgState(src), idle: opt.Idle}
	if opt.Idle == 0 {
		p.origin.idle = IdleCount(seed)
	}
	p.buildFuncs(t, plans, rng, func(f *plan) *rand.Rand { f.rng = pcgState(src); return rng }, paths)
	p.origin.far = p.far
	if err := p.Layout(base); err != nil {
		return nil, err
	}
	return p, nil
}

// buildFuncs builds the entry stub (with stubRNG) and each plan's
// functions (with rngOf's generator for the plan) into p.Funcs, then the
// signals of paths paths. It panics where gen's rules are broken.
func (p *Program) buildFuncs(t *isa, plans []*plan, stubRNG *rand.Rand, rngOf func(f *plan) *rand.Rand, paths int) {
	if p.far == nil { // a reduced program keeps the names of its origin's
		p.far = map[string]bool{}
		for _, f := range plans {
			if f.pat.far {
				p.far[f.name] = true
			}
		}
	}
	stub := newBuilder(t, "_start", stubRNG, p)
	stub.st.outermost = true
	t.stub(stub, plans[0].name)
	for _, o := range stub.ops {
		if o.exit {
			o.labels = append(o.labels, exitLabel)
		}
	}
	p.Funcs = append(p.Funcs, &Func{Name: "_start", Pattern: "entry", ops: stub.ops})
	var atEnd []*Func
	for _, f := range plans {
		b := newBuilder(t, f.name, rngOf(f), p)
		b.plan = f
		f.pat.build(b, f)
		if f.pat.emptyEntryFDE {
			p.Funcs[0].EmptyFDE, p.Funcs[0].EmptyFDEPattern = true, f.pat.name
		}
		// A PLT block is its stubs only.
		for _, q := range append([]*builder{b}, b.parts...) {
			if len(q.next) != 0 {
				panic(fmt.Sprintf("%s: label %v after the last instruction", q.name, q.next))
			}
			if len(q.ops) == 0 {
				continue
			}
			fn := &Func{Name: q.name, Pattern: f.pat.name, PartOf: q.partOf, StubBlock: q.block, ops: q.ops, Far: f.pat.far, plan: f}
			if q.atEnd {
				atEnd = append(atEnd, fn)
			} else {
				p.Funcs = append(p.Funcs, fn)
			}
		}
	}
	p.Funcs = append(p.Funcs, atEnd...)
	addSignals(t, p, plans, paths)
	if n := p.origin.idle; n > 0 {
		_, rng := idleCount(p.Seed)
		p.addIdle(t, n, rng)
	}
	p.addEdges(t)
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
// positions. Levels strictly increase along every call, tail call and
// stub jump, so there is no recursion and no call chain is longer than
// depth. Functions 0..depth-1 form a chain of unconditional calls, so the
// longest chain is exactly depth: a call that may end the program (it
// reaches a call that never returns) comes after the chain's call in
// every function. The plans come out in layout order: each noreturn
// callee is its own plan, one level below its caller, called by nothing
// else, placed right before or after its caller or after every function.
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
		// The deepest function of the chain is near: every tail call and
		// stub jump then has a near target (a jump cannot reach far code).
		// A signal handler is never called: not on the depth chain.
		nearOnly := i == depth-1
		ok := func(p *pattern) bool {
			return (p.calls || !mustCall) && (!p.needsDeeper() || deeper) && (!p.far || !nearOnly) &&
				(!p.switchesStack || f.level <= maxAltStacks) && !(p.signal && i < depth) && !(p.entryExit && mustCall)
		}
		j := slices.IndexFunc(deck, ok)
		if j >= 0 {
			f.pat = deck[j]
			deck = slices.Delete(deck, j, j+1)
		} else if mustCall || !deeper {
			// The chosen patterns cannot fill this slot: use the target's
			// plainest pattern that can.
			f.pat = t.plainPattern()
		} else {
			f.pat = pats[rng.IntN(len(pats))]
		}
		f.name = fmt.Sprintf("f%d_%s", i+1, strings.ReplaceAll(f.pat.name, "-", "_"))
	}
	deeperThan := func(f *plan) []*plan {
		var out []*plan
		for _, q := range plans {
			if q.level > f.level && !q.pat.noReturn && !q.pat.signal {
				out = append(out, q)
			}
		}
		return out
	}
	nearDeeperThan := func(f *plan) []*plan {
		return slices.DeleteFunc(deeperThan(f), func(q *plan) bool { return q.pat.far })
	}
	// Noreturn callees: plans of their own, after the n functions. Their
	// loop keeps a run that ends there from being much shorter than one
	// that returns.
	for _, f := range plans[:n] {
		if f.pat.exits {
			f.noret = f.name + "_exit"
			plans = append(plans, &plan{name: f.noret, pat: noreturnCallee, level: f.level + 1, fillers: 1 + rng.IntN(4), loop: 8 + rng.IntN(9)})
		}
	}
	// PLT blocks: 1 to 4 stubs, as many as there are deeper functions to
	// jump to.
	for _, f := range plans[:n] {
		if f.pat.stubs {
			k := min(len(nearDeeperThan(f)), 1+rng.IntN(4))
			for i := 0; i < k; i++ {
				f.stubs = append(f.stubs, fmt.Sprintf("%s.%d", f.name, i))
			}
		}
	}
	// entry names what a call or jump to q goes to: one of its stubs if
	// it is a PLT block.
	entry := func(q *plan) string {
		if q.pat.stubs {
			return q.stubs[rng.IntN(len(q.stubs))]
		}
		return q.name
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
	// Every other function gets a caller one level up; every stub of a
	// PLT block gets one.
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
		targets := []string{plans[i].name}
		if plans[i].pat.stubs {
			targets = plans[i].stubs
		}
		for _, tgt := range targets {
			q := parents[rng.IntN(len(parents))]
			q.calls = append(q.calls, callSite{target: tgt, pos: pos(q), cond: rng.IntN(2) == 0})
		}
	}
	byName := map[string]*plan{}
	for _, q := range plans {
		byName[q.name] = q
		for _, s := range q.stubs {
			byName[s] = q
		}
	}
	// Tail calls and stub targets, near functions only (a jump cannot
	// reach far code): each stub jumps to a different function.
	for _, f := range plans {
		d := nearDeeperThan(f)
		if f.pat.tail {
			f.tail = entry(d[rng.IntN(len(d))])
		}
		if f.pat.stubs {
			rng.Shuffle(len(d), func(a, b int) { d[a], d[b] = d[b], d[a] })
			for i := range f.stubs {
				f.stubTargets = append(f.stubTargets, entry(d[i]))
			}
		}
	}
	runCost := func() int {
		memo := make(map[*plan]int, len(plans))
		var cost func(f *plan) int
		cost = func(f *plan) int {
			if c, ok := memo[f]; ok {
				return c
			}
			c := f.ownCost()
			for _, s := range f.calls {
				c += cost(byName[s.target])
			}
			if f.tail != "" {
				c += cost(byName[f.tail])
			}
			if f.noret != "" {
				c += cost(byName[f.noret])
			}
			// A call enters one stub: count the dearest.
			most := 0
			for _, s := range f.stubTargets {
				most = max(most, cost(byName[s]))
			}
			memo[f] = c + most
			return c + most
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
			s := callSite{target: entry(d[rng.IntN(len(d))]), pos: pos(f), cond: rng.IntN(2) == 0}
			f.calls = append(f.calls, s)
			if runCost() > budget {
				f.calls = f.calls[:len(f.calls)-1]
			}
		}
	}
	// A call that may end the program waits for the chain's call.
	exits := map[*plan]bool{}
	var mayExit func(f *plan) bool
	mayExit = func(f *plan) bool {
		if v, ok := exits[f]; ok {
			return v
		}
		v := f.pat.exits
		for _, s := range f.calls {
			v = v || mayExit(byName[s.target])
		}
		for _, s := range append([]string{f.tail}, f.stubTargets...) {
			if s != "" {
				v = v || mayExit(byName[s])
			}
		}
		exits[f] = v
		return v
	}
	for _, f := range plans {
		if len(f.calls) == 0 || !f.calls[0].fixed {
			continue
		}
		for i := range f.calls[1:] {
			if c := &f.calls[1+i]; c.pos < f.calls[0].pos && mayExit(byName[c.target]) {
				c.pos = f.calls[0].pos
			}
		}
	}
	// Keep calls in position order so a pattern emits each group in turn.
	for _, f := range plans {
		slices.SortStableFunc(f.calls, func(a, b callSite) int { return int(a.pos) - int(b.pos) })
	}
	// Layout order: a noreturn callee right after its caller (the
	// caller's return address is the callee's first byte), right before
	// it, or after every function.
	out := slices.Clone(plans[:n])
	for _, g := range plans[n:] {
		at := slices.IndexFunc(out, func(q *plan) bool { return q.noret == g.name })
		switch k := rng.IntN(3); {
		case k == 0 || (k == 1 && at == 0): // the root stays first
			out = slices.Insert(out, at+1, g)
		case k == 1:
			out = slices.Insert(out, at, g)
		default:
			out = append(out, g)
		}
	}
	return out
}
