package deviation

import (
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

const finding = "docs/findings/008-x.md"

// Every malformed line is reported with its file and line, the good lines
// around it notwithstanding.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"gas-2.44/* all entry WRONG", "want CELL TARGET PATTERN VERDICT FINDING"},
		{"gas-2.44 all entry WRONG " + finding, "want PRODUCER/CONSUMER"},
		{"*/* all entry WRONG " + finding, "keyed by a producer or a consumer"},
		{"/libsframe all entry WRONG " + finding, "want PRODUCER/CONSUMER"},
		{"gas-2.44/* sparc entry WRONG " + finding, `target "sparc"`},
		{"gas-2.44/* x86-64,x86-64 entry WRONG " + finding, "named twice"},
		{"gas-2.44/* all all WRONG " + finding, "name one pattern, or * for a whole cell"},
		{"gas-2.44/* all * WRONG " + finding, "only an entry naming both"},
		{"*/libsframe all * WRONG " + finding, "only an entry naming both"},
		{"gas-2.44,/libsframe all entry WRONG " + finding, "each * or names separated by commas"},
		{"gas-2.44,*/libsframe all entry WRONG " + finding, "each * or names separated by commas"},
		{"gas-2.44/glibc,libsframe,glibc all entry WRONG " + finding, "glibc named twice"},
		{"gas-2.44/* all entry WRONGISH " + finding, "want WRONG, NOINFO, ERROR or INVALID"},
		{"gas-2.44/* all entry OK " + finding, "deviates from nothing"},
		{"gas-2.44/* all entry WRONG:colour " + finding, "WRONG's field is one of"},
		{"gas-2.44/* all entry NOINFO:cfa " + finding, "NOINFO's field"},
		{"gas-2.44/* all entry ERROR:cfa " + finding, "ERROR's field"},
		{"gas-2.44/* all section INVALID " + finding, "INVALID names its rule"},
		{"gas-2.44/* all entry INVALID:FDEs_not_sorted " + finding, "INVALID names its rule"},
		{"gas-2.44/* all entry ERROR:load " + finding, "charged to the pattern section"},
		{"gas-2.44/* all entry WRONG https://example.org/bug", "want docs/findings/NNN-slug.md"},
		{"gas-2.44/* all entry WRONG " + finding + " max=3", "only min=N"},
		{"gas-2.44/* all entry WRONG,NOINFO:cfa " + finding, "NOINFO's field"},
		{"gas-2.44/* all entry WRONG,WRONG " + finding, "verdict WRONG named twice"},
		{"gas-2.44/* all entry ERROR, " + finding, `verdict ""`},
		{"gas-2.44/* all entry WRONG " + finding + " min=0", "at least 1"},
	} {
		text := "# a comment\n\ngas-2.40/* all entry WRONG:outermost " + finding + "\n" + tc.line + "  # why\n"
		_, err := Parse(strings.NewReader(text), "list.txt")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.File != "list.txt" || pe.Line != 4 || !strings.Contains(err.Error(), tc.want) ||
			!strings.HasPrefix(err.Error(), "list.txt:4: ") {
			t.Errorf("%q: got %v, want list.txt:4: ...%s...", tc.line, err, tc.want)
		}
	}
}

func TestParseReportsEveryBadLineAndDuplicates(t *testing.T) {
	t.Parallel()
	text := "gas-2.40/* all entry WRONG " + finding + "\nbad\ngas-2.40/* all entry WRONG " + finding + "\nworse\n"
	_, err := Parse(strings.NewReader(text), "l")
	for _, want := range []string{"l:2: ", "l:3: the same cell, target, pattern and verdict as line 1", "l:4: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q in it", err, want)
		}
	}
}

func TestParseEntry(t *testing.T) {
	t.Parallel()
	l, err := Parse(strings.NewReader("\n*/objdump-2.44  x86-64,aarch64  section  INVALID:FDEs_not_sorted  "+finding+"  min=40\n"), "l")
	if err != nil {
		t.Fatal(err)
	}
	e := l.Entries[0]
	if e.Line != 2 || e.Producer != "*" || e.Consumer != "objdump-2.44" || len(e.Targets) != 2 || e.Pattern != "section" ||
		len(e.Verdicts) != 1 || e.Verdicts[0] != (VerdictField{verdict.Invalid, "FDEs not sorted"}) || e.Finding != finding || e.Min != 40 {
		t.Fatalf("%+v", e)
	}
	if got := e.String(); got != "l:2 (*/objdump-2.44 x86-64,aarch64 section INVALID:FDEs not sorted)" {
		t.Errorf("String() = %q", got)
	}
}

