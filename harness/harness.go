package harness

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/validate"
	"github.com/sfconform/sfconform/verdict"
)

// DefaultBudget bounds the instructions of one run; generated programs
// execute a few thousand at most.
const DefaultBudget = 1 << 20

// Options tune a Checker.
type Options struct {
	Budget int // instructions per run; 0 = DefaultBudget
	// MaxFailures is how many failing steps of one image are kept in
	// full (all are counted). 0 = 1: the first failure is the minimal case.
	MaxFailures int
	// Backtraces, when set, counts every expected backtrace judged and
	// what it takes to store it (backtraces.go).
	Backtraces *BacktraceStats
	// KeepExpected makes Trace keep the oracle's frames at every step
	// (Result.ExpectedAt), for a report that shows them.
	KeepExpected bool
	// Aside, when set, is asked about every judged step; a step it names
	// a class for ("sp off stack", "beyond depth limit") is counted in
	// Result.Aside under that class instead of in Counts, and is never a
	// Failure: a caller that knows a machine state to be no real one, or
	// a limit of the consumer's, keeps it out of the verdicts.
	Aside func(expected []frame.Frame, r consumer.Result, j oracle.Judgement) string
	// NoProbes turns the probe lookups (Result.Probes) off: for foreign
	// code (a real program's) whose symbols need not name every function
	// that has unwind information, a byte in no symbol may well have some.
	NoProbes bool
	// Lenient, when set, is every run's emu.Run.Lenient (calls leaving
	// the image return at once, system calls are skipped, unmapped memory
	// is mapped on demand); SetLenient changes it between images.
	Lenient *emu.Lenient
}

// Failure is one step whose backtrace was not OK.
type Failure struct {
	Path      int // index into the image's Paths
	Step      int // instruction index within the path's run
	PC        uint64
	Insn      string // disassembly of the instruction about to execute
	Function  string // symbol+offset
	Judgement oracle.Judgement
	Expected  []frame.Frame
	Got       []frame.Frame
	Err       error // what the consumer stopped with
	// Probe: the lookup was a probe at PC, which lies in no function
	// (oracle.ProbePCs), with the registers of step Step otherwise.
	Probe bool
	// Warnings are the producer's warnings about the function the
	// consumer stopped in, for a NOINFO: why the function has no FDE (an
	// FDE GNU as skipped for CFI it cannot express).
	Warnings []image.Warning
	// ReferenceRow, under the differential, is the row sfconform's own
	// encoding has for PC where the section's differs from it.
	ReferenceRow string
}

// Result is the outcome of checking one image.
type Result struct {
	Paths int // runs made, one per path of the image
	// PathSteps are the steps of each run.
	PathSteps []int
	Steps     int                // instructions executed and judged, all paths
	Counts    [verdict.Count]int // steps per verdict (never Invalid: that judges the section)
	// Probes counts the probe lookups per verdict: at the first step of
	// the first run whose FP is not zero, the consumer is asked once more
	// for every PC of oracle.ProbePCs, with that step's registers and PC
	// there; OK means it found no unwind information (oracle.JudgeProbe).
	// They are not in Steps or Counts.
	Probes [verdict.Count]int
	// Aside counts the steps Options.Aside set aside, by its class; they
	// are in Steps but not in Counts.
	Aside map[string]int
	// WrongFields counts the WRONG steps by the field that first differed
	// ("pc", "cfa", "outermost", ...): a table that never marks the
	// outermost frame is WRONG at every step, but only there.
	WrongFields map[string]int
	// AtOutermost counts, per verdict, the failing steps whose every frame
	// is right up to the outermost one, which is where the backtrace went
	// wrong: the consumer did not take it for the outermost frame (a table
	// without an outermost row, SFrame before version 3 as GNU as writes
	// it) and went on, or stopped there with an error.
	AtOutermost [verdict.Count]int
	// Violations are the rules the section breaks (validate.Section),
	// warnings included.
	Violations []verdict.Violation
	// Expected are the violations ExpectViolations took out of
	// Violations: rules a section breaks on purpose.
	Expected []verdict.Violation
	Failures []Failure // the first MaxFailures failing steps
	LoadErr  error     // the consumer refused the section (every step is then ERROR)
	RunErr   error     // the emulation stopped early: fault, budget, oracle
	Executed []uint64  // PCs in execution order, when Trace asked for them
	// ExpectedAt are the oracle's frames at each step of Executed, when
	// Options.KeepExpected asked for them (the HTML report shows them
	// beside each instruction).
	ExpectedAt [][]frame.Frame

	// The differential (CheckAgainst): Differs counts the steps whose row
	// in the image's section differs from the reference's; Equivalent,
	// those of them whose judgement clears that row (rowHarmless: the
	// frames it gives match the machine). FirstDiffs are the first
	// differing steps (MaxFailures of them).
	Differs, Equivalent int
	FirstDiffs          []RowDiff

	// Attribution (CheckProgram): the failing steps by what they are
	// charged to, and the steps executed in each pattern's functions.
	Blames       map[Blame]*Blamed
	PatternSteps map[string]int
}

