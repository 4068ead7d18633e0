package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/internal/browser"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
)

// The shards of a cell's seeds are disjoint, cover every program once,
// and cut at batch boundaries (a toolchain's batches stay those of the
// unsharded run).
func TestShardSeedsPartition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ programs, batch, n int }{{10, 3, 2}, {10, 3, 4}, {7, 64, 3}, {1, 1, 1}, {130, 64, 2}, {200, 7, 5}} {
		all := campaign.Shard{}.Seeds(100, tc.programs, tc.batch)
		var union []int64
		for i := 1; i <= tc.n; i++ {
			part := campaign.Shard{Index: i, Count: tc.n}.Seeds(100, tc.programs, tc.batch)
			for j, s := range part {
				k := s - 100
				if k/int64(tc.batch)%int64(tc.n) != int64(i-1) {
					t.Errorf("%+v: shard %d has program %d of block %d", tc, i, k, k/int64(tc.batch))
				}
				// Within a block the seeds are consecutive, so the
				// shard's batches are the unsharded run's.
				if j > 0 && k%int64(tc.batch) != 0 && part[j-1] != s-1 {
					t.Errorf("%+v: shard %d: block of seed %d is split", tc, i, s)
				}
			}
			union = append(union, part...)
		}
		slices.Sort(union)
		if !slices.Equal(union, all) || len(all) != tc.programs {
			t.Errorf("%+v: shards together check %v, the unsharded run %v", tc, union, all)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/0", "-1/2", ""} {
		if _, err := campaign.ParseShard(bad); err == nil {
			t.Errorf("--shard %q accepted", bad)
		}
	}
}

// failureSet is a summary's failures: the cell and seed of each
// reproducer, with its step, verdict and field.
func failureSet(t *testing.T, s summary) []string {
	t.Helper()
	var out []string
	for _, c := range s.Cells {
		for _, p := range c.Saved {
			k, err := corpus.Load(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s seed %d step %d %v %s", cellKey(c), k.Seed, k.Step, k.Verdict, k.Field))
		}
	}
	slices.Sort(out)
	return out
}

func decodeSummary(t *testing.T, text string) summary {
	t.Helper()
	var s summary
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("not a summary: %v\n%s", err, text)
	}
	return s
}

