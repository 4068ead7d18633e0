package campaign

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// Config is what every cell of a run checks.
type Config struct {
	Seeds    []int64  // the programs of every cell, one per seed
	Paths    int      // argument vectors per program (0: gen's default)
	Batch    int      // programs a toolchain producer assembles and links at once
	Patterns []string // asked for; nil: each cell's default mix (NewMix)
	Workers  int
	// Attribute checks with attribution (harness.Checker.CheckProgram:
	// every failing step charged to a pattern) instead of the
	// differential: what the matrix's tallies need.
	Attribute bool
	// Checker gives a worker's checkers their options; called once per
	// worker (a --cbf-stats count of its own). Nil: harness.Options{}.
	Checker func() harness.Options
}

// Checked is one program of a cell, checked: what a Sink sees.
type Checked struct {
	Cell    *Cell
	Program Produced
	// Result is nil when the producer's tools made no image of the
	// program (Program.Err): a failure of the program, kept with its
	// assembly.
	Result   *harness.Result
	Checker  *harness.Checker // the worker's, which a Sink may reuse (to minimize a failure)
	Consumer consumer.Consumer
}

// Failed reports whether the program failed.
func (c *Checked) Failed() bool { return c.Result == nil || !c.Result.Clean() }

// Sink receives a run's results as the workers make them. Its methods are
// called from every worker at once.
type Sink interface {
	// Program sees every program of a cell once checked, before the cell
	// adds it; for a failed program it returns the path of the reproducer
	// it saved ("" for none).
	Program(c *Checked) (reproducer string)
	// Note is a message about a cell that is no result of it.
	Note(c *Cell, msg string)
	// CellDone sees each cell once it is finished (Cell.Finish).
	CellDone(c *Cell)
}

// Worker is what one goroutine of a run owns: an emulator per target it
// meets. Like a harness.Checker, it is not safe for concurrent use; a
// Ginkgo process makes one and runs its cells with it.
type Worker struct {
	checkers *harness.Pool
	conses   map[string]consumer.Consumer // by name, made on first use
	prods    map[string]producer.Producer // by name, made on first use
}

// NewWorker makes a worker whose checkers use opt.
func NewWorker(opt harness.Options) *Worker {
	return &Worker{checkers: harness.NewPool(opt), conses: map[string]consumer.Consumer{}, prods: map[string]producer.Producer{}}
}

// producer is the worker's producer of that name, made on first use: a
// toolchain producer finds its tools and their versions once.
func (w *Worker) producer(name string) (producer.Producer, error) {
	if p := w.prods[name]; p != nil {
		return p, nil
	}
	p, err := producer.New(name)
	if err != nil {
		return nil, err
	}
	w.prods[name] = p
	return p, nil
}

// consumer is the worker's consumer of that name, made on first use and
// kept for its next cells: an out-of-process consumer is started once.
func (w *Worker) consumer(name string) (consumer.Consumer, error) {
	if c := w.conses[name]; c != nil {
		return c, nil
	}
	c, err := consumer.New(name)
	if err != nil {
		return nil, err
	}
	w.conses[name] = c
	return c, nil
}

// Checker is the worker's checker for t.
func (w *Worker) Checker(t target.Target) (*harness.Checker, error) { return w.checkers.Get(t) }

// Close releases the worker's emulators and consumers.
func (w *Worker) Close() {
	w.checkers.Close()
	for n, c := range w.conses {
		c.Close()
		delete(w.conses, n)
	}
}

