package packages

import "testing"

// TestTriageDynamicPLTGot: the dynamic check's wrong CFA in an x86-64
// .plt.got entry of ld 2.44/2.47 is 037's, as the static row is; the same
// in a function's code, in an object, on another target or with ld 2.40
// is new.
func TestTriageDynamicPLTGot(t *testing.T) {
	g := Group{Severity: "error", Kind: "dynamic",
		Key:     "dynamic [.plt.got]: WRONG at frame N (cfa), row of F, FDE X row +N; first in F variant N, step N (jmpq *X(%rip)): frame N cfa: expected pc=X cfa=X",
		Example: ".plt.got+0: WRONG at frame 0 (cfa), row of .plt.got+0, FDE 0x4150 row +0; first in parserCreate variant 0, step 13"}
	fn := g
	fn.Key = "dynamic [function]: WRONG at frame N (cfa), row of F, FDE X row +N; first in F variant N"
	dyn, rel := FileResult{Type: "DYN"}, FileResult{Type: "REL"}
	for _, c := range []struct {
		series, target string
		f              FileResult
		g              Group
		want           string
	}{
		{"2.47", "x86-64", dyn, g, "037-ld-x86-plt-got-cfa-16.md"},
		{"2.44", "x86-64", dyn, g, "037-ld-x86-plt-got-cfa-16.md"},
		{"2.40", "x86-64", dyn, g, ""},
		{"2.47", "aarch64", dyn, g, ""},
		{"2.47", "x86-64", rel, g, ""},
		{"2.47", "x86-64", dyn, fn, ""},
	} {
		r := &BuildResult{Package: "expat", Target: c.target, Series: c.series}
		if got := Triage(r, c.f, c.g); got != c.want {
			t.Errorf("%s %s %s %s: Triage = %q, want %q", c.series, c.target, c.f.Type, c.g.Key[:20], got, c.want)
		}
	}
}