// Invalid reports whether the section breaks a rule (warnings aside).
func (r *Result) Invalid() bool { return validate.Invalid(r.Violations) }

// ExpectViolations moves the violations of the rules named (validate.Rule)
// from Violations to Expected: a campaign that gives a consumer a layout
// shape the version's strict rules forbid (campaign.LayoutStatus) expects
// its section INVALID for them, and for nothing else.
func (r *Result) ExpectViolations(rules []string) {
	if len(rules) == 0 {
		return
	}
	kept := r.Violations[:0]
	for _, v := range r.Violations {
		if slices.Contains(rules, v.Rule) {
			r.Expected = append(r.Expected, v)
		} else {
			kept = append(kept, v)
		}
	}
	r.Violations = kept
}

// Clean reports whether the section is valid, every step was OK and the
// run completed.
func (r *Result) Clean() bool {
	return r.RunErr == nil && r.LoadErr == nil && !r.Invalid() &&
		r.Counts[verdict.Wrong]+r.Counts[verdict.NoInfo]+r.Counts[verdict.Error] == 0 && r.ProbesFailed() == 0
}

// ProbesFailed is how many probe lookups were not OK.
func (r *Result) ProbesFailed() int {
	return r.Probes[verdict.Wrong] + r.Probes[verdict.NoInfo] + r.Probes[verdict.Error]
}

// Checker checks images of one target.
type Checker struct {
	target target.Target
	m      *emu.Machine
	opt    Options

	// per-run state, reused
	img      *image.Image
	cons     consumer.Consumer
	tracker  *oracle.Tracker
	res      *Result
	expected []frame.Frame
	batch    [][]frame.Frame // expected frames of the steps waiting for a batch consumer
	probe    []bool          // whether each of them is a probe (expected: frame 0 alone)
	probePCs []uint64        // the image's (oracle.ProbePCs)
	probed   bool            // whether this image's probes are asked
	probeReg machine.Registers
	diffs    []*rowPair // their rows against the reference's (nil: no differential)
	diff     *differ
	attr     *attribution // CheckProgram's; nil: no attribution
	steps    []consumer.Step
	snaps    []machine.Snapshot // the batch's snapshots, reused from batch to batch
	out      []consumer.Result
	record   bool
	path     int
	segs     []emu.Segment

	// The last section validated and what validation found: the images of
	// a toolchain's batch share one section, holding all their functions.
	validated struct {
		target target.Target
		addr   uint64
		data   []byte
		vs     []verdict.Violation
	}
}

// validate is validate.Section, remembering the last section's result.
func (c *Checker) validate(img *image.Image) []verdict.Violation {
	if len(img.Modules) > 0 {
		// Multi-module images are never a toolchain batch's: each has
		// sections of its own.
		return validate.Section(img)
	}
	v := &c.validated
	if v.data != nil && v.target == img.Target && v.addr == img.SFrameAddr && bytes.Equal(v.data, img.SFrame) {
		return slices.Clone(v.vs)
	}
	vs := validate.Section(img)
	v.target, v.addr, v.data, v.vs = img.Target, img.SFrameAddr, append(v.data[:0], img.SFrame...), slices.Clone(vs)
	return vs
}

// New makes a Checker with its own emulator instance.
func New(t target.Target, opt Options) (*Checker, error) {
	m, err := emu.New(t)
	if err != nil {
		return nil, err
	}

	if opt.Budget <= 0 {
		opt.Budget = DefaultBudget
	}
	if opt.MaxFailures <= 0 {
		opt.MaxFailures = 1
	}
	return &Checker{target: t, m: m, opt: opt}, nil
}

