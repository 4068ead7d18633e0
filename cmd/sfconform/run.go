package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
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

const runUsage = `usage: sfconform run [flags]
       sfconform run --list
       sfconform run --replay FILE

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

Program i of a cell uses seed S+i, S being --seed (default: from the
clock, printed on stderr). --shard i/n checks the i-th of n parts of them
(blocks of --batch programs dealt out in turn); 'sfconform merge' joins
the n JSON summaries. --html DIR and --junit FILE also write the reports.
Exit status: 0 all clean, 1 failures, 2 bad usage or setup.
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
	// checks (shard.go).
	shard shardSpec
	// reports: --junit FILE and --html DIR (junit.go, html.go).
	junit, html string
	// progress reports on stderr (nil with -q).
	progress *progress
}

// cell is one target x producer x consumer of the summary.
type cell struct {
	Target        string         `json:"target"`
	Producer      string         `json:"producer"`
	Consumer      string         `json:"consumer"`
	SFrameVersion int            `json:"sframe_version,omitempty"`
	Status        string         `json:"status"` // clean, failed, unsupported, error
	Reason        string         `json:"reason,omitempty"`
	Programs      int            `json:"programs"`
	Instructions  int            `json:"instructions"`
	Verdicts      map[string]int `json:"verdicts"` // steps per verdict; INVALID counts programs
	Failed        int            `json:"failed_programs"`
	Saved         []string       `json:"reproducers,omitempty"`
	Seconds       float64        `json:"seconds"`

	// Unexpressed are the target's patterns the cell's SFrame version
	// cannot express: left out of its mix, unsupported rather than failed
	// (the reasons: sfconform patterns).
	Unexpressed []string `json:"unsupported_patterns,omitempty"`
	// Beyond are the patterns a toolchain cell's version cannot express
	// that are in its mix all the same: what the toolchain does with such
	// CFI (skip the function, warn, write a wrong row) is its result.
	Beyond []string `json:"patterns_beyond_version,omitempty"`
	// Limited are the patterns of the mix a toolchain producer's tools
	// cannot make as the pattern asks, and why (producer.Limited: ld
	// describes no AArch64 .plt, so plt-stubs keeps gen's stubs).
	Limited map[string]string `json:"patterns_limited,omitempty"`
	// UnexpressedWhy says why the Unexpressed patterns are left out.
	UnexpressedWhy string `json:"unsupported_patterns_why,omitempty"`

	// ProducerVersion names the exact tools a toolchain producer ran
	// ("as 2.47.50.20261021 (Debian sid 2.47.50.20261021-1), ld ...");
	// Packages is the short form the table shows.
	ProducerVersion string `json:"producer_version,omitempty"`
	Packages        string `json:"producer_packages,omitempty"`
	// WrongFields counts the WRONG steps by the field that first differed.
	WrongFields map[string]int `json:"wrong_by_field,omitempty"`
	// AtOutermost counts the failing steps (per verdict) whose frames are
	// all right below the outermost one, where the backtrace went wrong.
	AtOutermost map[string]int `json:"failing_at_outermost,omitempty"`
	// The differential, for toolchain producers: steps whose row differs
	// from sfconform's own encoding of the program, and of those the ones
	// whose frames the oracle found right ("differs, equivalent").
	Differs    *differs `json:"differs,omitempty"`
	Warned     int      `json:"programs_with_warnings,omitempty"`   // programs the producer's tools warned about
	ToolFailed int      `json:"producer_failed_programs,omitempty"` // programs the tools could not make an image of
	// ByPattern: per pattern, the programs with a function of it and the
	// failures in such a function (patterns_result.go); the JUnit report's
	// testcases.
	ByPattern map[string]*patternResult `json:"by_pattern,omitempty"`

	target    target.Target
	prod      producer.Producer
	counts    [verdict.Count]int
	setupErr  error
	firstDiff string
}

// differs is a cell's differential.
type differs struct {
	Steps      int    `json:"steps"`
	Equivalent int    `json:"equivalent"`
	First      string `json:"first,omitempty"`
}

// summary is what --json writes.
type summary struct {
	Seed     int64   `json:"seed"`
	Programs int     `json:"programs_per_cell"`
	Paths    int     `json:"paths_per_program"`
	Cells    []*cell `json:"cells"`
	// Backtraces, with --cbf-stats: the stored size of every judged
	// backtrace, CBF against 8 bytes a frame.
	Backtraces *backtraceFigure `json:"backtraces,omitempty"`
	// What 'sfconform merge' checks the shards agree on: the part this
	// run checked (--shard), the batch size that cuts the parts, and the
	// patterns asked for (nil: each cell's default mix).
	Shard         *shardSpec `json:"shard,omitempty"`
	Batch         int        `json:"batch,omitempty"`
	PatternsAsked []string   `json:"patterns_asked,omitempty"`
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
	seedText := fs.String("seed", "", "first seed, any integer (default: from the clock)")
	fs.StringVar(&cfg.out, "out", "failures", "directory for failure reproducers")
	fs.IntVar(&cfg.workers, "j", runtime.NumCPU(), "parallel workers (one emulator each)")
	fs.IntVar(&cfg.batch, "batch", defaultBatch, "programs a toolchain producer assembles and links at once")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&cfg.json, "json", false, "write the summary as JSON on stdout instead of a table")
	list := fs.Bool("list", false, "list producers and consumers and what each supports, then exit")
	replay := fs.String("replay", "", "replay one saved failure file and report whether it still fails")
	versions := fs.String("versions", "", "removed: the producer's name says the version (builtin-v2, builtin-v3)")
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
	if *versions != "" {
		return fail(errors.New("--versions is gone: name the producer instead, e.g. --producer builtin-v3"))
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
		return replayCase(*replay, *consumers, stdout, stderr)
	}
	if cfg.targets, err = parseTargets(*targets); err != nil {
		return fail(err)
	}
	if *seedText == "" {
		cfg.seed = time.Now().UnixNano() & 0x7fffffff
	} else if cfg.seed, err = strconv.ParseInt(*seedText, 0, 64); err != nil {
		return fail(fmt.Errorf("--seed %q: not an integer", *seedText))
	}
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
		if cfg.shard, err = parseShard(*shard); err != nil {
			return fail(err)
		}
	}
	fmt.Fprintf(stderr, "sfconform run: seed %d, %d programs x %d paths per cell, producers %s, consumers %s\n",
		cfg.seed, cfg.programs, cfg.paths, strings.Join(cfg.producers, ","), strings.Join(cfg.consumers, ","))
	if cfg.shard.Count > 0 {
		fmt.Fprintf(stderr, "sfconform run: shard %s: blocks of %d programs\n", cfg.shard, cfg.batch)
	}
	if !cfg.quiet {
		cfg.progress = newProgress(stderr, isTerminal(stderr), time.Now, len(cfg.targets)*len(cfg.producers)*len(cfg.consumers),
			len(shardSeeds(cfg.seed, cfg.programs, cfg.batch, cfg.shard)))
	}
	cells := runCells(cfg, stderr)
	if cfg.progress != nil {
		cfg.progress.finish()
	}
	sum := summary{Seed: cfg.seed, Programs: cfg.programs, Paths: cfg.paths, Cells: cells, Backtraces: cbfFigure(cfg),
		Batch: cfg.batch, PatternsAsked: cfg.patterns}
	if cfg.shard.Count > 0 {
		sum.Shard = &cfg.shard
	}
	if err := writeReports(&sum, cfg.junit, cfg.html, stderr); err != nil {
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
	for _, c := range cells {
		switch c.Status {
		case "error":
			fmt.Fprintf(stderr, "%s %s x %s: setup error: %v\n", c.Target, c.Producer, c.Consumer, c.setupErr)
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

// runCells spreads the cells over the workers; each worker owns one
// emulator per target it meets.
func runCells(cfg runConfig, stderr io.Writer) []*cell {
	var cells []*cell
	for _, t := range cfg.targets {
		for _, p := range cfg.producers {
			for _, c := range cfg.consumers {
				cells = append(cells, &cell{Target: t.Name(), Producer: p, Consumer: c, target: t, Verdicts: map[string]int{}})
			}
		}
	}
	work := make(chan *cell)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkers := harness.NewPool(harness.Options{Backtraces: cfg.backtraces.forWorker()})
			defer checkers.Close()
			for c := range work {
				runCell(cfg, c, checkers, &mu, stderr)
			}
		}()
	}
	for _, c := range cells {
		work <- c
	}
	close(work)
	wg.Wait()
	for _, c := range cells {
		for v := verdict.OK; int(v) < verdict.Count; v++ {
			c.Verdicts[v.String()] = c.counts[v]
		}
	}
	return cells
}

func runCell(cfg runConfig, c *cell, checkers *harness.Pool, mu *sync.Mutex, stderr io.Writer) {
	setupErr := func(err error) {
		c.Status, c.Reason, c.setupErr = "error", err.Error(), err
	}
	if cfg.progress != nil {
		defer func() { cfg.progress.cellDone(c.Programs) }()
	}
	prod, err := producer.New(c.Producer)
	if err != nil {
		setupErr(err)
		return
	}
	cons, err := consumer.New(c.Consumer)
	if err != nil {
		setupErr(err)
		return
	}
	defer cons.Close()
	if err := harness.Pairing(prod, cons, c.target); err != nil {
		var u *harness.UnsupportedError
		if errors.As(err, &u) {
			c.Status, c.Reason = "unsupported", u.Reason
			return
		}
		setupErr(err)
		return
	}
	c.prod = prod
	c.SFrameVersion, _ = prod.SFrameVersion(c.target)
	c.Unexpressed = unexpressed(c.target, max(c.SFrameVersion, 2))
	c.UnexpressedWhy = fmt.Sprintf("SFrame v%d cannot express them", c.SFrameVersion)
	if producer.IsToolchain(prod) && c.SFrameVersion < 3 {
		all := c.Unexpressed
		c.Unexpressed = harness.LeftOut(c.target, c.SFrameVersion)
		c.Beyond = slices.DeleteFunc(all, func(n string) bool { return slices.Contains(c.Unexpressed, n) })
		c.UnexpressedWhy = fmt.Sprintf("SFrame v%d cannot reach code more than 4 GiB from .sframe: no linker writes the table", c.SFrameVersion)
	}
	patterns, why := cellPatterns(cfg.patterns, c.target, c.Unexpressed)
	if why != "" {
		c.Status, c.Reason = "unsupported", why
		return
	}
	if l, ok := prod.(producer.Limited); ok {
		for p, why := range l.Limits(c.target) {
			if slices.Contains(patterns, p) || patterns == nil && slices.Contains(gen.Patterns(c.target), p) && !slices.Contains(c.Unexpressed, p) {
				if c.Limited == nil {
					c.Limited = map[string]string{}
				}
				c.Limited[p] = why
			}
		}
	}
	chk, err := checkers.Get(c.target)
	if err != nil {
		setupErr(err)
		return
	}
	toolchain := producer.IsToolchain(prod)
	if toolchain {
		c.Differs = &differs{}
	}
	start := time.Now()
	defer func() { c.Seconds = time.Since(start).Seconds() }()
	name := fmt.Sprintf("%s %s x %s", c.Target, c.Producer, c.Consumer)
	report := func(format string, args ...any) {
		if cfg.progress != nil {
			cfg.progress.printf(format, args...)
		} else if !cfg.quiet {
			mu.Lock()
			fmt.Fprintf(stderr, format, args...)
			mu.Unlock()
		}
	}
	seeds := shardSeeds(cfg.seed, cfg.programs, cfg.batch, cfg.shard)
	stop := make(chan struct{})
	defer close(stop)
	for batch := range harness.ProduceAhead(prod, c.target, seeds, cfg.batch, gen.Options{Paths: cfg.paths, Patterns: patterns}, stop) {
		for _, p := range batch {
			if p.Err != nil {
				var be *producer.BatchError
				if p.Prog == nil || !errors.As(p.Err, &be) {
					setupErr(fmt.Errorf("seed %d: %w", p.Seed, p.Err))
					return
				}
				// The tools failed on this program (an assembler's
				// internal error), or made code gen did not lay out:
				// a failure of this program, kept with its assembly.
				c.Programs++
				c.Failed++
				c.ToolFailed++
				path, err := saveToolFailure(cfg.out, c, p)
				if err == nil {
					c.Saved = append(c.Saved, path)
				}
				c.countPatterns(p.Prog, nil, true, path)
				if cfg.progress != nil {
					cfg.progress.program(0, true)
				}
				report("FAIL %s seed %d: %v\n", name, p.Seed, firstLine(p.Err.Error()))
				continue
			}
			checkProgram(c, chk, cons, p, toolchain, cfg, name, report, stderr)
		}
	}
	if c.Differs != nil {
		c.Differs.First = c.firstDiff
	}
	c.Status = "clean"
	if c.Failed > 0 {
		c.Status = "failed"
	}
}

// checkProgram runs one produced program and adds its result to the cell.
func checkProgram(c *cell, chk *harness.Checker, cons consumer.Consumer, p harness.Produced, toolchain bool,
	cfg runConfig, name string, report func(string, ...any), stderr io.Writer) {
	img, prog, seed := p.Img, p.Prog, p.Seed
	if r := img.Record; r != nil {
		if c.ProducerVersion == "" {
			c.ProducerVersion, c.Packages = r.Versions(), packages(r)
		}
		for _, w := range r.Warnings {
			if w.Tool != "ld" && w.Tool != "sfconform" {
				c.Warned++
				break
			}
		}
	}
	var res *harness.Result
	if toolchain {
		ref, err := harness.Reference(img, prog)
		if err != nil {
			report("%s seed %d: no reference encoding for the differential: %v\n", name, seed, err)
			res = chk.Check(img, cons)
		} else {
			res = chk.CheckAgainst(img, ref, cons)
		}
		c.Differs.Steps += res.Differs
		c.Differs.Equivalent += res.Equivalent
		if c.firstDiff == "" && len(res.FirstDiffs) > 0 {
			c.firstDiff = fmt.Sprintf("seed %d %s", seed, res.FirstDiffs[0])
		}
	} else {
		res = chk.Check(img, cons)
	}
	c.Programs++
	c.Instructions += res.Steps
	if cfg.progress != nil {
		cfg.progress.program(res.Steps, !res.Clean())
	}
	for v := range res.Counts {
		c.counts[v] += res.Counts[v]
	}
	for v, n := range res.AtOutermost {
		if n > 0 {
			if c.AtOutermost == nil {
				c.AtOutermost = map[string]int{}
			}
			c.AtOutermost[verdict.Verdict(v).String()] += n
		}
	}
	for f, n := range res.WrongFields {
		if c.WrongFields == nil {
			c.WrongFields = map[string]int{}
		}
		c.WrongFields[f] += n
	}
	if res.Invalid() {
		c.counts[verdict.Invalid]++
	}
	if !res.Clean() {
		c.Failed++
		path, err := saveFailure(cfg, c, chk, cons, p, res, report)
		if err != nil {
			fmt.Fprintf(stderr, "%s seed %d: saving the failure: %v\n", name, seed, err)
		} else {
			c.Saved = append(c.Saved, path)
		}
		c.countPatterns(prog, res, true, path)
		report("FAIL %s seed %d: %s\n", name, seed, describe(res))
	} else {
		c.countPatterns(prog, nil, false, "")
	}
}

// packages is the short form of a record's tool versions: the Debian
// packages ("2.47.50.20261021-1"; "llvm-mc 1:23.1.4-2, ld 2.44-3" when
// the tools come from two), or the tools' versions for a build of one's
// own.
func packages(r *image.Record) string {
	var out []string
	for _, t := range r.Tools {
		v := t.Package
		if v == "" {
			f := strings.Fields(t.Version)
			if len(f) > 0 {
				v = f[len(f)-1]
			}
		}
		out = append(out, t.Name+" "+v)
	}
	same := true
	for i := range r.Tools {
		if r.Tools[i].Package != r.Tools[0].Package || r.Tools[i].Package == "" {
			same = false
		}
	}
	if same && len(r.Tools) > 0 {
		return r.Tools[0].Package
	}
	return strings.Join(out, ", ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// saveToolFailure keeps a program the tools could not make an image of:
// its coordinates, the error (commands and the tools' output) and its
// assembly, which reproduces it with the tools alone.
func saveToolFailure(dir string, c *cell, p harness.Produced) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-producer.txt", c.Target, strings.NewReplacer("/", "_", ":", "_").Replace(c.Producer), p.Seed))
	text := fmt.Sprintf("target %s, producer %s, seed %d: the producer made no image\n\n%v\n\n--- the program's assembly ---\n%s",
		c.Target, c.Producer, p.Seed, p.Err, p.Prog.Assembly())
	return path, os.WriteFile(path, []byte(text), 0o644)
}

func describe(res *harness.Result) string {
	switch {
	case len(res.Failures) > 0:
		f := res.Failures[0]
		return fmt.Sprintf("step %d at %s (%s): %s %s", f.Step, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail)
	case res.Invalid():
		for _, v := range res.Violations {
			if !v.Warning {
				return "section " + v.String()
			}
		}
	case res.LoadErr != nil:
		return "consumer refused the section: " + res.LoadErr.Error()
	case res.RunErr != nil:
		return "run stopped: " + res.RunErr.Error()
	}
	return "clean"
}

// printSummary writes the table: one row per cell, with the steps per
// verdict, the differential of a toolchain producer ("differs": steps
// whose row is not sfconform's own encoding's; "equiv": of those, the
// ones judged OK), and the exact package versions the row ran.
func printSummary(w io.Writer, cells []*cell) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tproducer\tconsumer\tprograms\tinstructions\tOK\tWRONG\tNOINFO\tERROR\tINVALID\tdiffers\tequiv\tfailed programs\tinstr/s\tversion\t")
	var notes []string
	for _, c := range cells {
		switch c.Status {
		case "unsupported", "error":
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t\n", c.Target, c.Producer, c.Consumer)
			notes = append(notes, fmt.Sprintf("%s %s x %s: %s (%s)", c.Target, c.Producer, c.Consumer, c.Status, c.Reason))
			continue
		}
		rate := 0.0
		if c.Seconds > 0 {
			rate = float64(c.Instructions) / c.Seconds
		}
		diff, equiv, version := "-", "-", "-"
		if c.Differs != nil {
			diff, equiv = strconv.Itoa(c.Differs.Steps), strconv.Itoa(c.Differs.Equivalent)
		}
		if c.Packages != "" {
			version = c.Packages
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%.0f\t%s\t\n", c.Target, c.Producer, c.Consumer, c.Programs, c.Instructions,
			c.counts[verdict.OK], c.counts[verdict.Wrong], c.counts[verdict.NoInfo], c.counts[verdict.Error], c.counts[verdict.Invalid],
			diff, equiv, c.Failed, rate, version)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, c := range cells {
		if c.Status != "failed" {
			continue
		}
		var parts []string
		if len(c.WrongFields) > 0 {
			fields := make([]string, 0, len(c.WrongFields))
			for f := range c.WrongFields {
				fields = append(fields, f)
			}
			slices.Sort(fields)
			var by []string
			for _, f := range fields {
				by = append(by, fmt.Sprintf("%s %d", f, c.WrongFields[f]))
			}
			parts = append(parts, "WRONG at "+strings.Join(by, ", "))
		}
		if len(c.AtOutermost) > 0 {
			failing, at := 0, 0
			for v := verdict.Wrong; v < verdict.Invalid; v++ {
				failing += c.counts[v]
				at += c.AtOutermost[v.String()]
			}
			parts = append(parts, fmt.Sprintf("%d of %d failing steps right up to the outermost frame and wrong there", at, failing))
		}
		if c.Warned > 0 {
			parts = append(parts, fmt.Sprintf("%d programs with producer warnings", c.Warned))
		}
		if c.ToolFailed > 0 {
			parts = append(parts, fmt.Sprintf("%d programs the producer made no image of", c.ToolFailed))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s %s x %s: %s\n", c.Target, c.Producer, c.Consumer, strings.Join(parts, "; "))
		}
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if c.ProducerVersion != "" && !seen[c.Producer] {
			seen[c.Producer] = true
			fmt.Fprintf(w, "%s: %s\n", c.Producer, c.ProducerVersion)
		}
	}
	for _, c := range cells {
		if c.Status == "unsupported" || c.Status == "error" {
			continue
		}
		if len(c.Unexpressed) > 0 {
			fmt.Fprintf(w, "%s %s x %s: patterns %s unsupported (%s), not in the mix\n",
				c.Target, c.Producer, c.Consumer, strings.Join(c.Unexpressed, ", "), c.UnexpressedWhy)
		}
		for _, p := range slices.Sorted(maps.Keys(c.Limited)) {
			fmt.Fprintf(w, "%s %s x %s: pattern %s: %s\n", c.Target, c.Producer, c.Consumer, p, c.Limited[p])
		}
		if len(c.Beyond) > 0 {
			fmt.Fprintf(w, "%s %s x %s: patterns %s are beyond SFrame v%d, in the mix to see what the toolchain does with them\n",
				c.Target, c.Producer, c.Consumer, strings.Join(c.Beyond, ", "), c.SFrameVersion)
		}
	}
}

// unexpressed lists the patterns of t that SFrame version v cannot express.
// cellPatterns keeps of the patterns asked for (nil: the default mix)
// those the cell's target has and its version expresses; when none is
// left, why says so.
func cellPatterns(asked []string, t target.Target, unexpressed []string) (patterns []string, why string) {
	if asked == nil {
		return nil, ""
	}
	have := gen.Patterns(t)
	for _, p := range asked {
		if slices.Contains(have, p) && !slices.Contains(unexpressed, p) {
			patterns = append(patterns, p)
		}
	}
	if len(patterns) == 0 {
		return nil, fmt.Sprintf("none of the patterns %s exists on %s in an SFrame version the producer writes", strings.Join(asked, ","), t.Name())
	}
	return patterns, ""
}

func unexpressed(t target.Target, v int) []string {
	var out []string
	for _, p := range gen.Catalog() {
		if slices.Contains(p.Targets, t) && !slices.Contains(p.Versions, v) {
			out = append(out, p.Name)
		}
	}
	return out
}