// An entry matches its own key only: every coordinate that differs makes
// it miss.
func TestMatchIsNarrow(t *testing.T) {
	t.Parallel()
	l, err := Parse(strings.NewReader(`
gas-2.44/*       x86-64,aarch64  entry      WRONG:outermost  `+finding+`
*/libsframe      all             far-code   NOINFO           `+finding+`
gas-2.40/glibc   all             drap       WRONG            `+finding+`
gas-2.44/libsframe  s390x        *          ERROR            `+finding+`
llvm-mc-23/builtin  x86-64       signal-empty-fde  ERROR,WRONG:pc  `+finding+`
llvm-mc-23,gas-2.47/objdump-2.47,glibc  x86-64  *  NOINFO        `+finding+`
`), "l")
	if err != nil {
		t.Fatal(err)
	}
	hit := []Key{
		{"gas-2.44", "builtin", target.X86_64, "entry", verdict.Wrong, "outermost"},
		{"gas-2.44", "objdump-2.44", target.AArch64, "entry", verdict.Wrong, "outermost"},
		{"builtin-v3", "libsframe", target.S390X, "far-code", verdict.NoInfo, ""},
		{"gas-2.40", "glibc", target.X86_64, "drap", verdict.Wrong, "cfa"},
		{"gas-2.44", "libsframe", target.S390X, "leaf", verdict.Error, ""},
		{"gas-2.44", "libsframe", target.S390X, "entry", verdict.Error, "load"},
		{"llvm-mc-23", "glibc", target.X86_64, "leaf", verdict.NoInfo, ""},
		{"gas-2.47", "objdump-2.47", target.X86_64, "leaf", verdict.NoInfo, ""},
		{"llvm-mc-23", "builtin", target.X86_64, "signal-empty-fde", verdict.Error, ""},
		{"llvm-mc-23", "builtin", target.X86_64, "signal-empty-fde", verdict.Wrong, "pc"},
	}
	for _, k := range hit {
		if l.Match(k) == nil {
			t.Errorf("%v: no match", k)
		}
	}
	miss := []Key{
		{"gas-2.47", "builtin", target.X86_64, "entry", verdict.Wrong, "outermost"},    // other producer
		{"gas-2.44", "builtin", target.AArch64BE, "entry", verdict.Wrong, "outermost"}, // other target
		{"gas-2.44", "builtin", target.X86_64, "leaf", verdict.Wrong, "outermost"},     // other pattern
		{"gas-2.44", "builtin", target.X86_64, "entry", verdict.Wrong, "pc"},           // other field
		{"gas-2.44", "builtin", target.X86_64, "entry", verdict.NoInfo, ""},            // other verdict
		{"builtin-v3", "glibc", target.X86_64, "far-code", verdict.NoInfo, ""},         // other consumer
		{"builtin-v3", "libsframe", target.X86_64, "far-code", verdict.Error, ""},      // other verdict
		{"gas-2.40", "glibc:strict", target.X86_64, "drap", verdict.Wrong, "cfa"},      // other consumer
		{"gas-2.44", "libsframe", target.S390X, "leaf", verdict.NoInfo, ""},            // * covers patterns, not verdicts
		{"gas-2.44", "glibc", target.S390X, "leaf", verdict.Error, ""},                 // nor other cells
		{"llvm-mc-23", "libsframe", target.X86_64, "leaf", verdict.NoInfo, ""},         // not in the list
		{"gas-2.44", "glibc", target.X86_64, "leaf", verdict.NoInfo, ""},               // not in the list
		{"llvm-mc-23", "builtin", target.X86_64, "signal-empty-fde", verdict.Wrong, "cfa"},
		{"llvm-mc-23", "builtin", target.X86_64, "signal-empty-fde", verdict.NoInfo, ""},
	}
	for _, k := range miss {
		if e := l.Match(k); e != nil {
			t.Errorf("%v: matched by %v", k, e)
		}
	}
	if got := l.For("gas-2.44", "libsframe", target.X86_64); len(got) != 2 {
		t.Errorf("entries for gas-2.44 x libsframe on x86-64: %v", got)
	}
	if got := l.For("gas-2.44", "libsframe", target.S390X); len(got) != 2 || got[0].Pattern != "far-code" {
		t.Errorf("entries for gas-2.44 x libsframe on s390x: %v", got)
	}
}

func TestStale(t *testing.T) {
	t.Parallel()
	e := &Entry{Min: 8}
	for _, tc := range []struct {
		ran, matched int
		want         bool
	}{{0, 0, false}, {7, 0, false}, {8, 0, true}, {100, 0, true}, {8, 1, false}, {100, 5, false}} {
		if got := e.Stale(tc.ran, tc.matched); got != tc.want {
			t.Errorf("ran %d, matched %d: stale %v, want %v", tc.ran, tc.matched, got, tc.want)
		}
	}
}