// SetAside sets Options.Aside for the next images.
func (c *Checker) SetAside(f func(expected []frame.Frame, r consumer.Result, j oracle.Judgement) string) {
	c.opt.Aside = f
}

// SetBacktraces sets Options.Backtraces for the next images (nil: count
// none) and returns the count it replaces, so that a caller borrowing the
// checker for runs of its own can keep them out of the count.
func (c *Checker) SetBacktraces(s *BacktraceStats) *BacktraceStats {
	old := c.opt.Backtraces
	c.opt.Backtraces = s
	return old
}

// SetProbes sets Options.NoProbes to !on for the next images.
func (c *Checker) SetProbes(on bool) { c.opt.NoProbes = !on }

// SetLenient sets Options.Lenient for the next images.
func (c *Checker) SetLenient(l *emu.Lenient) { c.opt.Lenient = l }

// Close releases the emulator.
func (c *Checker) Close() error { return c.m.Close() }

// Machine exposes the emulator, e.g. to track extra registers.
func (c *Checker) Machine() *emu.Machine { return c.m }

// Check validates img's section, runs img and judges cons's backtrace at
// every instruction. The consumer is loaded with the image first.
func (c *Checker) Check(img *image.Image, cons consumer.Consumer) *Result {
	return c.check(img, cons, false)
}

// Trace is Check that also records every executed PC in Result.Executed.
func (c *Checker) Trace(img *image.Image, cons consumer.Consumer) *Result {
	return c.check(img, cons, true)
}

// CheckAgainst is Check with the differential: at every step the row of
// img's section for the PC is compared with ref's (Reference: sfconform's
// own encoding of the same program), and Result counts the steps where
// they differ, and of those the ones judged OK.
func (c *Checker) CheckAgainst(img, ref *image.Image, cons consumer.Consumer) *Result {
	c.diff = newDiffer(img, ref)
	defer func() { c.diff = nil }()
	return c.check(img, cons, false)
}

func (c *Checker) check(img *image.Image, cons consumer.Consumer, record bool) *Result {
	res := &Result{}
	if img.Target != c.target {
		res.RunErr = fmt.Errorf("harness: %s image on a %s checker", img.Target.Name(), c.target.Name())
		return res
	}
	res.Violations = c.validate(img)
	// Registers beyond SP, FP and the link register that the program's
	// rules name (a CFA on %r10, an RA in %f8): read at every step, for the
	// consumer to find in the topmost frame.
	c.m.SetTrack(img.RuleRegs...)
	tr, err := oracle.NewTracker(img.Target, img.Symbols, img.Entry)
	if err != nil {
		res.RunErr = err
		return res
	}
	if err := cons.Load(img); err != nil {
		res.LoadErr = err
	}
	c.img, c.cons, c.tracker, c.res, c.record = img, cons, tr, res, record
	c.batch, c.steps, c.diffs, c.probe = c.batch[:0], c.steps[:0], c.diffs[:0], c.probe[:0]
	c.probePCs, c.probed = c.probePCs[:0], false
	if !c.opt.NoProbes {
		c.probePCs = oracle.ProbePCs(c.probePCs, img)
	}
	paths := img.Paths
	if len(paths) == 0 {
		paths = []map[int]uint64{nil}
	}
	// One program, several runs: the emulator translates its code once.
	for k, regs := range paths {
		c.path = k
		tr.Reset()
		run := emu.Run{
			Code: img.Code, CodeAddr: img.CodeAddr, Segments: c.segments(img), Entry: img.Entry, Exit: img.Exit,
			Regs: regs, Budget: c.opt.Budget, Lenient: c.opt.Lenient,
		}
		if s, ok := img.SignalOf(k); ok {
			run.Signal = &emu.Signal{At: s.At, Count: s.Count, Signo: s.Signo, Handler: s.Handler, Restorer: s.Restorer}
		}
		_, err = c.m.Execute(&run, c.step)
		c.flush()
		res.Paths++
		res.PathSteps = append(res.PathSteps, res.Steps-sum(res.PathSteps))
		if err != nil {
			res.RunErr = fmt.Errorf("path %d: %w", k, err)
			break
		}
	}
	c.img, c.cons, c.tracker, c.res = nil, nil, nil, nil
	return res
}

