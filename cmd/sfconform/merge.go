package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/verdict"
)

func init() {
	register("merge", "join the JSON summaries and reproducers of 'run --shard' into one report", cmdMerge)
}

const mergeUsage = `usage: sfconform merge [--out DIR] [--json] [--junit FILE] [--html DIR] SHARD...

Joins the results of n runs made with --shard 1/n ... n/n (same seed,
programs, paths, batch, patterns, targets, producers and consumers) into
the summary one unsharded run would have written: every cell's counts
added up, its reproducers copied into --out. Each SHARD is the JSON
summary a shard wrote ('sfconform run --shard i/n --json > FILE'), or a
directory holding it as summary.json. A reproducer path in a summary is
found as written, or else relative to the summary's directory (so a
shard's summary.json and failures/ can be moved together, as CI artifacts
are).

Writes the table (or with --json the JSON summary) on standard output,
and with --junit and --html the reports 'run' writes. Exit status: 0 all
clean, 1 failures, 2 bad usage, shards that do not fit together, a shard
missing, or a reproducer that cannot be read.
`

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("merge", mergeUsage, stderr)
	out := fs.String("out", "failures", "directory the reproducers are copied into")
	asJSON := fs.Bool("json", false, "write the merged summary as JSON on stdout instead of a table")
	junit := fs.String("junit", "", "also write a JUnit XML report to this file")
	html := fs.String("html", "", "also write an HTML report (index.html) into this directory")
	files, err := parseArgs(fs, args, 1, -1, stdout)
	if err != nil {
		return parseExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "sfconform merge:", err)
		return exitSetup
	}
	if err := checkOutputs(*out, *junit, *html); err != nil {
		return fail(err)
	}
	var shards []loadedSummary
	for _, f := range files {
		s, err := loadSummary(f)
		if err != nil {
			return fail(err)
		}
		shards = append(shards, s)
	}
	merged, problems := mergeSummaries(shards, *out)
	if merged == nil {
		return fail(errors.Join(problems...))
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, "sfconform merge:", p)
	}
	// Shard summaries are files: an exec: consumer they name is not run
	// again for the report (repro does, with consent).
	if err := writeReports(merged, *junit, *html, repro.Consent{}, stderr); err != nil {
		return fail(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(merged); err != nil {
			return fail(err)
		}
	} else {
		printSummary(stdout, merged.Cells)
	}
	code := exitOK
	for _, c := range merged.Cells {
		switch c.Status {
		case "error":
			fmt.Fprintf(stderr, "%s %s x %s: setup error: %s\n", c.Target, c.Producer, c.Consumer, c.Reason)
			code = exitSetup
		case "failed":
			if code == exitOK {
				code = exitFailure
			}
		}
	}
	if len(problems) > 0 {
		code = exitSetup
	}
	return code
}

// loadedSummary is a shard's summary and where it was read from.
type loadedSummary struct {
	path string
	dir  string // reproducer paths are also looked for relative to it
	sum  summary
}

func loadSummary(path string) (loadedSummary, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "summary.json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return loadedSummary{}, err
	}
	var s summary
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&s); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return loadedSummary{}, fmt.Errorf("%s: byte offset %d: not a run --json summary: %w", path, se.Offset, err)
		case errors.As(err, &te):
			return loadedSummary{}, fmt.Errorf("%s: byte offset %d, field %s: %w", path, te.Offset, te.Field, err)
		}
		return loadedSummary{}, fmt.Errorf("%s: not a run --json summary: %w", path, err)
	}
	if len(s.Cells) == 0 {
		return loadedSummary{}, fmt.Errorf("%s: no cells: not a run --json summary", path)
	}
	return loadedSummary{path: path, dir: filepath.Dir(path), sum: s}, nil
}

