package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/minimize"
	"github.com/sfconform/sfconform/repro"
)

// minimizeConfig is what sfconform run does with a failing program before
// it saves it.
type minimizeConfig struct {
	off      bool
	attempts int
	time     time.Duration
}

func minimizeFlags(fs *flag.FlagSet, m *minimizeConfig) {
	fs.BoolVar(&m.off, "no-minimize", false, "save each failing program as it failed, without minimizing it")
	fs.IntVar(&m.attempts, "minimize-attempts", minimize.DefaultMaxAttempts, "candidates one minimization may check (decides the result)")
	fs.DurationVar(&m.time, "minimize-time", minimize.DefaultMaxTime, "time one minimization may take (a guard; the result says when it struck)")
}

// saveFailure minimizes a failing program (the first failure of its
// result, kept by its signature) with the cell's producer and consumer,
// and saves the reproducer of the smaller program; a failure that does
// not minimize (--no-minimize, a run that stopped, a program that does
// not fail alone) is saved as it failed, with the reason.
func saveFailure(cfg runConfig, k *campaign.Checked, report func(string, ...any)) (string, error) {
	c, chk, cons, p, res := k.Cell, k.Checker, k.Consumer, k.Program, k.Result
	// The worker's checker, whose emulator is warm: the minimization's
	// runs are not the cell's, nor counted in its --cbf-stats.
	defer chk.SetBacktraces(chk.SetBacktraces(nil))
	in := repro.CaseInput{Img: p.Img, Prog: p.Prog, Seed: p.Seed, Consumer: cons, Res: res, Checker: chk}
	switch sig, err := minimize.SignatureOf(p.Img, res); {
	case cfg.minimize.off:
		in.Skipped = "--no-minimize"
	case err != nil:
		in.Skipped = err.Error()
	case p.Prog == nil:
		in.Skipped = "no generated program"
	default:
		path := 0
		if len(res.Failures) > 0 {
			path = res.Failures[0].Path
		}
		m, err := minimize.Minimize(chk, c.Plan().Producer, cons, p.Prog, path, sig,
			minimize.Options{MaxAttempts: cfg.minimize.attempts, MaxTime: cfg.minimize.time})
		if err != nil {
			in.Skipped = err.Error()
			break
		}
		in = repro.CaseInput{Img: m.Img, Prog: m.Prog, Seed: p.Seed, Consumer: cons, Res: m.Res, Failure: m.Failure, Minimization: m.Minimization(), Checker: chk}
		report("minimized %s %s x %s seed %d: %v -> %v (%d attempts, %.2fs)\n", c.Target, c.Producer, c.Consumer, p.Seed,
			m.Original, m.Minimized, m.Attempts, m.Elapsed.Seconds())
	}
	path, err := corpus.Save(cfg.out, repro.NewCase(in))
	if err != nil {
		return "", fmt.Errorf("saving the reproducer: %w", err)
	}
	return path, nil
}