// segments converts the image's extra code segments for the emulator.
func (c *Checker) segments(img *image.Image) []emu.Segment {
	c.segs = c.segs[:0]
	for _, s := range img.Segments {
		c.segs = append(c.segs, emu.Segment{Addr: s.Addr, Code: s.Code})
	}
	return c.segs
}

// step is called by the emulator before each instruction.
func (c *Checker) step(s *emu.Step) error {
	if err := c.tracker.Observe(s.Regs, s); err != nil {
		return err
	}
	if c.record {
		c.res.Executed = append(c.res.Executed, s.Regs.PC)
	}
	c.expected = c.tracker.Expected(c.expected[:0], s.Regs)
	if c.attr != nil {
		c.attr.steps[c.attr.patternAt(s.Regs.PC)]++
	}
	var d *rowPair
	if c.diff != nil {
		r := c.diff.at(s.Regs.PC)
		d = &r
	}
	if c.res.LoadErr != nil {
		c.judge(s.Index, s.Regs.PC, c.expected, &consumer.Result{Err: c.res.LoadErr}, d)
		c.probes(s)
		return nil
	}
	if c.cons.BatchSize() <= 1 {
		c.judge(s.Index, s.Regs.PC, c.expected, c.unwindOne(s, s.Regs), d)
		c.probes(s)
		return nil
	}
	c.enqueue(s, c.expected, d, false)
	c.probes(s)
	return nil
}

// unwindOne asks an in-process consumer for the backtrace from regs, the
// live machine's memory. The step and the result are written and read in
// place, field by field: a struct built on the stack and copied whole is
// read back with wide loads that stall on the stores that built it (perf
// annotate: the hottest instructions of step and judge). The result lives
// until the next call.
func (c *Checker) unwindOne(s *emu.Step, regs *machine.Registers) *consumer.Result {
	if len(c.steps) == 0 {
		c.steps = append(c.steps, consumer.Step{})
	}
	c.steps = c.steps[:1]
	st := &c.steps[0]
	st.Index, st.Regs, st.Mem, st.Snapshot = s.Index, regs, s, nil
	if len(c.out) == 0 {
		c.out = make([]consumer.Result, 1)
	}
	if err := c.cons.Unwind(c.steps, c.out[:1]); err != nil {
		return &consumer.Result{Err: fmt.Errorf("%s: %w", c.cons.Name(), err)}
	}
	return &c.out[0]
}

// enqueue adds a step for a batch consumer, a probe at its PC when probe
// is set (expected is then frame 0 alone), and sends the batch when full.
func (c *Checker) enqueue(s *emu.Step, expected []frame.Frame, d *rowPair, probe bool) {
	// A batch's snapshots and expected frames live until it is judged
	// (consumer.Step: the consumer must copy what it keeps), so their
	// buffers serve the next batch.
	n := len(c.steps)
	if n >= len(c.snaps) {
		// Steps already taken keep pointing into the old array.
		c.snaps = make([]machine.Snapshot, max(c.cons.BatchSize(), n+1))
	}
	snap := &c.snaps[n]
	snapshotInto(snap, s, c.target, c.img.Symbols)
	if probe {
		snap.Regs.PC = expected[0].PC
	}
	c.diffs = append(c.diffs, d)
	c.probe = append(c.probe, probe)
	if n < cap(c.batch) {
		c.batch = c.batch[:n+1]
		c.batch[n] = append(c.batch[n][:0], expected...)
	} else {
		c.batch = append(c.batch, append([]frame.Frame(nil), expected...))
	}
	c.steps = append(c.steps, consumer.Step{Index: s.Index, Regs: &snap.Regs, Mem: snap, Snapshot: snap})
	if len(c.batch) >= c.cons.BatchSize() {
		c.flush()
	}
}

