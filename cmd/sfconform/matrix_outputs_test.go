package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// matrix overwrites the committed matrix only when the command line names
// it, and refuses before running otherwise.
func TestMatrixRefusesToOverwriteUnasked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "matrix.md")
	cases := filepath.Join(dir, "cases")
	os.WriteFile(out, []byte("committed"), 0o644)
	os.MkdirAll(cases, 0o755)
	os.WriteFile(filepath.Join(cases, "one.json"), []byte("{}"), 0o644)
	parse := func(args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
		fs.String("out", out, "")
		fs.String("cases", cases, "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	if err := checkMatrixOutputs(parse(), out, cases); err == nil || !strings.Contains(err.Error(), "--out "+out) {
		t.Errorf("defaults over an existing matrix: %v, want a refusal naming --out", err)
	}
	if err := checkMatrixOutputs(parse("--out", out), out, cases); err == nil || !strings.Contains(err.Error(), "--cases "+cases) {
		t.Errorf("default --cases over stored cases: %v, want a refusal naming --cases", err)
	}
	if err := checkMatrixOutputs(parse("--out", out, "--cases", cases), out, cases); err != nil {
		t.Errorf("both named: %v", err)
	}
	if err := checkMatrixOutputs(parse(), "-", ""); err != nil {
		t.Errorf("stdout and no cases: %v", err)
	}
	if got := matrixCommand(strings.Fields(makeMatrixArgs)); got != "make matrix" {
		t.Errorf("make matrix's arguments print as %q", got)
	}
}
