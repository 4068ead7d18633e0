package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

func runCLI(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return o.String(), e.String(), code
}

// Every subcommand answers -h and --help with its usage on stdout and
// exit 0, and "help CMD" prints the same.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	if len(subcommands) < 3 {
		t.Fatalf("only %d subcommands registered", len(subcommands))
	}
	for name := range subcommands {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			out, errOut, code := runCLI(args...)
			if code != exitOK || !strings.Contains(out, "usage: sfconform "+name) || !strings.Contains(out, "Flags:") {
				t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		if out, _, code := runCLI(args...); code != exitOK || !strings.Contains(out, "commands:") {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
	}
	if _, errOut, code := runCLI("help", "nonesuch"); code != exitSetup || !strings.Contains(errOut, "nonesuch") {
		t.Errorf("help nonesuch: exit %d, %q", code, errOut)
	}
	if _, _, code := runCLI(); code != exitSetup {
		t.Errorf("no arguments: exit %d", code)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI("--version")
	if code != exitOK || !strings.HasPrefix(out, "sfconform ") || !strings.Contains(out, "go1.") {
		t.Fatalf("--version: exit %d, %q", code, out)
	}
}

func TestStrayArgumentsAreErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "extra"},
		{"toolchains", "extra"},
		{"dump", "a", "b"},
		{"run", "--programs", "1", "--", "x"},
	} {
		_, errOut, code := runCLI(args...)
		if code != exitSetup || !strings.Contains(errOut, "unexpected argument") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// dump - reads the section from standard input.
// TestDumpStdin replaces os.Stdin, so it does not run in parallel.
func TestDumpStdin(t *testing.T) {
	stem := fixtureDir + "/x86-64/prologues"
	f, err := os.Open(stem + ".sframe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	addr, err := os.ReadFile(stem + ".sframe.addr")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(stem + ".objdump.txt")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	out, errOut, code := runCLI("dump", "--raw", "--base", strings.TrimSpace(string(addr)), "-")
	if code != exitOK || out != string(want) {
		t.Fatalf("dump -: exit %d, stderr %q\n got %q\nwant %q", code, errOut, out, want)
	}
}

// --json writes the summary as JSON; --seed 0 is a seed like any other:
// two runs with it check the same programs.
func TestRunJSONAndSeedZero(t *testing.T) {
	t.Parallel()
	run := func() (summary, string) {
		out, errOut, code := runCLI("run", "--json", "--seed", "0", "--programs", "4", "--targets", "aarch64",
			"--producer", "builtin-v2,builtin-v3", "-q", "--out", t.TempDir())
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var s summary
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("stdout is not the JSON summary: %v\n%s", err, out)
		}
		return s, errOut
	}
	a, errOut := run()
	if !strings.Contains(errOut, "seed 0,") {
		t.Errorf("stderr does not say seed 0: %q", errOut)
	}
	if a.Seed != 0 || a.Programs != 4 || len(a.Cells) != 2 {
		t.Fatalf("summary %+v", a)
	}
	for _, c := range a.Cells {
		if c.Status != "clean" || c.Programs != 4 || c.Instructions == 0 || c.Verdicts["OK"] != c.Instructions || c.Target != "aarch64" {
			t.Errorf("cell %+v", *c)
		}
	}
	b, _ := run()
	for i := range a.Cells {
		if a.Cells[i].Instructions != b.Cells[i].Instructions {
			t.Errorf("--seed 0 twice: %d vs %d instructions in cell %d", a.Cells[i].Instructions, b.Cells[i].Instructions, i)
		}
	}
}

func TestRunList(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI("run", "--list")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"PRODUCER", "builtin-v2", "builtin-v3", "CONSUMER", "builtin", "v1,v2,v3", "libsframe", "SETUP", "VERSION", "built in", "its own unwinder"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list does not show %q:\n%s", want, out)
		}
	}
}

// TestMain lets the test binary stand in for the sfconform command when
// SFCONFORM_TEST_MAIN=1, so tests can start it as an external consumer.
func TestMain(m *testing.M) {
	if os.Getenv("SFCONFORM_TEST_MAIN") == "1" {
		os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The protocol's reference server judged through the exec consumer gives
// exactly the in-process consumer's verdicts.
func TestExecServeMatchesBuiltin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(cons string) summary {
		out, errOut, code := runCLI("run", "--json", "--seed", "11", "--programs", "3", "--targets", "s390x,aarch64_be",
			"--producer", "builtin-v3", "--consumer", cons, "-q", "--out", t.TempDir())
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", cons, code, errOut)
		}
		var s summary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := run("builtin")
	b := run("exec:SFCONFORM_TEST_MAIN=1 exec " + exe + " serve")
	for i := range a.Cells {
		ca, cb := a.Cells[i], b.Cells[i]
		if ca.Instructions == 0 || ca.Instructions != cb.Instructions || !reflect.DeepEqual(ca.Verdicts, cb.Verdicts) {
			t.Errorf("cell %d: builtin %d instructions %v, exec %d %v", i, ca.Instructions, ca.Verdicts, cb.Instructions, cb.Verdicts)
		}
	}
}

// --patterns builds programs from the patterns named; a cell whose target
// lacks them, or whose SFrame version cannot express them, is unsupported.
func TestRunPatterns(t *testing.T) {
	out, errOut, code := runCLI("run", "--json", "--seed", "3", "--programs", "2", "--targets", "x86-64,aarch64",
		"--producer", "builtin-v2,builtin-v3", "--patterns", "drap", "-q", "--out", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cells {
		want := "unsupported"
		if c.Target == "x86-64" && c.Producer == "builtin-v3" {
			want = "clean" // drap is x86-64's and needs v3
		}
		if c.Status != want {
			t.Errorf("%s %s: status %s (%s), want %s", c.Target, c.Producer, c.Status, c.Reason, want)
		}
	}
}

// The former spelling of csmith's --consumer still sets it.
func TestAliasFlagSetsTarget(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	v := fs.String("consumer", "builtin", "")
	fs.Var(aliasFlag{fs.Lookup("consumer")}, "consumers", "")
	if err := fs.Parse([]string{"--consumers", "libsframe"}); err != nil {
		t.Fatal(err)
	}
	if *v != "libsframe" {
		t.Fatalf("--consumers set %q, want libsframe", *v)
	}
}