// mergeSummaries joins the shards. It returns nil and the reasons when
// they do not fit together; otherwise the merged summary and the
// reproducers it could not copy.
func mergeSummaries(shards []loadedSummary, out string) (*summary, []error) {
	first := shards[0].sum
	n := 1
	if first.Shard != nil {
		n = first.Shard.Count
	}
	var bad []error
	// Shards of the same cells form a group, which needs all its n
	// shards; groups of different cells (a campaign sharding each target x
	// producer as a job of its own) merge side by side, as long as no cell
	// is in two groups.
	var groups [][]loadedSummary
	group := map[string]int{}
	seen := map[string]map[int]string{}
	inGroup := map[string]string{}
	for _, l := range shards {
		s := l.sum
		i, count := 1, 1
		if s.Shard != nil {
			i, count = s.Shard.Index, s.Shard.Count
		}
		differ := func(what string, a, b any) {
			bad = append(bad, fmt.Errorf("%s: %s %v, but %s has %v", l.path, what, a, shards[0].path, b))
		}
		switch {
		case count != n:
			differ("is a shard of", count, n)
		case s.Seed != first.Seed:
			differ("seed", s.Seed, first.Seed)
		case s.Programs != first.Programs:
			differ("programs per cell", s.Programs, first.Programs)
		case s.Paths != first.Paths:
			differ("paths per program", s.Paths, first.Paths)
		case s.Batch != first.Batch:
			differ("batch", s.Batch, first.Batch)
		case !slices.Equal(s.PatternsAsked, first.PatternsAsked):
			differ("patterns", s.PatternsAsked, first.PatternsAsked)
		}
		keys := strings.Join(cellKeys(s.Cells), ", ")
		g, ok := group[keys]
		if !ok {
			g = len(groups)
			group[keys] = g
			groups = append(groups, nil)
			seen[keys] = map[int]string{}
			for _, k := range cellKeys(s.Cells) {
				if other, dup := inGroup[k]; dup {
					bad = append(bad, fmt.Errorf("%s: cell %s is also in %s, with other cells", l.path, k, other))
				}
				inGroup[k] = l.path
			}
		}
		groups[g] = append(groups[g], l)
		if p, dup := seen[keys][i]; dup {
			bad = append(bad, fmt.Errorf("%s and %s are both shard %d/%d", p, l.path, i, n))
		}
		seen[keys][i] = l.path
	}
	for _, g := range groups {
		keys := strings.Join(cellKeys(g[0].sum.Cells), ", ")
		for i := 1; i <= n; i++ {
			if _, ok := seen[keys][i]; !ok {
				bad = append(bad, fmt.Errorf("shard %d/%d is missing (cells %s, seed %d, %d programs per cell)", i, n, keys, first.Seed, first.Programs))
			}
		}
	}
	if len(bad) > 0 {
		return nil, bad
	}
	m := &summary{Seed: first.Seed, Programs: first.Programs, Paths: first.Paths, Batch: first.Batch, PatternsAsked: first.PatternsAsked}
	var problems []error
	copied := map[string]string{} // a reproducer's file -> its path under out
	for _, shards := range groups {
		for k := range shards[0].sum.Cells {
			mc := &cell{}
			for _, l := range shards {
				c := l.sum.Cells[k]
				moved := map[string]string{}
				for i, p := range c.Saved {
					np, err := copyReproducer(l.dir, p, out, copied)
					if err != nil {
						problems = append(problems, fmt.Errorf("%s: %w", l.path, err))
						continue
					}
					c.Saved[i], moved[p] = np, np
				}
				for _, r := range c.ByPattern {
					for i, p := range r.Reproducers {
						if np, ok := moved[p]; ok {
							r.Reproducers[i] = np
						}
					}
				}
				addCell(mc, c)
			}
			m.Cells = append(m.Cells, mc)
		}
	}
	return m, problems
}

func cellKey(c *cell) string { return c.Target + " " + c.Producer + " x " + c.Consumer }

func cellKeys(cs []*cell) []string {
	var out []string
	for _, c := range cs {
		out = append(out, cellKey(c))
	}
	return out
}

