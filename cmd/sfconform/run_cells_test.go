package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// runCells below the flags: every cell of targets x producers x consumers
// runs its programs or says why not, and the table shows both.
func TestRunCellsTable(t *testing.T) {
	t.Parallel()
	cfg := runConfig{programs: 6, batch: 4, workers: 2, quiet: true, out: t.TempDir(), seed: 3,
		targets: []target.Target{target.X86_64}, producers: []string{"builtin-v2", "builtin-v3"}, consumers: []string{"builtin", "llvm-readobj-23"}}
	var stderr bytes.Buffer
	cells := runCells(cfg, &stderr)
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	want := map[string]string{
		"x86-64 builtin-v2 x builtin": "clean", "x86-64 builtin-v2 x llvm-readobj-23": "clean",
		"x86-64 builtin-v3 x builtin": "clean", "x86-64 builtin-v3 x llvm-readobj-23": "unsupported",
	}
	for _, c := range cells {
		if c.Status != want[c.Name()] || c.Status == "clean" && (c.Programs != 6 || c.Instructions == 0) {
			t.Errorf("%s: %s (%s), %d programs", c.Name(), c.Status, c.Reason, c.Programs)
		}
	}
	var out bytes.Buffer
	printSummary(&out, cells)
	for _, s := range []string{"x86-64 builtin-v3 x llvm-readobj-23: unsupported (", "patterns far-code", "not in the mix"} {
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
	_, prog, err := campaign.Produce(producer.Builtin{Version: 3}, abi, 21, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fdes := prog.FDEs()
	for i := range fdes {
		if fdes[i].Start == prog.Funcs[1].Addr {
			fdes[i].Rows[0].CFA.Offset += target.WordSize
		}
	}
	bad, err := producer.BuiltinFrom(prog, 3, fdes)
	if err != nil {
		t.Fatal(err)
	}
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
