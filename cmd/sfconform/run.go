package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/sframe"
)

func init() {
	register("run", "check generated programs on emulated targets (the main job); --replay FILE replays a failure", cmdRun)
}

// runConfig is what the run flags select.
type runConfig struct {
	programs int
	targets  []sframe.ABI
	versions []sframe.Version
	seed     int64
	consumer string
	out      string
	workers  int
	quiet    bool
}

// job is one target x version cell of the summary.
type job struct {
	abi      sframe.ABI
	version  sframe.Version
	programs int
	steps    int
	counts   [4]int
	failed   int // programs with a failure or a run error
	saved    []string
	setupErr error
	elapsed  time.Duration
}

func cmdRun(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	cfg := runConfig{}
	fs.IntVar(&cfg.programs, "programs", 10000, "programs per target and version")
	targets := fs.String("targets", "all", "comma-separated targets: x86-64, aarch64, aarch64_be, s390x, or all")
	versions := fs.String("versions", "2,3", "comma-separated SFrame versions for the builtin producer")
	fs.Int64Var(&cfg.seed, "seed", 0, "first seed; program i uses seed+i (0 = from the clock, printed)")
	fs.StringVar(&cfg.consumer, "consumer", "builtin", "consumer under test: "+strings.Join(consumer.Names(), ", "))
	fs.StringVar(&cfg.out, "out", "failures", "directory for failure reproducers")
	fs.IntVar(&cfg.workers, "j", runtime.NumCPU(), "parallel workers (one emulator each)")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress on stderr")
	replay := fs.String("replay", "", "replay one saved failure file and report whether it still fails")
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		return exitSetup
	}
	if *replay != "" {
		return replayCase(*replay, cfg.consumer, os.Stdout)
	}
	var err error
	if cfg.targets, err = parseTargets(*targets); err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run:", err)
		return exitSetup
	}
	if cfg.versions, err = parseVersions(*versions); err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run:", err)
		return exitSetup
	}
	if _, err := consumer.New(cfg.consumer); err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run:", err)
		return exitSetup
	}
	if cfg.seed == 0 {
		cfg.seed = time.Now().UnixNano() & 0x7fffffff
	}
	if cfg.programs < 1 || cfg.workers < 1 {
		fmt.Fprintln(os.Stderr, "sfconform run: --programs and -j must be at least 1")
		return exitSetup
	}
	fmt.Fprintf(os.Stderr, "sfconform run: seed %d, %d programs per target x version, consumer %s\n", cfg.seed, cfg.programs, cfg.consumer)
	jobs := runJobs(cfg)
	printSummary(os.Stdout, jobs)
	code := exitOK
	for _, j := range jobs {
		switch {
		case j.setupErr != nil:
			fmt.Fprintf(os.Stderr, "%s v%d: setup error: %v\n", j.abi.Name(), j.version, j.setupErr)
			code = exitSetup
		case j.failed > 0 && code == exitOK:
			code = exitFailure
		}
		for _, p := range j.saved {
			fmt.Fprintln(os.Stderr, "saved", p)
		}
	}
	return code
}

