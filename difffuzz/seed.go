package difffuzz

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Producers are the producers whose output seeds the fuzzing: sfconform's
// own encoder in both versions and every provisioned toolchain series.
// The builtin-vN+layouts ones are sfconform's encoder with every section
// layout its version can write (layoutseeds.go).
var Producers = []string{"builtin-v2", "builtin-v3", "gas-2.40", "gas-2.44", "gas-2.47", "llvm-mc-23",
	"builtin-v2" + LayoutSuffix, "builtin-v3" + LayoutSuffix}

// SeedOptions says how many programs make the seed cases.
type SeedOptions struct {
	// Programs per producer and target: a toolchain assembles and links
	// them as one batch, so they share one section (one case); the
	// builtin encoder gives each its own section (one case each).
	Programs int
	// Steps is how many machine states each case keeps at most, spread
	// evenly over the runs of its programs.
	Steps int
	// Seed is the first generator seed.
	Seed int64
}

// DefaultSeedOptions keep sections small (the fuzzer mutates them whole)
// and the cases quick to ask.
var DefaultSeedOptions = SeedOptions{Programs: 3, Steps: 24, Seed: 1}

// Seeds makes the seed cases: for every producer and every target it
// writes SFrame for, its sections for a few generated programs, with
// machine states recorded while the programs ran under the emulator. A
// producer whose toolchain is not
// provisioned is left out, and its error (wrapping
// toolchain.ErrNotProvisioned, with the setup step) returned with the
// cases of the others.
func Seeds(names []string, opt SeedOptions) ([]*Case, error) {
	var out []*Case
	var missing []error
	pool := campaign.NewWorker(harness.Options{})
	defer pool.Close()
	for _, name := range names {
		if lp, ok := layoutProducer(name); ok {
			for _, tg := range target.All {
				cases, err := layoutSeedsOf(pool, name, lp, tg, opt)
				if err != nil {
					return nil, err
				}
				out = append(out, cases...)
			}
			continue
		}
		prod, err := producer.New(name)
		if errors.Is(err, toolchain.ErrNotProvisioned) {
			missing = append(missing, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, tg := range target.All {
			v, err := prod.SFrameVersion(tg)
			if err != nil {
				continue // the producer writes no SFrame for tg
			}
			cases, err := seedsOf(pool, prod, tg, v, opt)
			if err != nil {
				return nil, err
			}
			out = append(out, cases...)
		}
	}
	if len(missing) > 0 {
		return out, errors.Join(missing...)
	}
	return out, nil
}

// seedsOf makes the cases of one producer and target.
func seedsOf(pool *campaign.Worker, prod producer.Producer, tg target.Target, v int, opt SeedOptions) ([]*Case, error) {
	seeds := make([]int64, opt.Programs)
	for i := range seeds {
		seeds[i] = opt.Seed + int64(i)
	}
	checker, err := pool.Checker(tg)
	if err != nil {
		return nil, err
	}
	var out []*Case
	var cur *Case
	var states [][]*machine.Snapshot
	flush := func() {
		if cur != nil {
			cur.Steps = spread(states, opt.Steps)
			out = append(out, cur)
		}
		cur, states = nil, nil
	}
	for _, p := range campaign.ProduceBatch(prod, tg, seeds, gen.Options{}) {
		if p.Err != nil {
			return nil, fmt.Errorf("seed %s on %s, program %d: %w", prod.Name(), tg.Name(), p.Seed, p.Err)
		}
		img := p.Img
		// The images of a toolchain's batch share its linked section.
		if cur == nil || cur.Addr != img.SFrameAddr || !bytes.Equal(cur.Section, img.SFrame) {
			flush()
			cur = &Case{
				Name:    fmt.Sprintf("%s/%s/v%d/seed%d", prod.Name(), tg.Name(), v, p.Seed),
				Target:  tg,
				Addr:    img.SFrameAddr,
				Section: bytes.Clone(img.SFrame),
			}
		}
		rec := &recorder{Builtin: consumer.NewBuiltin()}
		// The verdicts do not matter: a seed is what the producer wrote,
		// its known faults included (they make interesting sections).
		if res := checker.Check(img, rec); res.RunErr != nil {
			return nil, fmt.Errorf("seed %s on %s, program %d: the run stopped: %w", prod.Name(), tg.Name(), p.Seed, res.RunErr)
		}
		states = append(states, rec.states)
	}
	flush()
	return out, nil
}

// spread takes at most n states from the runs, evenly spaced within each
// run and the runs sharing n alike, so that every program contributes
// states from its whole run (entry, deep calls, returns).
func spread(runs [][]*machine.Snapshot, n int) []*machine.Snapshot {
	var out []*machine.Snapshot
	per := max(1, n/max(1, len(runs)))
	for _, r := range runs {
		if len(r) <= per {
			out = append(out, r...)
			continue
		}
		for k := 0; k < per; k++ {
			out = append(out, r[k*len(r)/per])
		}
	}
	return out
}

// recorder is the builtin consumer taking batches, so that the harness
// hands it serialisable snapshots, which it keeps.
type recorder struct {
	*consumer.Builtin
	states []*machine.Snapshot
}

func (r *recorder) Name() string   { return "builtin" }
func (r *recorder) BatchSize() int { return 64 }

func (r *recorder) Load(img *image.Image) error { return r.Builtin.Load(img) }

func (r *recorder) Unwind(steps []consumer.Step, out []consumer.Result) error {
	for _, s := range steps {
		r.states = append(r.states, s.Snapshot)
	}
	return r.Builtin.Unwind(steps, out)
}
