package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
)

func init() {
	register("run", "check generated programs on emulated targets (the main job)", cmdRun)
}

// Defaults of the main job: what `make run` covers.
const (
	defaultProducers = "builtin-v2,builtin-v3"
	defaultConsumers = "builtin"
	defaultPrograms  = 5000
	// defaultBatch: a batch of 64 programs takes one assembler and one
	// linker run of a few tens of milliseconds (BenchmarkProducers).
	defaultBatch = 64
)

const runUsage = `usage: sfconform run [--targets LIST] [--producer LIST] [--consumer LIST] [--patterns LIST]
                     [--programs N] [--paths N] [--seed N] [--batch N] [-j N] [--shard I/N]
                     [--out DIR] [--json] [--junit FILE] [--html DIR] [--cbf-stats] [-q]
                     [--no-minimize] [--minimize-attempts N] [--minimize-time D]
       sfconform run --list
       sfconform run --replay FILE [--consumer NAME] [--trust-exec]

Generates programs for each target, has each producer make their SFrame
section, runs them on the emulator and at every executed instruction
judges each consumer's backtrace against the machine. One cell per
target x producer x consumer; a pair that cannot meet on a target (the
producer emits no SFrame for it, or the consumer does not read that
version) is listed as "unsupported (reason)", not as a failure.

Every section is also validated against the rules strict consumers apply;
a section that breaks one counts as INVALID. Each failing program is saved
as a reproducer under --out.

A toolchain producer (gas-2.47, llvm-mc-23, gas:DIR) assembles and links
--batch programs at once. Its rows are also compared, at every executed
instruction, with sfconform's own encoding of the same program: "differs"
counts the steps where they differ, "equiv" those of them where the frames
that row gives (this frame's CFA, the caller's PC, SP and FP) match the
machine. The "version" column names the exact Debian packages the cell ran.

A consumer named exec:COMMAND is any program speaking the unwind protocol
(docs/consumer-protocol.md) on its standard input and output, started with
/bin/sh -c COMMAND (COMMAND cannot contain a comma). Each batch of up to
256 steps must be answered within 10s (SFCONFORM_CONSUMER_TIMEOUT), a line
may be at most 1 MiB; a consumer that breaks the protocol, crashes or
hangs fails its batch (every step ERROR, with what it printed), is killed
and started again, and after 5 failed batches in a row is given up on for
the cell. --replay runs the exec: command a reproducer names only when
--consumer names the same command or --trust-exec is given.

Program i of a cell uses seed S+i, S being --seed (default: from the
clock, printed on stderr). --shard i/n checks the i-th of n parts of them
(blocks of --batch programs dealt out in turn); 'sfconform merge' joins
the n JSON summaries. --html DIR and --junit FILE also write the reports.
Output places (--out, --junit, --html) are checked before the run starts.
Exit status: 0 all clean, 1 failures, 2 bad usage or setup, a failure that
could not be saved as a reproducer, or nothing checked (every cell
unsupported).
`