func parseTargets(s string) ([]sframe.ABI, error) {
	if s == "all" {
		return sframe.Targets, nil
	}
	var out []sframe.ABI
	for _, n := range strings.Split(s, ",") {
		a, err := sframe.ParseTarget(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func parseVersions(s string) ([]sframe.Version, error) {
	var out []sframe.Version
	for _, n := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v < 2 || v > 3 {
			return nil, fmt.Errorf("SFrame version %q: the builtin producer writes 2 or 3", n)
		}
		out = append(out, sframe.Version(v))
	}
	return out, nil
}

// runJobs spreads target x version cells over the workers; each worker
// owns one emulator per target it meets.
func runJobs(cfg runConfig) []*job {
	var jobs []*job
	for _, a := range cfg.targets {
		for _, v := range cfg.versions {
			jobs = append(jobs, &job{abi: a, version: v})
		}
	}
	work := make(chan *job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkers := harness.NewPool(harness.Options{})
			defer checkers.Close()
			for j := range work {
				chk, err := checkers.Get(j.abi)
				if err != nil {
					j.setupErr = err
					continue
				}
				runJob(cfg, j, chk, &mu)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	return jobs
}

func runJob(cfg runConfig, j *job, chk *harness.Checker, mu *sync.Mutex) {
	cons, err := consumer.New(cfg.consumer)
	if err != nil {
		j.setupErr = err
		return
	}
	defer cons.Close()
	start := time.Now()
	for i := 0; i < cfg.programs; i++ {
		seed := cfg.seed + int64(i)
		img, prog, err := harness.BuiltinImage(j.abi, j.version, seed, gen.Options{})
		if err != nil {
			j.setupErr = fmt.Errorf("seed %d: %w", seed, err)
			return
		}
		res := chk.Check(img, cons)
		j.programs++
		j.steps += res.Steps
		for v := range res.Counts {
			j.counts[v] += res.Counts[v]
		}
		if !res.Clean() {
			j.failed++
			if path, err := corpus.Save(cfg.out, harness.NewCase(img, prog, seed, cons.Name(), res)); err != nil {
				fmt.Fprintf(os.Stderr, "%s v%d seed %d: saving the failure: %v\n", j.abi.Name(), j.version, seed, err)
			} else {
				j.saved = append(j.saved, path)
			}
			if !cfg.quiet {
				mu.Lock()
				fmt.Fprintf(os.Stderr, "FAIL %s v%d seed %d: %s\n", j.abi.Name(), j.version, seed, describe(res))
				mu.Unlock()
			}
		}
		if !cfg.quiet && (i+1)%2500 == 0 {
			mu.Lock()
			fmt.Fprintf(os.Stderr, "%s v%d: %d/%d programs, %d instructions\n", j.abi.Name(), j.version, i+1, cfg.programs, j.steps)
			mu.Unlock()
		}
	}
	j.elapsed = time.Since(start)
}

func describe(res *harness.Result) string {
	switch {
	case res.LoadErr != nil:
		return "consumer refused the section: " + res.LoadErr.Error()
	case len(res.Failures) > 0:
		f := res.Failures[0]
		return fmt.Sprintf("step %d at %s (%s): %s %s", f.Step, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail)
	case res.RunErr != nil:
		return "run stopped: " + res.RunErr.Error()
	}
	return "clean"
}

func printSummary(w io.Writer, jobs []*job) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tversion\tprograms\tinstructions\tOK\tWRONG\tNOINFO\tERROR\tfailed programs\tinstr/s\t")
	for _, j := range jobs {
		rate := 0.0
		if j.elapsed > 0 {
			rate = float64(j.steps) / j.elapsed.Seconds()
		}
		fmt.Fprintf(tw, "%s\tv%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t\n", j.abi.Name(), j.version, j.programs, j.steps,
			j.counts[oracle.OK], j.counts[oracle.Wrong], j.counts[oracle.NoInfo], j.counts[oracle.Error], j.failed, rate)
	}
	tw.Flush()
}

// replayCase re-runs a saved failure on the consumer it names (or the one
// given) and says whether the recorded step still fails.
func replayCase(path, consName string, w io.Writer) int {
	c, err := corpus.Load(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run --replay:", err)
		return exitSetup
	}
	img, err := c.Image()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sfconform run --replay: %s: %v\n", path, err)
		return exitSetup
	}
	if c.Consumer != "" {
		consName = c.Consumer
	}
	cons, err := consumer.New(consName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run --replay:", err)
		return exitSetup
	}
	defer cons.Close()
	chk, err := harness.New(img.ABI, harness.Options{MaxFailures: 1 << 30})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sfconform run --replay:", err)
		return exitSetup
	}
	defer chk.Close()
	res := chk.Check(img, cons)
	fmt.Fprintf(w, "replay %s: %s, %s, producer %s, consumer %s, seed %d\n", path, c.Target, "SFrame v"+strconv.Itoa(c.Version), c.Producer, consName, c.Seed)
	fmt.Fprintf(w, "recorded: step %d at %s (%s): %s %s\n", c.Step, c.Function, c.Insn, c.Verdict, c.Detail)
	for i := range res.Failures {
		f := &res.Failures[i]
		if f.Step != c.Step {
			continue
		}
		fmt.Fprintf(w, "now:      step %d at %s (%s): %s %s\n%s", f.Step, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail,
			oracle.FormatFrames(f.Expected, f.Got))
		return exitFailure
	}
	switch {
	case res.LoadErr != nil:
		fmt.Fprintf(w, "now:      consumer refused the section: %v\n", res.LoadErr)
		return exitFailure
	case res.RunErr != nil:
		fmt.Fprintf(w, "now:      run stopped: %v\n", res.RunErr)
		return exitFailure
	case !res.Clean():
		fmt.Fprintf(w, "now:      the recorded step passes, but %d other steps fail (first: step %d, %s)\n",
			res.Counts[1]+res.Counts[2]+res.Counts[3], res.Failures[0].Step, res.Failures[0].Judgement.Detail)
		return exitFailure
	}
	fmt.Fprintf(w, "now:      all %d steps conform: the failure no longer reproduces\n", res.Steps)
	return exitOK
}