// Each runs do on every job, spread over n workers (at least one), each
// with its own Worker; opt (nil: harness.Options{}) gives each worker's
// checkers their options. It returns when every job is done.
func Each[J any](n int, opt func() harness.Options, jobs []J, do func(*Worker, J)) {
	work := make(chan J)
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var o harness.Options
			if opt != nil {
				o = opt()
			}
			w := NewWorker(o)
			defer w.Close()
			for j := range work {
				do(w, j)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
}

// Run runs the cells with cfg.Workers workers and finishes each.
func Run(cfg Config, cells []*Cell, sink Sink) {
	Each(cfg.Workers, cfg.Checker, cells, func(w *Worker, c *Cell) { w.RunCell(cfg, c, sink) })
}

// RunCell plans the cell (NewPlan), makes its programs (a toolchain's in
// batches, one batch ahead) and checks each with the cell's consumer at
// every executed instruction, a toolchain's also against sfconform's own
// encoding of the same program. The cell ends clean, failed, unsupported
// (with the reason) or, on a setup error, "error".
func (w *Worker) RunCell(cfg Config, c *Cell, sink Sink) { w.RunCells(cfg, []*Cell{c}, sink) }

// RunCells is RunCell for cells of one target and producer: their
// programs are made once and checked by each cell's consumer in turn.
func (w *Worker) RunCells(cfg Config, cells []*Cell, sink Sink) {
	type live struct {
		c    *Cell
		cons consumer.Consumer
	}
	var lives []live
	defer func() {
		for _, c := range cells {
			c.Finish()
			sink.CellDone(c)
		}
	}()
	var plan *Plan
	for _, c := range cells {
		prod, err := w.producer(c.Producer)
		if err != nil {
			c.fail(err)
			continue
		}
		cons, err := w.consumer(c.Consumer)
		if err != nil {
			c.fail(err)
			continue
		}
		p, err := NewPlan(prod, c.target, cfg.Patterns, cons)
		if err != nil {
			var u *UnsupportedError
			if errors.As(err, &u) {
				c.Status, c.Reason = "unsupported", u.Reason
				if p != nil { // the version and what its mix leaves out
					c.SFrameVersion, c.Unexpressed, c.UnexpressedWhy, c.Beyond = p.Version, p.Mix.LeftOut, p.Mix.Why, p.Mix.Beyond
				}
			} else {
				c.fail(err)
			}
			continue
		}
		c.setPlan(p)
		plan = p
		lives = append(lives, live{c, cons})
	}
	if len(lives) == 0 {
		return
	}
	// The programs are made once for every cell: with the section layouts
	// all their consumers read.
	conses := make([]consumer.Consumer, len(lives))
	for i, l := range lives {
		conses[i] = l.cons
	}
	plan.setLayouts(conses)
	for _, l := range lives {
		sink.Note(l.c, plan.Mix.LayoutNote())
	}
	// The shapes a toolchain decides are measured on the sections it
	// wrote, once a program, and said when the cells end.
	var shapes *shapeCounter
	if plan.Toolchain {
		shapes = &shapeCounter{with: map[string]int{}}
		defer func() {
			for _, l := range lives {
				l.c.Layouts = MeasuredLayouts(l.c.Layouts, shapes.with, shapes.of)
				sink.Note(l.c, "section layouts as the toolchain wrote them: "+Mix{Layouts: l.c.Layouts}.measuredNote())
			}
		}()
	}
	chk, err := w.checkers.Get(plan.Target)
	if err != nil {
		for _, l := range lives {
			l.c.fail(err)
		}
		return
	}
	// A cell's seconds are its own checks' and the programs' making,
	// which its cells share: with one consumer, the cell's whole time.
	start := time.Now()
	checking := make([]time.Duration, len(lives))
	defer func() {
		total := time.Since(start)
		for _, d := range checking {
			total -= d
		}
		for i, l := range lives {
			l.c.SetSeconds((total + checking[i]).Seconds())
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	for batch := range plan.ProduceAhead(cfg.Seeds, max(cfg.Batch, 1), cfg.Paths, stop) {
		for _, p := range batch {
			if shapes != nil && p.Img != nil {
				if err := shapes.add(p.Img); err != nil {
					for _, l := range lives {
						sink.Note(l.c, fmt.Sprintf("seed %d: section shapes not measured: %v", p.Seed, err))
					}
				}
			}
			if p.Err != nil {
				var be *producer.BatchError
				if p.Prog == nil || !errors.As(p.Err, &be) {
					for _, l := range lives {
						l.c.fail(fmt.Errorf("seed %d: %w", p.Seed, p.Err))
					}
					return
				}
			}
			for i, l := range lives {
				t := time.Now()
				res := w.check(cfg, plan, chk, l.cons, l.c, p, sink)
				if res != nil {
					res.ExpectViolations(plan.Mix.ExpectedRules())
				}
				l.c.Add(p, res, sink.Program(&Checked{Cell: l.c, Program: p, Result: res, Checker: chk, Consumer: l.cons}))
				checking[i] += time.Since(t)
			}
		}
	}
}

// check checks one program with cons: nil for a program the producer's
// tools made no image of (an assembler's internal error, code gen did not
// lay out), a failure of the program kept with its assembly.
func (w *Worker) check(cfg Config, plan *Plan, chk *harness.Checker, cons consumer.Consumer, c *Cell, p Produced, sink Sink) *harness.Result {
	switch {
	case p.Err != nil:
		return nil
	case cfg.Attribute:
		return chk.CheckProgram(p.Img, nil, p.Prog, cons)
	case plan.Toolchain:
		ref, err := harness.Reference(p.Img, p.Prog)
		if err != nil {
			sink.Note(c, fmt.Sprintf("seed %d: no reference encoding for the differential: %v", p.Seed, err))
			return chk.Check(p.Img, cons)
		}
		return chk.CheckAgainst(p.Img, ref, cons)
	}
	return chk.Check(p.Img, cons)
}

// shapeCounter counts the programs whose sections have each shape
// (producer.ImageShapes), decoding a section a batch's programs share
// once.
type shapeCounter struct {
	with map[string]int
	of   int
	last struct {
		sec   *byte
		n     int
		addr  uint64
		names []string
	}
}

func (s *shapeCounter) add(img *image.Image) error {
	var names []string
	if len(img.Modules) == 0 && len(img.SFrame) > 0 && unsafe.SliceData(img.SFrame) == s.last.sec && len(img.SFrame) == s.last.n && img.SFrameAddr == s.last.addr {
		names = s.last.names
	} else {
		var err error
		if names, err = producer.ImageShapes(img); err != nil {
			return err
		}
		if len(img.Modules) == 0 && len(img.SFrame) > 0 {
			s.last.sec, s.last.n, s.last.addr, s.last.names = unsafe.SliceData(img.SFrame), len(img.SFrame), img.SFrameAddr, names
		}
	}
	s.of++
	for _, n := range names {
		s.with[n]++
	}
	return nil
}
