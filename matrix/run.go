package matrix

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// Seeds are the seeds of a pattern cell's n programs: first, first+1, ...
// Every producer of a target gets the same programs of a pattern.
func Seeds(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// planCell plans a cell (campaign.NewPlan): nil and the reason when the
// producer and consumer cannot meet on the target, or an error for a
// plug-in that cannot be made.
func planCell(c Cell) (*campaign.Plan, string, error) {
	prod, err := producer.New(c.Producer)
	if err != nil {
		return nil, "", err
	}
	cons, err := consumer.New(c.Consumer)
	if err != nil {
		return nil, "", err
	}
	defer cons.Close()
	plan, err := campaign.NewPlan(prod, c.Target, nil, cons)
	var u *campaign.UnsupportedError
	if errors.As(err, &u) {
		return nil, u.Reason, nil
	}
	return plan, "", err
}

// Config selects a matrix run.
type Config struct {
	Targets              []target.Target
	Producers, Consumers []string
	Patterns             []string // nil: every pattern of each target
	Programs             int      // per target x producer x pattern, checked by every consumer
	Seed                 int64
	Workers              int
	List                 *deviation.List
	Progress             io.Writer // nil: quiet
}

// Report is a matrix run's result.
type Report struct {
	Config  Config
	Cells   []*CellReport // in target, producer, consumer order
	Elapsed time.Duration
}

// CellReport is one cell: unsupported with its reason, or its outcome.
type CellReport struct {
	Cell
	Unsupported string
	// Unexpressed are the patterns the producer's version cannot express
	// on the target, with the reason: not run.
	Unexpressed map[string]string
	// Skipped are the patterns the consumer cannot be judged on
	// (consumer.PatternLimit), with the reason: not run.
	Skipped map[string]string
	Outcome *Outcome
	Seconds float64
}

// OK reports whether every cell is clean, unsupported or expected.
func (r *Report) OK() bool {
	for _, c := range r.Cells {
		if c.Outcome != nil && !c.Outcome.OK() {
			return false
		}
	}
	return true
}

// unit is one target x producer x pattern: its programs are made once and
// checked by every consumer the producer meets on the target.
type unit struct {
	target  target.Target
	prod    string
	pattern string
	cells   []*CellReport
}

// Run runs the matrix.
func Run(cfg Config) (*Report, error) {
	start := time.Now()
	rep := &Report{Config: cfg}
	var units []*unit
	tallies := map[*CellReport]*Tally{}
	for _, t := range cfg.Targets {
		patterns := gen.Patterns(t)
		if cfg.Patterns != nil {
			patterns = slices.DeleteFunc(slices.Clone(patterns), func(p string) bool { return !slices.Contains(cfg.Patterns, p) })
		}
		for _, p := range cfg.Producers {
			var live []*CellReport
			var mix campaign.Mix // the producer's on t: the same for every consumer
			for _, c := range cfg.Consumers {
				cr := &CellReport{Cell: Cell{Target: t, Producer: p, Consumer: c}, Unexpressed: map[string]string{}, Skipped: map[string]string{}}
				rep.Cells = append(rep.Cells, cr)
				plan, why, err := planCell(cr.Cell)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", cr.Cell, err)
				}
				if why != "" {
					cr.Unsupported = why
					continue
				}
				tallies[cr] = NewTally(cr.Cell)
				live = append(live, cr)
				mix = plan.Mix
			}
			if len(live) == 0 {
				continue
			}
			for _, pat := range patterns {
				if err := mix.Cannot(t, pat); err != nil {
					for _, cr := range live {
						cr.Unexpressed[pat] = err.Error()
					}
					continue
				}
				u := &unit{target: t, prod: p, pattern: pat}
				for _, cr := range live {
					if why := consumer.PatternLimit(cr.Consumer, pat); why != "" {
						cr.Skipped[pat] = why
						continue
					}
					u.cells = append(u.cells, cr)
				}
				if len(u.cells) > 0 {
					units = append(units, u)
				}
			}
		}
	}
	var (
		mu       sync.Mutex
		firstErr error
		done     int
	)
	campaign.Each(cfg.Workers, nil, units, func(w *campaign.Worker, u *unit) {
		err := runUnit(cfg, w, u, tallies, &mu)
		mu.Lock()
		defer mu.Unlock()
		done++
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "[%d/%d] %s %s %s (%s)\n", done, len(units), u.target.Name(), u.prod, u.pattern, time.Since(start).Round(time.Second))
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	for _, cr := range rep.Cells {
		if t := tallies[cr]; t != nil {
			cr.Outcome = Classify(t, cfg.List)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// runUnit makes a unit's programs once (one batch: a toolchain's in one
// assembler and one linker run) and checks each with every consumer of
// the unit, with attribution, into a tally per cell that it then adds to
// the run's.
func runUnit(cfg Config, w *campaign.Worker, u *unit, tallies map[*CellReport]*Tally, mu *sync.Mutex) error {
	seeds := Seeds(cfg.Seed, cfg.Programs)
	sink := unitSink{pattern: u.pattern, tallies: map[*campaign.Cell]*Tally{}}
	cells := make([]*campaign.Cell, len(u.cells))
	for i, cr := range u.cells {
		cells[i] = campaign.NewCell(u.target, u.prod, cr.Consumer)
		sink.tallies[cells[i]] = NewTally(cr.Cell)
	}
	w.RunCells(campaign.Config{Seeds: seeds, Patterns: []string{u.pattern}, Batch: len(seeds), Attribute: true}, cells, sink)
	mu.Lock()
	defer mu.Unlock()
	for i, cr := range u.cells {
		if err := cells[i].Err; err != nil {
			return fmt.Errorf("%s: %w", cr.Cell, err)
		}
		if cells[i].Status == "unsupported" {
			return fmt.Errorf("%s: pattern %s: unsupported (%s) after planning", cr.Cell, u.pattern, cells[i].Reason)
		}
		tallies[cr].Merge(sink.tallies[cells[i]])
		cr.Seconds += cells[i].Seconds
	}
	return nil
}

// unitSink adds a unit's programs to its cells' tallies.
type unitSink struct {
	pattern string
	tallies map[*campaign.Cell]*Tally // one per cell, each written by one worker
}

func (s unitSink) Program(c *campaign.Checked) string {
	s.tallies[c.Cell].Add(c.Program, c.Result, s.pattern)
	return ""
}
func (unitSink) Note(*campaign.Cell, string) {}
func (unitSink) CellDone(*campaign.Cell)     {}

// Patterns lists the patterns a report's cells ran, sorted.
func (r *Report) Patterns() []string {
	seen := map[string]bool{}
	for _, t := range r.Config.Targets {
		for _, p := range gen.Patterns(t) {
			if r.Config.Patterns == nil || slices.Contains(r.Config.Patterns, p) {
				seen[p] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
