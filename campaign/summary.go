package campaign

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// Summary is a run's result, what `sfconform run --json` writes and
// `sfconform merge` reads: the JSON names are the schema, keep them.
type Summary struct {
	Seed     int64   `json:"seed"`
	Programs int     `json:"programs_per_cell"`
	Paths    int     `json:"paths_per_program"`
	Cells    []*Cell `json:"cells"`
	// Backtraces, with --cbf-stats: the stored size of every judged
	// backtrace, CBF against 8 bytes a frame.
	Backtraces *BacktraceFigure `json:"backtraces,omitempty"`
	// What 'sfconform merge' checks the shards agree on: the part this
	// run checked (--shard), the batch size that cuts the parts, and the
	// patterns asked for (nil: each cell's default mix).
	Shard         *Shard   `json:"shard,omitempty"`
	Batch         int      `json:"batch,omitempty"`
	PatternsAsked []string `json:"patterns_asked,omitempty"`
}

// BacktraceFigure is the --cbf-stats figure.
type BacktraceFigure struct {
	Backtraces    int     `json:"backtraces"`
	Frames        int     `json:"frames"`
	CBFBytes      int     `json:"cbf_bytes"`
	PlainBytes    int     `json:"plain_bytes"` // 8 bytes a frame
	CBFPerTrace   float64 `json:"cbf_bytes_per_backtrace"`
	PlainPerTrace float64 `json:"plain_bytes_per_backtrace"`
}

// Cell is one target x producer x consumer of a run and what it found.
type Cell struct {
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
	// InstrPerSecond is Instructions / Seconds: the cell's rate of judged
	// instructions on the one worker that ran it (SetSeconds).
	InstrPerSecond float64 `json:"instructions_per_second,omitempty"`

	// Unexpressed are the target's patterns the mix leaves out
	// (Mix.LeftOut): unsupported rather than failed, UnexpressedWhy says
	// why.
	Unexpressed []string `json:"unsupported_patterns,omitempty"`
	// Beyond, Limited: Mix.Beyond and Mix.Limited.
	Beyond         []string          `json:"patterns_beyond_version,omitempty"`
	Limited        map[string]string `json:"patterns_limited,omitempty"`
	UnexpressedWhy string            `json:"unsupported_patterns_why,omitempty"`
	// Layouts says per section layout shape what the cell did with it
	// (Mix.Layouts): produced and judged, or not produced and why.
	Layouts []LayoutStatus `json:"layouts,omitempty"`

	// ProducerVersion names the exact tools a toolchain producer ran
	// ("as 2.47.50.20261021 (Debian sid 2.47.50.20261021-1), ld ...");
	// Packages is the short form the table shows.
	ProducerVersion string `json:"producer_version,omitempty"`
	Packages        string `json:"producer_packages,omitempty"`
	// WrongFields counts the WRONG steps by the field that first differed.
	WrongFields map[string]int `json:"wrong_by_field,omitempty"`
	// ExpectedInvalid counts the programs whose section breaks only rules
	// the cell breaks on purpose (Mix.ExpectedRules: a layout shape the
	// version's strict rules forbid, for consumers that read it): INVALID
	// as expected, not in Verdicts' INVALID and no failure.
	ExpectedInvalid int `json:"invalid_as_expected,omitempty"`
	// Probes counts the probe lookups per verdict (harness.Result.Probes):
	// PCs of the code in no function, where the consumer must find no
	// unwind information (OK) and a backtrace is WRONG. Not in Verdicts or
	// Instructions; a failed probe fails its program.
	Probes map[string]int `json:"probes,omitempty"`
	// AtOutermost counts the failing steps (per verdict) whose frames are
	// all right below the outermost one, where the backtrace went wrong.
	AtOutermost map[string]int `json:"failing_at_outermost,omitempty"`
	// The differential, for toolchain producers: steps whose row differs
	// from sfconform's own encoding of the program, and of those the ones
	// whose frames the oracle found right ("differs, equivalent").
	Differs    *Differs `json:"differs,omitempty"`
	Warned     int      `json:"programs_with_warnings,omitempty"`   // programs the producer's tools warned about
	ToolFailed int      `json:"producer_failed_programs,omitempty"` // programs the tools could not make an image of
	// ByPattern: per pattern, the programs with a function of it and the
	// failures in such a function; the JUnit report's testcases.
	ByPattern map[string]*PatternResult `json:"by_pattern,omitempty"`

	// Counts are the steps per verdict (INVALID: programs) as they are
	// added; Finish copies them into Verdicts.
	Counts [verdict.Count]int `json:"-"`
	// ProbeCounts are the probes per verdict as they are added; Finish
	// copies them into Probes.
	ProbeCounts [verdict.Count]int `json:"-"`
	// Err is a setup error: the cell's status is "error" and Reason its text.
	Err error `json:"-"`

	target    target.Target
	plan      *Plan
	firstDiff string
}

// NewCell is the cell of prod x cons on t, not run yet.
func NewCell(t target.Target, prod, cons string) *Cell {
	return &Cell{Target: t.Name(), Producer: prod, Consumer: cons, target: t, Verdicts: map[string]int{}}
}

// Arch is the cell's target.
func (c *Cell) Arch() target.Target { return c.target }

// Plan is the cell's plan; nil before it runs, or when it could not run.
func (c *Cell) Plan() *Plan { return c.plan }

// Name is the cell's coordinates for messages: "x86_64 builtin-v3 x builtin".
func (c *Cell) Name() string { return fmt.Sprintf("%s %s x %s", c.Target, c.Producer, c.Consumer) }

// Differs is a cell's differential.
type Differs struct {
	Steps      int    `json:"steps"`
	Equivalent int    `json:"equivalent"`
	First      string `json:"first,omitempty"`
}