// probes asks the consumer, at the first step of the first run whose FP
// is not zero, for a backtrace from every probe PC of the image with that
// step's registers otherwise (Result.Probes); in-process consumers are
// asked at once, batch consumers in the step batches like any step. The
// FP is not zero because a frame pointer of zero marks the outermost
// frame to some unwinders (glibc's), whatever the PC: they end the trace
// there without looking the PC up.
func (c *Checker) probes(s *emu.Step) {
	if c.probed || c.path != 0 || s.Regs.Regs[c.target.FP()] == 0 {
		return
	}
	c.probed = true
	sp, fp := s.Regs.Regs[c.target.SP()], s.Regs.Regs[c.target.FP()]
	for _, pc := range c.probePCs {
		f := [1]frame.Frame{{PC: pc, SP: sp, FP: fp}}
		switch {
		case c.res.LoadErr != nil:
			c.judgeProbe(s.Index, f[0], consumer.Result{Err: c.res.LoadErr})
		case c.cons.BatchSize() <= 1:
			c.probeReg = *s.Regs
			c.probeReg.PC = pc
			c.judgeProbe(s.Index, f[0], *c.unwindOne(s, &c.probeReg))
		default:
			c.enqueue(s, f[:], nil, true)
		}
	}
}

// judgeProbe judges the backtrace r from probe frame f's PC.
func (c *Checker) judgeProbe(index int, f frame.Frame, r consumer.Result) {
	j := oracle.JudgeProbe(f.PC, f.SP, f.FP, r.Frames, r.Err)
	c.res.Probes[j.Verdict]++
	if j.Verdict == verdict.OK || len(c.res.Failures) >= c.opt.MaxFailures {
		return
	}
	fl := c.failure(index, f.PC, []frame.Frame{f}, r, nil, j)
	fl.Probe, fl.Insn = true, "(no instruction: a probe in no function)"
	c.res.Failures = append(c.res.Failures, fl)
}

// flush sends buffered steps to a batch consumer and judges them.
func (c *Checker) flush() {
	if len(c.batch) == 0 {
		return
	}
	if cap(c.out) < len(c.batch) {
		c.out = make([]consumer.Result, len(c.batch))
	}
	out := c.out[:len(c.batch)]
	err := c.cons.Unwind(c.steps, out)
	for i, expected := range c.batch {
		r := out[i]
		if err != nil {
			r = consumer.Result{Err: fmt.Errorf("%s: %w", c.cons.Name(), err)}
		}
		if c.probe[i] {
			c.judgeProbe(c.steps[i].Index, expected[0], r)
			continue
		}
		c.judge(c.steps[i].Index, c.steps[i].Regs.PC, expected, &r, c.diffs[i])
	}
	c.batch, c.steps, c.diffs, c.probe = c.batch[:0], c.steps[:0], c.diffs[:0], c.probe[:0]
}

// judge judges one step; d, when the differential runs, is the step's
// row against the reference's.
func (c *Checker) judge(index int, pc uint64, expected []frame.Frame, r *consumer.Result, d *rowPair) {
	j := oracle.Compare(expected, r.Frames, r.Err)
	if j.Verdict == verdict.OK && d == nil && c.opt.Aside == nil && c.opt.Backtraces == nil && !(c.record && c.opt.KeepExpected) {
		// Most steps: nothing to record but the count. tally's
		// closure would keep j in memory, and copying it there stalls.
		c.res.Steps++
		c.res.Counts[verdict.OK]++
		return
	}
	c.tally(index, pc, expected, *r, d, j)
}

// tally records a judged step in the result (see judge).
func (c *Checker) tally(index int, pc uint64, expected []frame.Frame, r consumer.Result, d *rowPair, j oracle.Judgement) {
	if c.record && c.opt.KeepExpected {
		// Every step is judged once, in order: the frames line up
		// with Executed.
		c.res.ExpectedAt = append(c.res.ExpectedAt, slices.Clone(expected))
	}
	if c.opt.Backtraces != nil {
		c.opt.Backtraces.Add(expected)
	}
	res := c.res
	res.Steps++
	if c.opt.Aside != nil {
		if k := c.opt.Aside(expected, r, j); k != "" {
			if res.Aside == nil {
				res.Aside = map[string]int{}
			}
			res.Aside[k]++
			return
		}
	}
	res.Counts[j.Verdict]++
	if j.Verdict != verdict.OK && len(expected) > 0 && expected[len(expected)-1].Outermost && j.Frame >= len(expected)-1 {
		res.AtOutermost[j.Verdict]++
	}
	if j.Verdict == verdict.Wrong {
		if res.WrongFields == nil {
			res.WrongFields = map[string]int{}
		}
		res.WrongFields[j.Field]++
	}
	if d != nil && !d.same {
		res.Differs++
		if rowHarmless(j) {
			res.Equivalent++
		}
		if len(res.FirstDiffs) < c.opt.MaxFailures {
			res.FirstDiffs = append(res.FirstDiffs, RowDiff{Path: c.path, Step: index, PC: pc, Function: c.img.Describe(pc),
				Got: d.got.String(), Want: d.want.String(), Verdict: j.Verdict})
		}
	}
	if c.attr != nil && j.Verdict != verdict.OK {
		c.attr.blame(j, expected, res.LoadErr != nil, func() Failure { return c.failure(index, pc, expected, r, d, j) })
	}
	if j.Verdict == verdict.OK || len(res.Failures) >= c.opt.MaxFailures {
		return
	}
	res.Failures = append(res.Failures, c.failure(index, pc, expected, r, d, j))
}

