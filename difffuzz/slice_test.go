package difffuzz

import (
	"os"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
)

// TestSlice is the deterministic slice of the differential fuzzing that
// make test runs: every seed section unmutated, then a few hundred
// mutants of them (SFCONFORM_DIFFFUZZ_MUTANTS changes how many,
// SFCONFORM_SEED the mutations), asked of builtin, libsframe
// and, where a mutant passes validation, glibc. It fails on a
// disagreement no rule classifies. Each crash and each unclassified
// disagreement of a new kind is written as a reproducer file, to a
// temporary directory, or to SFCONFORM_DIFFFUZZ_KEEP; with
// SFCONFORM_DIFFFUZZ_KEEP_ALL=1 also the first of every class, which is how
// testdata/repros was filled.
func TestSlice(t *testing.T) {
	seeds := seedsFor(t)
	r := runnerFor(t, true)
	n := envInt(t, "SFCONFORM_DIFFFUZZ_MUTANTS", 400)
	seed := int64(testenv.Seed(t, 1))
	t.Logf("%d seed sections; %d mutants from seed %d (SFCONFORM_DIFFFUZZ_MUTANTS, SFCONFORM_SEED)", len(seeds), n, seed)
	dir := t.TempDir()
	if keep := os.Getenv("SFCONFORM_DIFFFUZZ_KEEP"); keep != "" {
		dir = keep
	}
	keep, err := NewKeeper(dir)
	if err != nil {
		t.Fatal(err)
	}
	keep.Runner = runnerFor(t, true) // its own processes: Campaign's are busy
	all := os.Getenv("SFCONFORM_DIFFFUZZ_KEEP_ALL") == "1"
	keep.PerClass = all
	failed, kept := 0, 0
	st := Campaign(r, seeds, n, seed, func(o *Outcome) {
		for _, d := range o.Disagreements {
			if !d.Crash && d.Class != Unclassified && !all {
				continue
			}
			path, err := keep.Keep(o.Case, d)
			if err != nil {
				t.Fatal(err)
			}
			if path != "" {
				kept++
			}
			if d.Class != Unclassified {
				continue
			}
			if path == "" {
				path = "(one of this kind is kept already)"
			}
			if failed++; failed <= 10 {
				t.Errorf("unclassified: %s\n  case %s\n  layout: %v\n  replay: SFCONFORM_REPRO=%s go test ./difffuzz -run TestRepros -v",
					d, o.Case.Name, o.Layout.broken, path)
			}
		}
	})
	t.Logf("%d reproducers of new kinds written to %s", kept, dir)
	t.Logf("%v", st)
	if failed > 10 {
		t.Errorf("... %d unclassified disagreements in all", failed)
	}
	if st.Cases != len(seeds)+n {
		t.Fatalf("%d cases asked, want %d", st.Cases, len(seeds)+n)
	}
}
