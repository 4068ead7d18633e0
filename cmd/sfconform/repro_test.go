package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// repro's exit status: 1 while the case fails, 0 once it conforms, 2 for a
// bad file or a producer or consumer that is not provisioned.
func TestReproExitStatus(t *testing.T) {
	t.Parallel()
	path, good := failingCase(t, target.X86_64)
	var out, errOut bytes.Buffer
	if code := cmdRepro([]string{path}, &out, &errOut); code != exitFailure {
		t.Fatalf("a failing case: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	// The table around the failing step: the step marked, its
	// instruction, the row, and the frames with the rows they took.
	for _, want := range []string{"step  address", ">", "WRONG", "row in the section", "expected pc=", "rows used, frame by frame"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("repro's output lacks %q:\n%s", want, out.String())
		}
	}
	c, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c.SFrame = good.SFrame
	fixed := filepath.Join(t.TempDir(), "fixed.json")
	if err := corpus.WriteFile(fixed, c); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := cmdRepro([]string{fixed}, &out, io.Discard); code != exitOK || !strings.Contains(out.String(), "no longer reproduces") {
		t.Errorf("a fixed case: exit %d\n%s", code, out.String())
	}
	// run --replay is the same command.
	if code := cmdRun([]string{"--replay", path}, io.Discard, io.Discard); code != exitFailure {
		t.Errorf("run --replay of a failing case: exit %d", code)
	}

	raw, _ := os.ReadFile(path)
	bad := map[string][]byte{
		"truncated": raw[:len(raw)/2],
		"newer":     []byte(strings.Replace(string(raw), corpus.FormatName, "sfconform-case/9", 1)),
	}
	for name, b := range bad {
		p := filepath.Join(t.TempDir(), name+".json")
		os.WriteFile(p, b, 0o644)
		errOut.Reset()
		if code := cmdRepro([]string{p}, io.Discard, &errOut); code != exitSetup {
			t.Errorf("%s file: exit %d", name, code)
		}
		if !strings.Contains(errOut.String(), p) || !strings.Contains(errOut.String(), "field") {
			t.Errorf("%s file: %q does not name the file and the field", name, errOut.String())
		}
	}
	// A case without generator coordinates (format 1) cannot be remade.
	c.Generator = nil
	nogen := filepath.Join(t.TempDir(), "nogen.json")
	if err := corpus.WriteFile(nogen, c); err != nil {
		t.Fatal(err)
	}
	// A producer or consumer that is not provisioned: 2, saying what setup
	// provides.
	for _, args := range [][]string{
		{"--producer", "gas-9.99", path},
		{"--consumer", "objdump-9.99", path},
		{"--remake", nogen},
	} {
		errOut.Reset()
		code := cmdRepro(args, io.Discard, &errOut)
		if code != exitSetup {
			t.Errorf("%v: exit %d\n%s", args, code, errOut.String())
		}
	}
	errOut.Reset()
	cmdRepro([]string{"--producer", "gas-9.99", path}, io.Discard, &errOut)
	if !strings.Contains(errOut.String(), "make setup") {
		t.Errorf("an unprovisioned producer: %q does not name the setup step", errOut.String())
	}
}

// Every failure run saves is minimized, in format 2, and replays with
// repro; --no-minimize keeps the program as it failed.
func TestRunSavesMinimizedCases(t *testing.T) {
	t.Parallel()
	if _, err := producer.New("gas-2.44"); err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.44: %v", err)
	}
	for _, minimize := range []bool{true, false} {
		dir := t.TempDir()
		args := []string{"--producer", "gas-2.44", "--targets", "x86-64", "--programs", "3", "--seed", "4", "-q", "--out", dir}
		if !minimize {
			args = append(args, "--no-minimize")
		}
		if code := cmdRun(args, io.Discard, io.Discard); code != exitFailure {
			t.Fatalf("%v: exit %d", args, code)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) != 3 {
			t.Fatalf("%v: %d reproducers, want 3", args, len(files))
		}
		for _, f := range files {
			c, err := corpus.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			m := c.Minimization
			switch {
			case c.Format != corpus.FormatName || m == nil || c.Machine == nil || c.Generator == nil || len(c.Build) != 2:
				t.Errorf("%s: format %s, minimization %+v, machine %v, generator %v, build %v", f, c.Format, m, c.Machine != nil, c.Generator, c.Build)
			case minimize && (m.Skipped != "" || m.Minimized.Bytes >= m.Original.Bytes || len(c.Generator.Reductions) == 0):
				t.Errorf("%s: not minimized: %+v", f, m)
			case !minimize && m.Skipped != "--no-minimize":
				t.Errorf("%s: --no-minimize gave %+v", f, m)
			}
			if code := cmdRepro([]string{f}, io.Discard, io.Discard); code != exitFailure {
				t.Errorf("%s: repro exit %d", f, code)
			}
		}
	}
}

// --cbf-stats counts every judged step's backtrace once.
func TestRunCBFStats(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := cmdRun([]string{"--producer", "builtin-v3", "--targets", "aarch64,s390x", "--programs", "20", "--seed", "3", "-q", "--json", "--cbf-stats"}, &out, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var s struct {
		Cells []struct {
			Instructions int `json:"instructions"`
		} `json:"cells"`
		Backtraces *backtraceFigure `json:"backtraces"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, c := range s.Cells {
		steps += c.Instructions
	}
	b := s.Backtraces
	if b == nil || b.Backtraces != steps || b.PlainBytes != 8*b.Frames || b.CBFBytes == 0 || b.CBFBytes >= b.PlainBytes {
		t.Errorf("figure %+v over %d judged steps", b, steps)
	}
}
