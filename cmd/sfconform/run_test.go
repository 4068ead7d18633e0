package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/repro"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

func TestRunCleanExitsZero(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code := cmdRun([]string{"--programs", "3", "--targets", "x86-64,s390x", "--producer", "builtin-v3", "--seed", "5", "-q", "--out", out}, io.Discard, io.Discard)
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if files, _ := os.ReadDir(out); len(files) != 0 {
		t.Fatalf("a clean run saved %d reproducers", len(files))
	}
}

// A version's cells name the patterns it cannot express, as unsupported:
// they are not in its mix, and nothing fails for them.
func TestRunListsUnexpressedPatterns(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	code := cmdRun([]string{"--programs", "2", "--targets", "aarch64", "--producer", "builtin-v2,builtin-v3", "--seed", "3", "-q", "--out", t.TempDir()}, &stdout, io.Discard)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stdout.String())
	}
	_, line, _ := strings.Cut(stdout.String(), "aarch64 builtin-v2 x builtin: patterns ")
	line, _, _ = strings.Cut(line, "\n")
	if !strings.Contains(line, "far-code") || !strings.Contains(line, "empty-fde") || strings.Contains(line, "new-stack") ||
		!strings.HasSuffix(line, "unsupported (SFrame v2 cannot express them), not in the mix") ||
		strings.Contains(stdout.String(), "builtin-v3 x builtin: patterns") {
		t.Errorf("summary does not list v2's unexpressed patterns (and only those):\n%s", stdout.String())
	}
}

func TestRunBadFlagsExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--targets", "vax"},
		{"--versions", "3"},
		{"--producer", "builtin-v1"},
		{"--patterns", "nonesuch"},
		{"--producer", ""},
		{"--seed", "x"},
		{"stray"},
		{"--consumer", "nonesuch"},
		{"--programs", "0"},
		{"--bogus"},
	} {
		if code := cmdRun(args, io.Discard, io.Discard); code != exitSetup {
			t.Errorf("%v: exit %d, want %d", args, code, exitSetup)
		}
	}
}

