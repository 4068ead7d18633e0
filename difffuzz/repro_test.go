package difffuzz

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// reproDir holds the kept reproducers: every crash the fuzzing found, and
// disagreements worth keeping, one JSON file each.
const reproDir = "testdata/repros"

// TestRepros replays every kept reproducer (and the file named by
// SFCONFORM_REPRO, if set): the case is asked again and must show the same
// disagreement (consumer, step, crash or not) with the same class. A
// reproducer whose behaviour went away (libsframe fixed) fails here, and
// so does a kept one that is still unclassified. One file:
//
//	go test ./difffuzz -run 'TestRepros/NAME' -v
//	SFCONFORM_REPRO=path/to/file.json go test ./difffuzz -run TestRepros -v
func TestRepros(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(reproDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("SFCONFORM_REPRO"); p != "" {
		// go test runs in the package's directory: a path from the
		// repository's root (difffuzz/testdata/...) is taken as one.
		if _, err := os.Stat(p); err != nil && !filepath.IsAbs(p) {
			p = filepath.Join("..", p)
		}
		paths = []string{p}
	}
	if len(paths) == 0 {
		t.Fatalf("no reproducers under %s", reproDir)
	}
	sort.Strings(paths)
	r := runnerFor(t, true)
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		t.Run(name, func(t *testing.T) {
			rep, err := ReadRepro(p)
			if err != nil {
				t.Fatal(err)
			}
			o := r.Run(rep.Case)
			t.Logf("case %s: %d steps", rep.Case.Name, len(rep.Case.Steps))
			t.Logf("layout: %v", o.Layout.broken)
			var found *Disagreement
			for i, d := range o.Disagreements {
				t.Logf("  %v", d)
				if d.Consumer == rep.Consumer && d.Step == rep.Step && d.Crash == rep.Crash && found == nil {
					found = &o.Disagreements[i]
				}
			}
			// A read past the section lands in whatever the C library's
			// heap holds there: another host (sid's glibc in the project's
			// image) crashes elsewhere or not at all. What repeats is the
			// malformed layout and the consumer's disagreement.
			layoutDependent := rep.Class == "libsframe-crash-reading-outside" && len(o.Layout.broken) > 0
			if (rep.Nondeterministic || layoutDependent) && found == nil {
				// The crash did not repeat when it was kept either; what
				// repeats is that the consumer disagrees on the case.
				for _, d := range o.Disagreements {
					if d.Consumer == rep.Consumer {
						t.Logf("nondeterministic crash (%s) did not repeat; %s still disagrees: %v", rep.Class, d.Consumer, d)
						return
					}
				}
			}
			switch {
			case found == nil:
				t.Fatalf("kept as %s at step %d (crash %v): %s\nnow no such disagreement", rep.Class, rep.Step, rep.Crash, rep.Detail)
			case found.Class != rep.Class:
				t.Fatalf("kept as class %s, now classified %s: %v", rep.Class, found.Class, found)
			case found.Class == Unclassified:
				t.Fatalf("still unclassified: %v", found)
			}
		})
	}
}