// addCell adds a shard's cell c into the merged cell m.
func addCell(m, c *cell) {
	if m.Target == "" {
		*m = cell{Target: c.Target, Producer: c.Producer, Consumer: c.Consumer, SFrameVersion: c.SFrameVersion,
			Status: c.Status, Reason: c.Reason, Verdicts: map[string]int{}, Unexpressed: c.Unexpressed, Beyond: c.Beyond,
			UnexpressedWhy: c.UnexpressedWhy, ProducerVersion: c.ProducerVersion, Packages: c.Packages, Layouts: slices.Clone(c.Layouts)}
		for i := range m.Layouts {
			if m.Layouts[i].Measured != nil {
				m.Layouts[i].Measured = &campaign.LayoutCount{}
			}
		}
	}
	// The shapes measured on a toolchain's sections add up over the shards.
	for i := range m.Layouts {
		if k := slices.IndexFunc(c.Layouts, func(l campaign.LayoutStatus) bool { return l.Name == m.Layouts[i].Name }); k >= 0 && m.Layouts[i].Measured != nil && c.Layouts[k].Measured != nil {
			mm := m.Layouts[i].Measured
			mm.With += c.Layouts[k].Measured.With
			mm.Of += c.Layouts[k].Measured.Of
			m.Layouts[i].Produced = mm.With > 0
		}
	}
	switch {
	case c.Status == "error" || m.Status == "error":
		m.Status = "error"
		if c.Status == "error" {
			m.Reason = c.Reason
		}
	case c.Status == "unsupported":
		m.Status, m.Reason = "unsupported", c.Reason
	}
	if m.ProducerVersion == "" {
		m.ProducerVersion, m.Packages = c.ProducerVersion, c.Packages
	}
	m.Programs += c.Programs
	m.Instructions += c.Instructions
	m.Failed += c.Failed
	m.Warned += c.Warned
	m.ToolFailed += c.ToolFailed
	m.SetSeconds(m.Seconds + c.Seconds)
	m.Saved = append(m.Saved, c.Saved...)
	for _, v := range slices.Sorted(maps.Keys(c.Verdicts)) {
		m.Verdicts[v] += c.Verdicts[v]
		for i := verdict.OK; int(i) < verdict.Count; i++ {
			if i.String() == v {
				m.Counts[i] += c.Verdicts[v]
			}
		}
	}
	m.WrongFields = addCounts(m.WrongFields, c.WrongFields)
	m.Probes = addCounts(m.Probes, c.Probes)
	m.ExpectedInvalid += c.ExpectedInvalid
	m.AtOutermost = addCounts(m.AtOutermost, c.AtOutermost)
	for p, why := range c.Limited {
		if m.Limited == nil {
			m.Limited = map[string]string{}
		}
		m.Limited[p] = why
	}
	if d := c.Differs; d != nil {
		if m.Differs == nil {
			m.Differs = &differs{}
		}
		m.Differs.Steps += d.Steps
		m.Differs.Equivalent += d.Equivalent
		if d.First != "" && (m.Differs.First == "" || firstSeed(d.First) < firstSeed(m.Differs.First)) {
			m.Differs.First = d.First
		}
	}
	for p, r := range c.ByPattern {
		if m.ByPattern == nil {
			m.ByPattern = map[string]*patternResult{}
		}
		mr := m.ByPattern[p]
		if mr == nil {
			mr = &patternResult{}
			m.ByPattern[p] = mr
		}
		mr.Programs += r.Programs
		mr.Failed += r.Failed
		mr.Reproducers = append(mr.Reproducers, r.Reproducers...)
	}
	if m.Status != "error" && m.Status != "unsupported" {
		m.Status = "clean"
		if m.Failed > 0 {
			m.Status = "failed"
		}
	}
}

func addCounts(m, c map[string]int) map[string]int {
	for k, n := range c {
		if m == nil {
			m = map[string]int{}
		}
		m[k] += n
	}
	return m
}

// firstSeed reads the seed a differential's first difference names
// ("seed 12 ...").
func firstSeed(s string) int64 {
	f := strings.Fields(s)
	if len(f) >= 2 && f[0] == "seed" {
		if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			return n
		}
	}
	return 1<<63 - 1
}

// copyReproducer copies a reproducer a shard saved (path as the summary
// has it; found as written or relative to dir) into out, and returns its
// new path. A case file is checked by loading it and saved under its
// coordinates (corpus.Save: never over another file); a producer failure
// (.txt) is copied as it is.
func copyReproducer(dir, path, out string, copied map[string]string) (string, error) {
	// As written; relative to the summary; in the summary's directory's
	// copy of the reproducers' directory (summary.json beside failures/,
	// as a CI artifact holds them), or beside the summary.
	candidates := []string{path, filepath.Join(dir, filepath.Base(filepath.Dir(path)), filepath.Base(path)), filepath.Join(dir, filepath.Base(path))}
	if !filepath.IsAbs(path) {
		candidates = slices.Insert(candidates, 1, filepath.Join(dir, path))
	}
	src := path
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			src = c
			break
		}
	}
	if np, ok := copied[src]; ok {
		return np, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	var np string
	if strings.HasSuffix(src, ".json") {
		c, err := corpus.Load(src)
		if err != nil {
			return "", fmt.Errorf("reproducer %s: %w", path, err)
		}
		if np, err = corpus.Save(out, c); err != nil {
			return "", err
		}
	} else {
		b, err := os.ReadFile(src)
		if err != nil {
			return "", fmt.Errorf("reproducer %s: %w", path, err)
		}
		np = filepath.Join(out, filepath.Base(src))
		if err := outfile.Write(np, b); err != nil {
			return "", err
		}
	}
	copied[src] = np
	return np, nil
}
