package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

func init() {
	register("coverage", "what the default program mix executes: functions, rows, rule kinds, per target", cmdCoverage)
}

const coverageUsage = `usage: sfconform coverage [--programs N] [--paths N] [--producer LIST] [--targets LIST] [--seed S]

Generates the default mix of programs each producer's SFrame version can
express, as a run's cell with the builtin consumer makes them, runs every
path of each, and reports per target and producer the section shapes the
cell's sections had (functions per section, FRE start sizes, auxiliary
header, unsorted, section-relative starts, padding after the last FRE,
concatenated sections) and the function edges its programs had (a gap,
padding or the next function after any function and after one ending in
a call; signals at a function's first or last instruction): a zero is a
shape the cell never met, and the cell's note says why a layout was not
produced; then the share of
functions, instructions and rows executed, how many executed instructions
had each kind of unwind rule or needed each SFrame field size (PCMASK FDE,
2- and 4-byte FRE starts; data words of 1, 2 or 4 bytes as sframe.Encode
writes them for the producer's version: words:1B, 2B, 4B), and program
shapes reached (calls, calls as a function's last instruction, rows that
change across a call, tail calls and tail calls in a row, jumps into cold
parts). Padding that functions jump over is left out of the instruction
counts.
`

func cmdCoverage(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("coverage", coverageUsage, stderr)
	programs := fs.Int("programs", 1000, "programs per target")
	prodNames := fs.String("producer", "builtin-v2,builtin-v3", "comma-separated producers, each one cell per target")
	targets := fs.String("targets", "all", "comma-separated targets: "+targetNames()+", or all")
	var seedArg seedFlag
	fs.Var(&seedArg, "seed", "first seed, an integer (default 1)")
	paths := fs.Int("paths", gen.DefaultPaths, "runs per program")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "sfconform coverage:", err)
		return exitSetup
	}
	seed := new(int64)
	*seed = seedArg.or(1)
	ts, err := parseTargets(*targets)
	if err != nil {
		return fail(err)
	}
	pool := campaign.NewWorker(harness.Options{})
	defer pool.Close()
	cons := consumer.NewBuiltin()
	for _, t := range ts {
		chk, err := pool.Checker(t)
		if err != nil {
			return fail(err)
		}
		for _, prodName := range strings.Split(*prodNames, ",") {
			prod, err := producer.New(strings.TrimSpace(prodName))
			if err != nil {
				return fail(err)
			}
			plan, err := campaign.NewPlan(prod, t, nil, cons)
			if err != nil {
				fmt.Fprintf(stdout, "%s (%s): %v\n\n", t.Name(), prod.Name(), err)
				continue
			}
			cov := gen.NewCoverage()
			cov.Version = plan.Version
			shapes := map[string]int{}
			for i := 0; i < *programs; i++ {
				s := *seed + int64(i)
				img, prog, err := campaign.Produce(plan.Producer, t, s, plan.Mix.Options(*paths))
				if err != nil {
					return fail(err)
				}
				names, err := producer.ImageShapes(img)
				if err != nil {
					return fail(fmt.Errorf("%s seed %d: %w", t.Name(), s, err))
				}
				for _, n := range append(names, prog.EdgeShapes()...) {
					shapes[n]++
				}
				res := chk.Trace(img, cons)
				if res.RunErr != nil {
					return fail(fmt.Errorf("%s seed %d: %w", t.Name(), s, res.RunErr))
				}
				cov.Add(prog, res.Executed)
				for _, pc := range res.Executed {
					if i := img.ModuleAt(pc); i >= 0 && producer.PLTModule(img.Modules[i].Name) {
						shapes[pltSteps]++
					}
				}
			}
			// A toolchain's own shapes are those its sections had.
			mix := plan.Mix
			mix.Layouts = campaign.MeasuredLayouts(mix.Layouts, shapes, *programs)
			printCoverage(stdout, t, prod.Name(), cov, shapes, mix.LayoutNote())
		}
	}
	return exitOK
}

// pltSteps counts, among the shapes, the executed instructions in a
// linker's PLT entries (calls between modules, producer.PLTModule).
const pltSteps = "(plt steps)"

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func printCoverage(w io.Writer, t target.Target, prod string, c *gen.Coverage, shapes map[string]int, layoutNote string) {
	fmt.Fprintf(w, "%s (%s mix, %d programs, %d executed instructions)\n", t.Name(), prod, c.Programs, c.Steps)
	fmt.Fprintf(w, "  section shapes (programs whose section has each; %s):\n", layoutNote)
	for _, k := range producer.SectionShapeNames {
		fmt.Fprintf(w, "    %-24s %d\n", k, shapes[k])
	}
	if n := shapes[pltSteps]; n > 0 || slices.ContainsFunc(strings.Split(layoutNote, "; "), func(s string) bool { return strings.Contains(s, "through ld's PLT") }) {
		fmt.Fprintf(w, "    %-24s %d\n", "steps in PLT entries", n)
	}
	fmt.Fprintf(w, "  function edges (programs with each: what follows a function, one ending in a call; signals at a function's bounds):\n")
	for _, k := range gen.EdgeShapeNames {
		fmt.Fprintf(w, "    %-24s %d\n", k, shapes[k])
	}
	if why := noSignalReason(t, c.Version); why != "" {
		fmt.Fprintf(w, "    (no signals in this mix: %s)\n", why)
	}
	fmt.Fprintf(w, "  functions executed     %s (%d of %d)\n", pct(c.FuncsRun, c.Funcs), c.FuncsRun, c.Funcs)
	fmt.Fprintf(w, "  instructions executed  %s (%d of %d)\n", pct(c.InsnsRun, c.Insns), c.InsnsRun, c.Insns)
	if c.Idle > 0 {
		fmt.Fprintf(w, "  idle functions         %d (never run: large tables; not counted above)\n", c.Idle)
	}
	if c.Padding > 0 {
		fmt.Fprintf(w, "  padding never run      %d instructions\n", c.Padding)
	}
	fmt.Fprintf(w, "  rows executed          %s (%d of %d)\n", pct(c.RowsRun, c.Rows), c.RowsRun, c.Rows)
	fmt.Fprintf(w, "  rule kinds (share of executed instructions):\n")
	for _, k := range sortedKeys(c.Kinds) {
		fmt.Fprintf(w, "    %-24s %7s  %d\n", k, pct(c.Kinds[k], c.Steps), c.Kinds[k])
	}
	fmt.Fprintf(w, "  shapes executed:\n")
	for _, k := range sortedKeys(c.Shapes) {
		fmt.Fprintf(w, "    %-24s %d\n", k, c.Shapes[k])
	}
	var pats []string
	for _, k := range sortedKeys(c.PatternsRun) {
		pats = append(pats, fmt.Sprintf("%s %d", k, c.PatternsRun[k]))
	}
	fmt.Fprintf(w, "  functions executed per pattern: %s\n\n", strings.Join(pats, ", "))
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// noSignalReason says why a mix of SFrame version v on t has no signal
// pattern (so its signal edges are zero): the catalog's reason for the
// first signal pattern of t that v cannot express. Empty when v can
// express one.
func noSignalReason(t target.Target, v int) string {
	why := ""
	for _, p := range gen.Catalog() {
		if !p.Signal || !slices.Contains(p.Targets, t) {
			continue
		}
		if v == 0 || slices.Contains(p.Versions, v) {
			return ""
		}
		if why == "" {
			why = fmt.Sprintf("SFrame v%d cannot express pattern %s: %s", v, p.Name, p.Cannot)
		}
	}
	return why
}
