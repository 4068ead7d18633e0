package difffuzz

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestFuzzStats adds up the counts the workers of a FuzzConsumers run
// wrote to SFCONFORM_DIFFFUZZ_KEEP, and lists the reproducers kept there:
//
//	SFCONFORM_DIFFFUZZ_KEEP=/tmp/ff go test ./difffuzz -run TestFuzzStats -v
func TestFuzzStats(t *testing.T) {
	dir := os.Getenv("SFCONFORM_DIFFFUZZ_KEEP")
	if dir == "" {
		t.Skip("SFCONFORM_DIFFFUZZ_KEEP names no directory of a fuzzing run")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "stats-*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no stats files in %s (%v)", dir, err)
	}
	st := newStats()
	for _, p := range paths {
		var w workerStats
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &w)
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		st.Cases += w.Cases
		st.Steps += w.Steps
		st.Agreed += w.Agreed
		st.Glibc += w.Glibc
		st.Elapsed = max(st.Elapsed, w.Elapsed) // the workers run side by side
		for k, r := range w.Right {
			st.Examples[k] = Example{D: Disagreement{Right: r}}
		}
		for k, v := range w.ByClass {
			st.ByClass[k] += v
		}
		for k, v := range w.Crashes {
			st.Crashes[k] += v
		}
	}
	t.Logf("%d workers:\n%v", len(paths), st)
	if n := st.Unclassified(); n > 0 {
		t.Errorf("%d disagreements no rule explains: their reproducers are in %s", n, dir)
	}
	repros, _ := filepath.Glob(filepath.Join(dir, "*-*-*.json"))
	for _, p := range repros {
		if r, err := ReadRepro(p); err == nil {
			t.Logf("kept %s: %s", filepath.Base(p), Signature(Disagreement{Consumer: r.Consumer, Class: r.Class, Crash: r.Crash, Step: r.Step, Detail: r.Detail}))
		}
	}
}