// failingCase saves a reproducer of a table whose root function's CFA is
// one word off, and returns it with the image the fixed table gives.
func failingCase(t *testing.T, abi target.Target) (string, *image.Image) {
	t.Helper()
	bad, good, prog := brokenTable(t, abi)
	chk, err := harness.New(abi, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	res := chk.Check(bad, consumer.NewBuiltin())
	if res.Clean() {
		t.Fatal("the broken table conforms")
	}
	path, err := corpus.Save(t.TempDir(), repro.NewCase(repro.CaseInput{Img: bad, Prog: prog, Seed: 21, ConsumerName: "builtin", Res: res}))
	if err != nil {
		t.Fatal(err)
	}
	return path, good
}

func TestReplay(t *testing.T) {
	t.Parallel()
	path, good := failingCase(t, target.AArch64BE)
	var out bytes.Buffer
	if code := replayCase(path, "builtin", false, &out, io.Discard); code != exitFailure {
		t.Fatalf("replaying a failing case: exit %d\n%s", code, out.String())
	}
	if s := out.String(); !strings.Contains(s, "now:") || !strings.Contains(s, "WRONG") || !strings.Contains(s, "expected") {
		t.Fatalf("replay output does not show the failure again:\n%s", s)
	}

	// The same case with the table fixed no longer reproduces.
	c, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c.SFrame = good.SFrame
	fixed, err := corpus.Save(filepath.Dir(path), c)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := replayCase(fixed, "builtin", false, &out, io.Discard); code != exitOK || !strings.Contains(out.String(), "no longer reproduces") {
		t.Fatalf("replaying a fixed case: exit %d\n%s", code, out.String())
	}

	// A corrupt file is a setup error, not a crash.
	raw, _ := os.ReadFile(path)
	corrupt := filepath.Join(t.TempDir(), "corrupt.json")
	os.WriteFile(corrupt, raw[:len(raw)/3], 0o644)
	if code := replayCase(corrupt, "builtin", false, &out, io.Discard); code != exitSetup {
		t.Fatalf("corrupt case: exit %d", code)
	}
	if code := replayCase(filepath.Join(t.TempDir(), "missing.json"), "builtin", false, &out, io.Discard); code != exitSetup {
		t.Fatalf("missing case: exit %d", code)
	}
}

// The C consumers run through the main job like any other: every target
// and SFrame version they read, sections from the builtin producer, every
// step judged OK. A consumer setup has not built skips (or fails once setup
// has run).
func TestRunCConsumers(t *testing.T) {
	t.Parallel()
	// The classic patterns only: what each consumer makes of signal
	// frames, empty FDEs, calls as a function's last instruction and the
	// rest is the toolchain matrix's business (expected deviations).
	classic := []string{"--patterns", "leaf,fp-frame,sp-frame,callee-saved,multi-epilogue,tail-call"}
	for name, args := range map[string][]string{
		"libsframe": classic,
		// On AArch64 glibc cannot unwind a frame whose RA is still in
		// the link register: a declared limitation, not checked here.
		"glibc":        append([]string{"--producer", "builtin-v2", "--targets", "x86-64"}, classic...),
		"glibc:strict": append([]string{"--producer", "builtin-v2", "--targets", "x86-64"}, classic...),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := consumer.New(name)
			testenv.IfNotProvisioned(t, err)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			var stdout, stderr bytes.Buffer
			code := cmdRun(append([]string{"--programs", "4", "--consumer", name, "--seed", "11", "-q", "--json", "--out", t.TempDir()}, args...), &stdout, &stderr)
			if name == "glibc:strict" {
				// backtrace() drops every trace that reaches the
				// outermost row: every step is NOINFO.
				var s summary
				if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || code != exitFailure {
					t.Fatalf("exit %d, %v:\n%s", code, err, stderr.String())
				}
				for _, c := range s.Cells {
					if c.Instructions == 0 || c.Verdicts["NOINFO"] != c.Instructions {
						t.Errorf("%s %s: %v of %d instructions, want all NOINFO", c.Target, c.Producer, c.Verdicts, c.Instructions)
					}
				}
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
			}
			var s summary
			if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, c := range s.Cells {
				if c.Status == "clean" {
					checked++
				}
			}
			if checked == 0 {
				t.Fatalf("%s checked no cell:\n%s", name, stdout.String())
			}
		})
	}
}

// A toolchain producer's cells record the exact packages they ran and the
// differential against sfconform's own encoding; the table shows both.
func TestRunToolchainProducer(t *testing.T) {
	t.Parallel()
	if _, err := producer.New("gas-2.47"); err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.47: %v", err)
	}
	var stdout bytes.Buffer
	args := []string{"--programs", "6", "--batch", "4", "--targets", "aarch64,s390x", "--producer", "gas-2.47,gas-2.44", "--seed", "9", "-q", "--out", t.TempDir()}
	code := cmdRun(append(args, "--json"), &stdout, io.Discard)
	if code == exitSetup {
		t.Fatalf("exit %d:\n%s", code, stdout.String())
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range sum.Cells {
		if c.Producer == "gas-2.44" && c.Target == "s390x" {
			if c.Status != "unsupported" || !strings.Contains(c.Reason, "not supported for target") {
				t.Errorf("gas-2.44 on s390x: %s (%s), want unsupported with GNU as's reason", c.Status, c.Reason)
			}
			continue
		}
		seen++
		if c.Programs != 6 || !strings.Contains(c.ProducerVersion, "(Debian ") || c.Packages == "" || c.Differs == nil {
			t.Errorf("%s %s: %d programs, version %q, packages %q, differential %v", c.Target, c.Producer, c.Programs, c.ProducerVersion, c.Packages, c.Differs)
		}
	}
	if seen != 3 {
		t.Errorf("%d cells ran, want 3", seen)
	}
	stdout.Reset()
	cmdRun(args, &stdout, io.Discard)
	if s := stdout.String(); !strings.Contains(s, "differs") || !strings.Contains(s, "2.47.50") || !strings.Contains(s, "gas-2.47: as 2.47") {
		t.Errorf("the table shows no differential or versions:\n%s", s)
	}
}
