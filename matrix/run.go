package matrix

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
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

// Produce makes the programs of one pattern for prod on t, one per seed,
// a toolchain's in batches of one assembler and one linker run. A pattern
// that the producer's SFrame version cannot express is a
// *gen.CannotExpressError (unsupported, with the reason), as is any error
// that left every program without an image for the same reason.
func Produce(prod producer.Producer, t target.Target, pattern string, seeds []int64) ([]harness.Produced, error) {
	out := harness.ProduceBatch(prod, t, seeds, gen.Options{Patterns: []string{pattern}})
	var cannot *gen.CannotExpressError
	if len(out) > 0 && errors.As(out[0].Err, &cannot) {
		return nil, cannot
	}
	return out, nil
}

// Pairing says why a cell cannot be checked: "" when it can, else the
// reason (harness.Pairing's), or an error for a plug-in that cannot be made.
func Pairing(c Cell) (string, error) {
	prod, err := producer.New(c.Producer)
	if err != nil {
		return "", err
	}
	cons, err := consumer.New(c.Consumer)
	if err != nil {
		return "", err
	}
	defer cons.Close()
	if err := harness.Pairing(prod, cons, c.Target); err != nil {
		var u *harness.UnsupportedError
		if errors.As(err, &u) {
			return u.Reason, nil
		}
		return "", err
	}
	return "", nil
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
			for _, c := range cfg.Consumers {
				cr := &CellReport{Cell: Cell{Target: t, Producer: p, Consumer: c}, Unexpressed: map[string]string{}, Skipped: map[string]string{}}
				rep.Cells = append(rep.Cells, cr)
				why, err := Pairing(cr.Cell)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", cr.Cell, err)
				}
				if why != "" {
					cr.Unsupported = why
					continue
				}
				tallies[cr] = NewTally(cr.Cell)
				live = append(live, cr)
			}
			if len(live) == 0 {
				continue
			}
			for _, pat := range patterns {
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
		wg       sync.WaitGroup
		done     int
	)
	work := make(chan *unit)
	for w := 0; w < max(cfg.Workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkers := harness.NewPool(harness.Options{})
			defer checkers.Close()
			conses := map[string]consumer.Consumer{}
			defer func() {
				for _, c := range conses {
					c.Close()
				}
			}()
			for u := range work {
				err := runUnit(cfg, u, checkers, conses, tallies, &mu)
				mu.Lock()
				done++
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%d/%d] %s %s %s (%s)\n", done, len(units), u.target.Name(), u.prod, u.pattern, time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		}()
	}
	for _, u := range units {
		work <- u
	}
	close(work)
	wg.Wait()
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

func runUnit(cfg Config, u *unit, checkers *harness.Pool, conses map[string]consumer.Consumer, tallies map[*CellReport]*Tally, mu *sync.Mutex) error {
	prod, err := producer.New(u.prod)
	if err != nil {
		return err
	}
	produced, err := Produce(prod, u.target, u.pattern, Seeds(cfg.Seed, cfg.Programs))
	var cannot *gen.CannotExpressError
	if errors.As(err, &cannot) {
		mu.Lock()
		for _, cr := range u.cells {
			cr.Unexpressed[u.pattern] = cannot.Error()
		}
		mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	chk, err := checkers.Get(u.target)
	if err != nil {
		return err
	}
	for _, cr := range u.cells {
		cons := conses[cr.Consumer]
		if cons == nil {
			if cons, err = consumer.New(cr.Consumer); err != nil {
				return err
			}
			conses[cr.Consumer] = cons
		}
		start := time.Now()
		t := NewTally(cr.Cell)
		for _, p := range produced {
			if err := t.Add(chk, cons, p, u.pattern); err != nil {
				return err
			}
		}
		mu.Lock()
		tallies[cr].Merge(t)
		cr.Seconds += time.Since(start).Seconds()
		mu.Unlock()
	}
	return nil
}

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