// failure describes a failing step.
func (c *Checker) failure(index int, pc uint64, expected []frame.Frame, r consumer.Result, d *rowPair, j oracle.Judgement) Failure {
	f := Failure{
		Path: c.path, Step: index, PC: pc, Insn: c.instruction(pc), Function: c.img.Describe(pc), Judgement: j,
		Expected: append([]frame.Frame(nil), expected...),
		Got:      append([]frame.Frame(nil), r.Frames...),
		Err:      r.Err,
	}
	if d != nil && !d.same {
		f.ReferenceRow = d.want.String()
	}
	if j.Verdict == verdict.NoInfo && j.Frame >= 0 && j.Frame < len(expected) {
		// The function the consumer found no row for: frame 0's PC, or
		// a caller's return address (minus one: a call may be its last
		// instruction).
		at := expected[j.Frame].PC
		if j.Frame > 0 {
			at--
		}
		if s, ok := c.img.SymbolAt(at); ok {
			f.Warnings = c.img.Record.FunctionWarnings(s.Name)
		}
	}
	return f
}

// instruction disassembles the instruction at pc for a report.
func (c *Checker) instruction(pc uint64) string {
	if b := c.img.Instruction(pc); b != nil {
		if t, _, err := disasm.Instruction(c.target, b, pc); err == nil {
			return t
		}
	}
	return "?"
}

// Pool keeps one Checker per target, made on first use: what a
// goroutine or a suite process needs to reuse emulators across images.
// Like a Checker, a Pool is not safe for concurrent use.
type Pool struct {
	opt      Options
	checkers map[target.Target]*Checker
}

// NewPool makes an empty pool whose Checkers use opt.
func NewPool(opt Options) *Pool { return &Pool{opt: opt, checkers: map[target.Target]*Checker{}} }

// Get returns the pool's Checker for t, making it if needed.
func (p *Pool) Get(t target.Target) (*Checker, error) {
	if c := p.checkers[t]; c != nil {
		return c, nil
	}
	c, err := New(t, p.opt)
	if err != nil {
		return nil, err
	}
	p.checkers[t] = c
	return c, nil
}

// Close releases every Checker of the pool.
func (p *Pool) Close() {
	for t, c := range p.checkers {
		c.Close()
		delete(p.checkers, t)
	}
}

// machineMemory is what a Step offers an in-process consumer; asserted
// here so a change to emu.Step that breaks it fails to compile.
var _ machine.Memory = (*emu.Step)(nil)

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// rowHarmless says whether a step's judgement clears the row used at its
// PC: that row gives frame 0's CFA and frame 1's PC, SP and FP (or says
// frame 0 is the outermost one). It is cleared when the step is OK, or
// when the first frame that went wrong is further out and went wrong by
// its own row: frame 1's CFA or outermost mark, frame 1 without a row
// (NOINFO) or that the consumer failed to apply (ERROR), or any frame
// beyond.
func rowHarmless(j oracle.Judgement) bool {
	switch {
	case j.Verdict == verdict.OK, j.Frame >= 2:
		return true
	case j.Frame == 1:
		return j.Verdict != verdict.Wrong || (j.Field != "pc" && j.Field != "sp" && j.Field != "fp" && j.Field != "depth")
	}
	return false
}
