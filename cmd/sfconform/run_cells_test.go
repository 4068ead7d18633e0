package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/target"
)

// runCells below the flags: every cell of targets x producers x consumers
// runs its programs or says why not, and the table shows both.
func TestRunCellsTable(t *testing.T) {
	t.Parallel()
	cfg := runConfig{programs: 6, batch: 4, workers: 2, quiet: true, out: t.TempDir(), seed: 3,
		targets: []target.Target{target.X86_64}, producers: []string{"builtin-v2", "builtin-v3"}, consumers: []string{"builtin", "llvm-readobj-23"}}
	var stderr bytes.Buffer
	cells, _ := runCells(cfg, &stderr)
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	want := map[string]string{
		"x86-64 builtin-v2 x builtin": "clean", "x86-64 builtin-v2 x llvm-readobj-23": "clean",
		"x86-64 builtin-v3 x builtin": "clean", "x86-64 builtin-v3 x llvm-readobj-23": "unsupported",
	}
	for _, c := range cells {
		if c.Status != want[c.Name()] || c.Status == "clean" && (c.Programs != 6 || c.Instructions == 0 || c.Probes["OK"] == 0) {
			t.Errorf("%s: %s (%s), %d programs, probes %v", c.Name(), c.Status, c.Reason, c.Programs, c.Probes)
		}
	}
	var out bytes.Buffer
	printSummary(&out, cells)
	for _, s := range []string{"  probes  ", "x86-64 builtin-v3 x llvm-readobj-23: unsupported (", "patterns far-code", "not in the mix"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the table does not say %q:\n%s", s, out.String())
		}
	}
}

// The run's sink saves a failing program, minimized on the worker's own
// checker, whose backtrace count (--cbf-stats) the minimization's runs
// stay out of and which counts the cell's runs again afterwards.
func TestRunSinkSavesOnTheWorkersChecker(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	c := campaign.NewCell(abi, "builtin-v3", "builtin")
	campaign.Run(campaign.Config{Seeds: []int64{21}, Workers: 1}, []*cell{c}, &runSink{cfg: runConfig{quiet: true}})
	if c.Plan() == nil || c.Status != "clean" {
		t.Fatalf("the cell did not run: %+v", c)
	}
	bad, _, prog := brokenTable(t, abi)
	stats := &harness.BacktraceStats{}
	chk, err := harness.New(abi, harness.Options{Backtraces: stats})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	cons := consumer.NewBuiltin()
	res := chk.Check(bad, cons)
	if res.Clean() {
		t.Fatal("the broken table conforms")
	}
	counted := stats.Backtraces
	s := &runSink{cfg: runConfig{quiet: true, out: t.TempDir(), minimize: minimizeConfig{attempts: 50, time: 10e9}}}
	path := s.Program(&campaign.Checked{Cell: c, Program: campaign.Produced{Seed: 21, Img: bad, Prog: prog}, Result: res, Checker: chk, Consumer: cons})
	if _, err := os.Stat(path); path == "" || err != nil {
		t.Fatalf("no reproducer saved: %q, %v", path, err)
	}
	if stats.Backtraces != counted {
		t.Errorf("the minimization's runs were counted: %d backtraces, %d before", stats.Backtraces, counted)
	}
	if chk.Check(bad, cons); stats.Backtraces == counted {
		t.Error("the worker's checker no longer counts the cell's backtraces")
	}
}

// A failure that cannot be saved is counted, so that run exits 2 at the
// end instead of losing it quietly.
func TestRunSinkCountsUnsavedFailures(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	c := campaign.NewCell(abi, "builtin-v3", "builtin")
	bad, _, prog := brokenTable(t, abi)
	chk, err := harness.New(abi, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	cons := consumer.NewBuiltin()
	res := chk.Check(bad, cons)
	if res.Clean() {
		t.Fatal("the broken table conforms")
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	s := &runSink{cfg: runConfig{quiet: true, out: filepath.Join(file, "failures"), minimize: minimizeConfig{off: true}}, stderr: &stderr}
	if path := s.Program(&campaign.Checked{Cell: c, Program: campaign.Produced{Seed: 21, Img: bad, Prog: prog}, Result: res, Checker: chk, Consumer: cons}); path != "" {
		t.Fatalf("saved %q under a file", path)
	}
	if got := s.unsaved.Load(); got != 1 || !strings.Contains(stderr.String(), "saving the failure") {
		t.Errorf("unsaved = %d, stderr %q: want 1 and the error", got, stderr.String())
	}
}

// Output places are checked before anything runs, and a run in which
// every cell is unsupported is not green.
func TestRunRefusesBeforeRunningAndNothingChecked(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := cmdRun([]string{"-q", "--programs", "1", "--targets", "x86-64", "--out", filepath.Join(file, "f")}, &out, &errOut)
	if code != exitSetup || !strings.Contains(errOut.String(), "--out") || strings.Contains(errOut.String(), "seed ") {
		t.Errorf("an --out under a file: exit %d, stderr %q: want 2 before the run starts", code, errOut.String())
	}
	errOut.Reset()
	code = cmdRun([]string{"-q", "--programs", "1", "--targets", "x86-64", "--junit", t.TempDir()}, &out, &errOut)
	if code != exitSetup || !strings.Contains(errOut.String(), "is a directory") {
		t.Errorf("a directory as --junit: exit %d, stderr %q", code, errOut.String())
	}
	// builtin-v2 on s390x with a pattern v2 cannot express alone: every
	// cell unsupported.
	errOut.Reset()
	code = cmdRun([]string{"-q", "--programs", "1", "--targets", "x86-64", "--producer", "builtin-v2", "--patterns", "signal", "--out", t.TempDir()}, &out, &errOut)
	if code != exitSetup || !strings.Contains(errOut.String(), "nothing was checked") {
		t.Errorf("every cell unsupported: exit %d, stderr %q; want 2 and \"nothing was checked\"", code, errOut.String())
	}
}