// Two shards merged are one unsharded run on the same seeds: the same
// counts in every cell and the same failures. gas-2.44 fails on x86-64
// (findings 020-022) and writes no SFrame for s390x (an unsupported
// cell); builtin-v3 is clean.
func TestShardsMergeToOneRun(t *testing.T) {
	t.Parallel()
	if _, err := producer.New("gas-2.44"); err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.44: %v", err)
	}
	dir := t.TempDir()
	args := []string{"--producer", "gas-2.44,builtin-v3", "--targets", "x86-64,s390x", "--programs", "11", "--batch", "3",
		"--seed", "4", "--no-minimize", "--json", "-q"}
	run := func(name string, extra ...string) (string, summary) {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(append(append([]string{"run"}, args...), append(extra, "--out", filepath.Join(d, "failures"))...)...)
		if code != exitFailure && !(code == exitOK && strings.Contains(name, "builtin")) {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		if err := os.WriteFile(filepath.Join(d, "summary.json"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return d, decodeSummary(t, out)
	}
	_, whole := run("whole")
	d1, s1 := run("shard1", "--shard", "1/2")
	d2, s2 := run("shard2", "--shard", "2/2")
	if s1.Cells[0].Programs == 0 || s2.Cells[0].Programs == 0 || s1.Cells[0].Programs+s2.Cells[0].Programs != 11 {
		t.Fatalf("shards checked %d and %d programs of 11", s1.Cells[0].Programs, s2.Cells[0].Programs)
	}
	merged := filepath.Join(dir, "merged")
	junit := filepath.Join(dir, "merged.xml")
	// The shards' directories moved, as CI artifacts are: the summaries
	// name the reproducers where they were written.
	moved1, moved2 := filepath.Join(dir, "artifact-1"), filepath.Join(dir, "artifact-2")
	if err := os.Rename(d1, moved1); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(d2, moved2); err != nil {
		t.Fatal(err)
	}
	d1, d2 = moved1, moved2
	html := filepath.Join(dir, "html")
	out, errOut, code := runCLI("merge", "--json", "--out", merged, "--junit", junit, "--html", html, d1, d2)
	if code != exitFailure {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	m := decodeSummary(t, out)
	if len(m.Cells) != len(whole.Cells) {
		t.Fatalf("merged %d cells, the unsharded run %d", len(m.Cells), len(whole.Cells))
	}
	failed := 0
	for i, w := range whole.Cells {
		c := m.Cells[i]
		failed += w.Failed
		if cellKey(c) != cellKey(w) || c.Status != w.Status || c.Programs != w.Programs || c.Instructions != w.Instructions ||
			!reflect.DeepEqual(c.Verdicts, w.Verdicts) || c.Failed != w.Failed || c.Warned != w.Warned ||
			!reflect.DeepEqual(c.WrongFields, w.WrongFields) || !reflect.DeepEqual(c.AtOutermost, w.AtOutermost) ||
			!reflect.DeepEqual(c.Differs, w.Differs) || len(c.ByPattern) != len(w.ByPattern) {
			t.Errorf("cell %s: merged\n%+v\nunsharded\n%+v", cellKey(w), *c, *w)
		}
		for p, r := range w.ByPattern {
			if mr := c.ByPattern[p]; mr == nil || mr.Programs != r.Programs || mr.Failed != r.Failed || len(mr.Reproducers) != len(r.Reproducers) {
				t.Errorf("cell %s pattern %s: merged %+v, unsharded %+v", cellKey(w), p, mr, r)
			}
		}
	}
	if failed == 0 {
		t.Fatal("the unsharded run found no failure: the comparison shows nothing")
	}
	if a, b := failureSet(t, m), failureSet(t, whole); !slices.Equal(a, b) {
		t.Errorf("failures: merged\n%s\nunsharded\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	for _, c := range m.Cells {
		for _, p := range c.Saved {
			if filepath.Dir(p) != merged {
				t.Errorf("merged reproducer %s is not under --out %s", p, merged)
			}
		}
	}
	checkJUnit(t, junit, &m)
	// One section per signature of each cell (groupFailures).
	sigs := 0
	for _, c := range m.Cells {
		for _, g := range groupFailures(c, nil) {
			if strings.HasSuffix(g.Paths[0], ".json") {
				sigs++
			}
		}
	}
	if sigs == 0 || sigs > failed {
		t.Errorf("%d signatures of %d failures", sigs, failed)
	}
	if b, err := os.ReadFile(filepath.Join(html, "index.html")); err != nil || strings.Count(string(b), `class="failure"`) != min(sigs, maxHTMLFailures) {
		t.Errorf("merge --html: %v, %d failures worked through, want %d", err, strings.Count(string(b), `class="failure"`), min(sigs, maxHTMLFailures))
	}
	// The browser tests of run and repro --html need chromium; here it
	// checks the merged page when it is there.
	if chromium, err := browser.Chromium(); err == nil {
		checkInBrowser(t, chromium, filepath.Join(html, "index.html"), "failing-step-0")
	}

	// A shard missing, or one of another run, is refused.
	if _, errOut, code := runCLI("merge", "--out", filepath.Join(dir, "x"), d1); code != exitSetup || !strings.Contains(errOut, "shard 2/2 is missing") {
		t.Errorf("merge of shard 1 alone: exit %d: %s", code, errOut)
	}
	// A campaign shards each producer as jobs of their own: the shards of
	// disjoint cells merge side by side into the one run's cells, and a
	// group still needs all its shards.
	var parts []string
	for _, prod := range []string{"gas-2.44", "builtin-v3"} {
		for _, sh := range []string{"1/2", "2/2"} {
			d, _ := run("part-"+prod+"-"+sh[:1], "--producer", prod, "--shard", sh)
			parts = append(parts, d)
		}
	}
	out, errOut, code = runCLI("merge", "--json", "--out", filepath.Join(dir, "parts"), parts[0], parts[1], parts[2], parts[3])
	if code != exitFailure {
		t.Fatalf("merge of per-producer shards: exit %d: %s", code, errOut)
	}
	byKey := map[string]*cell{}
	for _, c := range decodeSummary(t, out).Cells {
		byKey[cellKey(c)] = c
	}
	for _, w := range whole.Cells {
		c := byKey[cellKey(w)]
		if c == nil || c.Programs != w.Programs || c.Instructions != w.Instructions || !reflect.DeepEqual(c.Verdicts, w.Verdicts) || c.Failed != w.Failed {
			t.Errorf("per-producer shards, cell %s: merged %+v, unsharded %+v", cellKey(w), c, *w)
		}
	}
	if len(byKey) != len(whole.Cells) {
		t.Errorf("per-producer shards merged into %d cells, the unsharded run has %d", len(byKey), len(whole.Cells))
	}
	if _, errOut, code := runCLI("merge", "--out", filepath.Join(dir, "z"), parts[0], parts[1], parts[2]); code != exitSetup || !strings.Contains(errOut, "shard 2/2 is missing (cells x86-64 builtin-v3") {
		t.Errorf("merge without builtin-v3's shard 2: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI("merge", "--out", filepath.Join(dir, "w"), d1, d2, parts[0], parts[1]); code != exitSetup || !strings.Contains(errOut, "is also in") {
		t.Errorf("merge of overlapping cells: exit %d: %s", code, errOut)
	}

	other, _ := run("other", "--shard", "2/2", "--seed", "5")
	if _, errOut, code := runCLI("merge", "--out", filepath.Join(dir, "y"), d1, other); code != exitSetup || !strings.Contains(errOut, "seed 5") {
		t.Errorf("merge of shards of two seeds: exit %d: %s", code, errOut)
	}
}

// checkJUnit reads a JUnit report back and checks it against the summary
// it was made of: a testsuite per cell, a testcase per pattern the cell
// met, a failure per pattern with failing programs listing reproducers
// that exist.
func checkJUnit(t *testing.T, path string, s *summary) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r junitSuites
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(r.Suites) != len(s.Cells) {
		t.Fatalf("%s: %d testsuites for %d cells", path, len(r.Suites), len(s.Cells))
	}
	tests, failures, skipped := 0, 0, 0
	for i, js := range r.Suites {
		c := s.Cells[i]
		if js.Name != cellKey(c) || js.Tests != len(js.Cases) {
			t.Errorf("testsuite %q: %d tests, %d testcases (cell %s)", js.Name, js.Tests, len(js.Cases), cellKey(c))
		}
		f, sk := 0, 0
		for _, jc := range js.Cases {
			r := c.ByPattern[jc.Name]
			switch {
			case jc.Failure != nil:
				f++
				if r == nil || r.Failed == 0 {
					t.Errorf("%s %s: a failure, but the summary has %+v", js.Name, jc.Name, r)
					continue
				}
				for _, p := range r.Reproducers {
					if !strings.Contains(jc.Failure.Text, p) {
						t.Errorf("%s %s: failure does not name %s", js.Name, jc.Name, p)
					}
					if _, err := os.Stat(p); err != nil {
						t.Errorf("%s %s: %v", js.Name, jc.Name, err)
					}
				}
			case jc.Skipped != nil:
				sk++
				if c.Status != "unsupported" && !slices.Contains(c.Unexpressed, jc.Name) {
					t.Errorf("%s %s: skipped in a cell that has it: %s", js.Name, jc.Name, jc.Skipped.Message)
				}
			default:
				if r == nil || r.Failed != 0 || r.Programs == 0 {
					t.Errorf("%s %s: passed, but the summary has %+v", js.Name, jc.Name, r)
				}
			}
		}
		want := 0
		for _, r := range c.ByPattern {
			if r.Failed > 0 {
				want++
			}
		}
		if f != want || js.Failures != f || js.Skipped != sk {
			t.Errorf("%s: %d failed testcases (attribute %d, skipped %d/%d), the summary has %d failing patterns", js.Name, f, js.Failures, js.Skipped, sk, want)
		}
		if c.Status == "unsupported" && sk != len(js.Cases) || c.Status != "unsupported" && len(js.Cases) < len(c.ByPattern) {
			t.Errorf("%s (%s): %d testcases, %d skipped, %d patterns met", js.Name, c.Status, len(js.Cases), sk, len(c.ByPattern))
		}
		tests, failures, skipped = tests+len(js.Cases), failures+f, skipped+sk
	}
	if r.Tests != tests || r.Failures != failures || r.Skipped != skipped || failures == 0 {
		t.Errorf("testsuites: tests %d failures %d skipped %d; counted %d %d %d", r.Tests, r.Failures, r.Skipped, tests, failures, skipped)
	}
}

// The shapes measured on a toolchain's sections add up over the shards.
func TestMergeAddsMeasuredLayouts(t *testing.T) {
	shard := func(with, of int) *cell {
		return &cell{Target: "x86-64", Producer: "gas-2.47", Consumer: "builtin", Status: "clean", Verdicts: map[string]int{},
			Layouts: []campaign.LayoutStatus{
				{Name: "fre-padding", Why: "the toolchain decides its section's layout", Measured: &campaign.LayoutCount{With: with, Of: of}, Produced: with > 0},
				{Name: "modules", Produced: true},
			}}
	}
	var m cell
	a, b := shard(0, 64), shard(3, 64)
	addCell(&m, a)
	addCell(&m, b)
	got := m.Layouts[0].Measured
	if got == nil || got.With != 3 || got.Of != 128 || !m.Layouts[0].Produced || !m.Layouts[1].Produced {
		t.Errorf("merged %+v (%+v), want 3 of 128 programs", m.Layouts, got)
	}
	if a.Layouts[0].Measured.With != 0 || a.Layouts[0].Measured.Of != 64 {
		t.Errorf("the first shard's cell changed: %+v", a.Layouts[0].Measured)
	}
}