// PatternResult is what a cell found for one pattern.
type PatternResult struct {
	Programs    int      `json:"programs"`        // programs with a function of the pattern
	Failed      int      `json:"failed_programs"` // of those, programs whose failure lies in such a function
	Reproducers []string `json:"reproducers,omitempty"`
}

// WholeProgram is the pattern a failure is put down to when no function
// of a pattern holds it: a section that breaks a rule, a consumer that
// refuses the section, a run that stops, a program the producer's tools
// made no image of.
const WholeProgram = "(whole program)"

// setPlan records what the plan decided.
func (c *Cell) setPlan(p *Plan) {
	c.plan = p
	c.SFrameVersion = p.Version
	c.Unexpressed, c.UnexpressedWhy = p.Mix.LeftOut, p.Mix.Why
	c.Beyond, c.Limited = p.Mix.Beyond, p.Mix.Limited
	c.Layouts = p.Mix.Layouts
	if p.Toolchain {
		c.Differs = &Differs{}
	}
}

// fail makes the cell a setup error.
func (c *Cell) fail(err error) {
	c.Status, c.Reason, c.Err = "error", err.Error(), err
}

// Add folds one checked program into the cell: res is its result (nil:
// the producer's tools made no image of it, a failure of the program),
// path the reproducer saved for a failure ("" if none).
func (c *Cell) Add(p Produced, res *harness.Result, path string) {
	c.Programs++
	if path != "" {
		c.Saved = append(c.Saved, path)
	}
	if res == nil {
		c.Failed++
		c.ToolFailed++
		c.countPatterns(p.Prog, nil, true, path)
		return
	}
	if r := p.Img.Record; r != nil {
		if c.ProducerVersion == "" {
			c.ProducerVersion, c.Packages = r.Versions(), packages(r)
		}
		if slices.ContainsFunc(r.Warnings, func(w image.Warning) bool { return w.Tool != "ld" && w.Tool != "sfconform" }) {
			c.Warned++
		}
	}
	if c.Differs != nil {
		c.Differs.Steps += res.Differs
		c.Differs.Equivalent += res.Equivalent
		if c.firstDiff == "" && len(res.FirstDiffs) > 0 {
			c.firstDiff = fmt.Sprintf("seed %d %s", p.Seed, res.FirstDiffs[0])
		}
	}
	c.Instructions += res.Steps
	for v := range res.Counts {
		c.Counts[v] += res.Counts[v]
		c.ProbeCounts[v] += res.Probes[v]
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
		c.Counts[verdict.Invalid]++
	} else if len(res.Expected) > 0 {
		c.ExpectedInvalid++
	}
	if !res.Clean() {
		c.Failed++
	}
	c.countPatterns(p.Prog, res, !res.Clean(), path)
}

// SetSeconds sets the time the cell took and its rate.
func (c *Cell) SetSeconds(s float64) {
	c.Seconds = s
	c.InstrPerSecond = 0
	if s > 0 {
		c.InstrPerSecond = math.Round(float64(c.Instructions) / s)
	}
}

// Finish sets the cell's status and verdicts once its last program is in.
func (c *Cell) Finish() {
	if c.Differs != nil {
		c.Differs.First = c.firstDiff
	}
	if c.Status == "" {
		c.Status = "clean"
		if c.Failed > 0 {
			c.Status = "failed"
		}
	}
	for v := verdict.OK; int(v) < verdict.Count; v++ {
		c.Verdicts[v.String()] = c.Counts[v]
		if n := c.ProbeCounts[v]; n > 0 {
			if c.Probes == nil {
				c.Probes = map[string]int{}
			}
			c.Probes[v.String()] = n
		}
	}
}

// countPatterns adds a checked program to the cell's per-pattern results:
// every pattern it has a function of, and, when it failed, the failure to
// the pattern of the function at fault (FailingPattern) with the
// reproducer saved at path.
func (c *Cell) countPatterns(prog *gen.Program, res *harness.Result, failed bool, path string) {
	if c.ByPattern == nil {
		c.ByPattern = map[string]*PatternResult{}
	}
	get := func(p string) *PatternResult {
		r := c.ByPattern[p]
		if r == nil {
			r = &PatternResult{}
			c.ByPattern[p] = r
		}
		return r
	}
	if prog != nil {
		var seen []string
		for _, f := range prog.Funcs {
			if f.Pattern != "" && !slices.Contains(seen, f.Pattern) {
				seen = append(seen, f.Pattern)
				get(f.Pattern).Programs++
			}
		}
	}
	if !failed {
		return
	}
	p := FailingPattern(prog, res)
	r := get(p)
	if p == WholeProgram {
		r.Programs++ // it counts the programs put down to it
	}
	r.Failed++
	if path != "" {
		r.Reproducers = append(r.Reproducers, path)
	}
}

// FailingPattern is the pattern of the function whose row gave the first
// wrong value of a result's first failing step: for a frame's CFA, that
// frame's own function; for any other field (the PC, which is the return
// address its callee's row found; SP; FP), its callee's, frame k-1. A
// failure no function holds is the whole program's.
func FailingPattern(prog *gen.Program, res *harness.Result) string {
	if prog == nil || res == nil || len(res.Failures) == 0 || len(res.Failures[0].Expected) == 0 {
		return WholeProgram
	}
	f := res.Failures[0]
	k := min(f.Judgement.Frame, len(f.Expected)-1)
	if k > 0 && f.Judgement.Field != "cfa" {
		k--
	}
	pc := repro.LookupPC(f.Expected, k)
	for _, fn := range prog.Funcs {
		if pc >= fn.Addr && pc < fn.Addr+uint64(fn.Size) && fn.Pattern != "" {
			return fn.Pattern
		}
	}
	return WholeProgram
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
