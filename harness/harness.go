package harness

import (
	"fmt"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
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
}

// Failure is one step whose backtrace was not OK.
type Failure struct {
	Step      int
	PC        uint64
	Insn      string // disassembly of the instruction about to execute
	Function  string // symbol+offset
	Judgement oracle.Judgement
	Expected  []oracle.Frame
	Got       []oracle.Frame
	Err       error // what the consumer stopped with
}

// Result is the outcome of checking one image.
type Result struct {
	Steps    int       // instructions executed and judged
	Counts   [4]int    // steps per oracle.Verdict
	Failures []Failure // the first MaxFailures failing steps
	LoadErr  error     // the consumer refused the section (every step is then ERROR)
	RunErr   error     // the emulation stopped early: fault, budget, oracle
	Executed []uint64  // PCs in execution order, when Options asked for them
}

// Clean reports whether every step was OK and the run completed.
func (r *Result) Clean() bool {
	return r.RunErr == nil && r.LoadErr == nil && r.Counts[oracle.Wrong]+r.Counts[oracle.NoInfo]+r.Counts[oracle.Error] == 0
}

// Checker checks images of one target.
type Checker struct {
	abi sframe.ABI
	m   *emu.Machine
	opt Options

	// per-run state, reused
	img      *producer.Image
	cons     consumer.Consumer
	tracker  *oracle.Tracker
	res      *Result
	expected []oracle.Frame
	batch    []pending
	steps    []consumer.Step
	out      []consumer.Result
	record   bool
}

// pending is a step waiting for a batch consumer.
type pending struct {
	expected []oracle.Frame
	snap     *snapshot
}

// New makes a Checker with its own emulator instance.
func New(abi sframe.ABI, opt Options) (*Checker, error) {
	m, err := emu.New(abi)
	if err != nil {
		return nil, err
	}
	if opt.Budget <= 0 {
		opt.Budget = DefaultBudget
	}
	if opt.MaxFailures <= 0 {
		opt.MaxFailures = 1
	}
	return &Checker{abi: abi, m: m, opt: opt}, nil
}

// Close releases the emulator.
func (c *Checker) Close() error { return c.m.Close() }

// Machine exposes the emulator, e.g. to track extra registers.
func (c *Checker) Machine() *emu.Machine { return c.m }

// Check runs img and judges cons's backtrace at every instruction. The
// consumer is loaded with the image first.
func (c *Checker) Check(img *producer.Image, cons consumer.Consumer) *Result {
	return c.check(img, cons, false)
}

// Trace is Check that also records every executed PC in Result.Executed.
func (c *Checker) Trace(img *producer.Image, cons consumer.Consumer) *Result {
	return c.check(img, cons, true)
}

func (c *Checker) check(img *producer.Image, cons consumer.Consumer, record bool) *Result {
	res := &Result{}
	if img.ABI != c.abi {
		res.RunErr = fmt.Errorf("harness: %s image on a %s checker", img.ABI.Name(), c.abi.Name())
		return res
	}
	tr, err := oracle.NewTracker(img.ABI, img.Symbols, img.Entry)
	if err != nil {
		res.RunErr = err
		return res
	}
	if err := cons.Load(img); err != nil {
		res.LoadErr = err
	}
	c.img, c.cons, c.tracker, c.res, c.record = img, cons, tr, res, record
	c.batch, c.steps = c.batch[:0], c.steps[:0]
	_, err = c.m.Execute(&emu.Run{
		Code: img.Code, CodeAddr: img.CodeAddr, Entry: img.Entry, Exit: img.Exit,
		Regs: img.Regs, Budget: c.opt.Budget,
	}, c.step)
	if ferr := c.flush(); err == nil {
		err = ferr
	}
	res.RunErr = err
	c.img, c.cons, c.tracker, c.res = nil, nil, nil, nil
	return res
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
	if c.res.LoadErr != nil {
		c.judge(s.Index, s.Regs.PC, c.expected, consumer.Result{Err: c.res.LoadErr}, s)
		return nil
	}
	if c.cons.BatchSize() <= 1 {
		c.steps = append(c.steps[:0], consumer.Step{Index: s.Index, Regs: s.Regs, Mem: s})
		if len(c.out) == 0 {
			c.out = make([]consumer.Result, 1)
		}
		if err := c.cons.Unwind(c.steps, c.out[:1]); err != nil {
			c.judge(s.Index, s.Regs.PC, c.expected, consumer.Result{Err: fmt.Errorf("%s: %w", c.cons.Name(), err)}, s)
			return nil
		}
		c.judge(s.Index, s.Regs.PC, c.expected, c.out[0], s)
		return nil
	}
	snap := takeSnapshot(s, c.abi)
	c.batch = append(c.batch, pending{expected: append([]oracle.Frame(nil), c.expected...), snap: snap})
	c.steps = append(c.steps, consumer.Step{Index: s.Index, Regs: &snap.regs, Mem: snap})
	if len(c.batch) >= c.cons.BatchSize() {
		return c.flush()
	}
	return nil
}

