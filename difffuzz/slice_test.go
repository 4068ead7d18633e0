package difffuzz

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSlice is the deterministic slice of the differential fuzzing that
// make test runs: every seed section unmutated, then a few hundred
// mutants of them (SFCONFORM_DIFFFUZZ_MUTANTS changes how many,
// SFCONFORM_DIFFFUZZ_SEED the mutations), asked of builtin, libsframe
// and, where a mutant passes validation, glibc. It fails on a
// disagreement no rule classifies, and writes each such case as a
// reproducer file to replay.
func TestSlice(t *testing.T) {
	seeds := seedsFor(t)
	r := runnerFor(t, true)
	n := envInt(t, "SFCONFORM_DIFFFUZZ_MUTANTS", 400)
	seed := int64(envInt(t, "SFCONFORM_DIFFFUZZ_SEED", 1))
	t.Logf("%d seed sections; %d mutants from seed %d (SFCONFORM_DIFFFUZZ_MUTANTS, SFCONFORM_DIFFFUZZ_SEED)", len(seeds), n, seed)
	dir := t.TempDir()
	if keep := os.Getenv("SFCONFORM_DIFFFUZZ_KEEP"); keep != "" {
		dir = keep
	}
	failed := 0
	st := Campaign(r, seeds, n, seed, func(o *Outcome) {
		for _, d := range o.Disagreements {
			if d.Class != Unclassified {
				continue
			}
			if failed++; failed <= 10 {
				path := filepath.Join(dir, reproName(d, o.Case)+".json")
				if err := WriteRepro(path, &Repro{Case: o.Case, Consumer: d.Consumer, Class: d.Class, Step: d.Step, Crash: d.Crash, Detail: d.Detail}); err != nil {
					t.Fatal(err)
				}
				t.Errorf("unclassified: %s\n  case %s\n  layout: %v\n  replay: SFCONFORM_REPRO=%s go test ./difffuzz -run TestRepros -v",
					d, o.Case.Name, o.Layout.broken, path)
			}
		}
	})
	t.Logf("%v", st)
	if failed > 10 {
		t.Errorf("... %d unclassified disagreements in all", failed)
	}
	if st.Cases != len(seeds)+n {
		t.Fatalf("%d cases asked, want %d", st.Cases, len(seeds)+n)
	}
}