// runConfig is what the run flags select.
type runConfig struct {
	programs  int
	paths     int
	patterns  []string // nil: the default mix
	targets   []target.Target
	producers []string
	consumers []string
	seed      int64
	out       string
	workers   int
	batch     int
	quiet     bool
	json      bool
	// What happens to a failing program before it is saved (repro_save.go).
	minimize minimizeConfig
	// backtraces, with --cbf-stats, counts the judged backtraces per worker.
	backtraces *backtraceCount
	// shard, with --shard i/n: the part of every cell's seeds this run
	// checks.
	shard campaign.Shard
	// reports: --junit FILE and --html DIR (junit.go, html.go).
	junit, html string
	// progress reports on stderr (nil with -q).
	progress *progress
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", runUsage, stderr)
	cfg := runConfig{}
	fs.IntVar(&cfg.programs, "programs", defaultPrograms, "programs per cell")
	fs.IntVar(&cfg.paths, "paths", gen.DefaultPaths, "runs per program, each with its own argument vector (its own branches)")
	patterns := fs.String("patterns", "", "comma-separated patterns to build programs from (default: every pattern each cell's SFrame version expresses; see 'sfconform patterns')")
	targets := fs.String("targets", "all", "comma-separated targets: "+targetNames()+", or all")
	producers := fs.String("producer", defaultProducers, "comma-separated producers (see --list)")
	consumers := fs.String("consumer", defaultConsumers, "comma-separated consumers (see --list)")
	var seed seedFlag
	fs.Var(&seed, "seed", "first seed, an integer (default: from the clock, printed on stderr)")
	trust := fs.Bool("trust-exec", false, "with --replay: run the exec: command the reproducer names")
	fs.StringVar(&cfg.out, "out", "failures", "directory for failure reproducers")
	fs.IntVar(&cfg.workers, "j", runtime.NumCPU(), "parallel workers (one emulator each)")
	fs.IntVar(&cfg.batch, "batch", defaultBatch, "programs a toolchain producer assembles and links at once")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&cfg.json, "json", false, "write the summary as JSON on stdout instead of a table")
	list := fs.Bool("list", false, "list producers and consumers and what each supports, then exit")
	replay := fs.String("replay", "", "replay one saved failure file and report whether it still fails")
	minimizeFlags(fs, &cfg.minimize)
	shard := fs.String("shard", "", "check only part i of n of every cell's seeds (i/n, 1 <= i <= n); 'sfconform merge' joins the n summaries")
	fs.StringVar(&cfg.junit, "junit", "", "also write a JUnit XML report to this file: a testcase per target x producer x consumer x pattern")
	fs.StringVar(&cfg.html, "html", "", "also write an HTML report (index.html) into this directory")
	cbfStats := fs.Bool("cbf-stats", false, "also measure what every judged backtrace takes to store: CBF against 8 bytes a frame")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "sfconform run:", err)
		return exitSetup
	}
	var err error
	if cfg.producers, err = splitNames(*producers, producer.New); err != nil {
		return fail(err)
	}
	if cfg.consumers, err = splitNames(*consumers, consumer.New); err != nil {
		return fail(err)
	}
	if *list {
		return listPlugins(stdout)
	}
	if *replay != "" {
		return replayCase(*replay, *consumers, *trust, stdout, stderr)
	}
	if cfg.targets, err = parseTargets(*targets); err != nil {
		return fail(err)
	}
	cfg.seed = seed.or(time.Now().UnixNano() & 0x7fffffff)
	if *patterns != "" {
		cfg.patterns = strings.Split(*patterns, ",")
		for _, p := range cfg.patterns {
			if !slices.ContainsFunc(gen.Catalog(), func(i gen.PatternInfo) bool { return i.Name == p }) {
				return fail(fmt.Errorf("--patterns: no pattern %q (see 'sfconform patterns')", p))
			}
		}
	}
	if cfg.programs < 1 || cfg.workers < 1 || cfg.paths < 1 || cfg.batch < 1 {
		return fail(errors.New("--programs, --paths, --batch and -j must be at least 1"))
	}
	if *cbfStats {
		cfg.backtraces = &backtraceCount{}
	}
	if *shard != "" {
		if cfg.shard, err = campaign.ParseShard(*shard); err != nil {
			return fail(err)
		}
	}
	if err := checkOutputs(cfg.out, cfg.junit, cfg.html); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "sfconform run: seed %d, %d programs x %d paths per cell, producers %s, consumers %s\n",
		cfg.seed, cfg.programs, cfg.paths, strings.Join(cfg.producers, ","), strings.Join(cfg.consumers, ","))
	if cfg.shard.Count > 0 {
		fmt.Fprintf(stderr, "sfconform run: shard %s: blocks of %d programs\n", cfg.shard, cfg.batch)
	}
	if !cfg.quiet {
		cfg.progress = newProgress(stderr, isTerminal(stderr), time.Now, len(cfg.targets)*len(cfg.producers)*len(cfg.consumers),
			len(cfg.shard.Seeds(cfg.seed, cfg.programs, cfg.batch)))
	}
	cells, unsaved := runCells(cfg, stderr)
	if cfg.progress != nil {
		cfg.progress.finish()
	}
	sum := summary{Seed: cfg.seed, Programs: cfg.programs, Paths: cfg.paths, Cells: cells, Backtraces: cbfFigure(cfg),
		Batch: cfg.batch, PatternsAsked: cfg.patterns}
	if cfg.shard.Count > 0 {
		sum.Shard = &cfg.shard
	}
	// The consumers were named on this command line: the report may
	// replay their reproducers.
	if err := writeReports(&sum, cfg.junit, cfg.html, repro.Consent{Given: cfg.consumers}, stderr); err != nil {
		return fail(err)
	}
	if cfg.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return fail(err)
		}
	} else {
		printSummary(stdout, cells)
		printCBFFigure(stdout, cfg)
	}
	code := exitOK
	checked := false
	for _, c := range cells {
		checked = checked || c.Status != "unsupported"
		switch c.Status {
		case "error":
			fmt.Fprintf(stderr, "%s %s x %s: setup error: %v\n", c.Target, c.Producer, c.Consumer, c.Err)
			code = exitSetup
		case "failed":
			if code == exitOK {
				code = exitFailure
			}
		}
		if !cfg.json {
			for _, p := range c.Saved {
				fmt.Fprintln(stderr, "saved", p)
			}
		}
	}
	if !checked {
		fmt.Fprintln(stderr, "sfconform run: nothing was checked: every cell is unsupported (see the reasons above, and --list)")
		code = exitSetup
	}
	if unsaved > 0 {
		fmt.Fprintf(stderr, "sfconform run: %d failing program(s) could not be saved as reproducers under %s (see the errors above)\n", unsaved, cfg.out)
		code = exitSetup
	}
	return code
}

func targetNames() string {
	var n []string
	for _, t := range target.All {
		n = append(n, t.Name())
	}
	return strings.Join(n, ", ")
}

func parseTargets(s string) ([]target.Target, error) {
	if s == "all" {
		return target.All, nil
	}
	var out []target.Target
	for _, n := range strings.Split(s, ",") {
		t, err := target.Parse(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// splitNames splits a comma-separated list of plug-in names and checks
// each by making it once.
func splitNames[T interface{ Name() string }](s string, mk func(string) (T, error)) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		p, err := mk(n)
		if err != nil {
			return nil, err
		}
		if c, ok := any(p).(interface{ Close() error }); ok {
			c.Close()
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list %q", s)
	}
	return out, nil
}