// flush sends buffered steps to a batch consumer and judges them.
func (c *Checker) flush() error {
	if len(c.batch) == 0 {
		return nil
	}
	if cap(c.out) < len(c.batch) {
		c.out = make([]consumer.Result, len(c.batch))
	}
	out := c.out[:len(c.batch)]
	err := c.cons.Unwind(c.steps, out)
	for i, p := range c.batch {
		r := out[i]
		if err != nil {
			r = consumer.Result{Err: fmt.Errorf("%s: %w", c.cons.Name(), err)}
		}
		c.judge(c.steps[i].Index, c.steps[i].Regs.PC, p.expected, r, p.snap)
	}
	c.batch, c.steps = c.batch[:0], c.steps[:0]
	return nil
}

func (c *Checker) judge(index int, pc uint64, expected []oracle.Frame, r consumer.Result, mem sframe.Memory) {
	j := oracle.Compare(expected, r.Frames, r.Err)
	res := c.res
	res.Steps++
	res.Counts[j.Verdict]++
	if j.Verdict == oracle.OK || len(res.Failures) >= c.opt.MaxFailures {
		return
	}
	text := "?"
	if off := pc - c.img.CodeAddr; pc >= c.img.CodeAddr && off < uint64(len(c.img.Code)) {
		if t, _, err := disasm.Instruction(c.abi, c.img.Code[off:], pc); err == nil {
			text = t
		}
	}
	res.Failures = append(res.Failures, Failure{
		Step: index, PC: pc, Insn: text, Function: c.img.Describe(pc), Judgement: j,
		Expected: append([]oracle.Frame(nil), expected...),
		Got:      append([]oracle.Frame(nil), r.Frames...),
		Err:      r.Err,
	})
}

// Pool keeps one Checker per target, made on first use: what a
// goroutine or a suite process needs to reuse emulators across images.
// Like a Checker, a Pool is not safe for concurrent use.
type Pool struct {
	opt      Options
	checkers map[sframe.ABI]*Checker
}

// NewPool makes an empty pool whose Checkers use opt.
func NewPool(opt Options) *Pool { return &Pool{opt: opt, checkers: map[sframe.ABI]*Checker{}} }

// Get returns the pool's Checker for abi, making it if needed.
func (p *Pool) Get(abi sframe.ABI) (*Checker, error) {
	if c := p.checkers[abi]; c != nil {
		return c, nil
	}
	c, err := New(abi, p.opt)
	if err != nil {
		return nil, err
	}
	p.checkers[abi] = c
	return c, nil
}

// Close releases every Checker of the pool.
func (p *Pool) Close() {
	for abi, c := range p.checkers {
		c.Close()
		delete(p.checkers, abi)
	}
}
