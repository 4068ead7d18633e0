package realcode

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// TestCompareFDEs: the dumper comparison sees a function or row that
// differs in any field, and nothing when they agree.
func TestCompareFDEs(t *testing.T) {
	t.Parallel()
	row := sframe.Row{Start: 4, CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 16},
		RA: sframe.Rule{Kind: sframe.RuleExpr, Deref: true, Reg: sframe.RegCFA, Offset: -8}}
	base := []sframe.FDE{{Start: 0x1000, Size: 32, Rows: []sframe.Row{{}, row}}}
	clone := func() []sframe.FDE {
		c := slices.Clone(base)
		c[0].Rows = slices.Clone(base[0].Rows)
		return c
	}
	if d := compareFDEs(base, clone()); d != "" {
		t.Fatalf("equal tables: got difference %q", d)
	}
	for name, mutate := range map[string]func([]sframe.FDE) []sframe.FDE{
		"start":   func(f []sframe.FDE) []sframe.FDE { f[0].Start++; return f },
		"size":    func(f []sframe.FDE) []sframe.FDE { f[0].Size--; return f },
		"row cfa": func(f []sframe.FDE) []sframe.FDE { f[0].Rows[1].CFA.Offset = 24; return f },
		"row ra":  func(f []sframe.FDE) []sframe.FDE { f[0].Rows[1].RA.Offset = -16; return f },
		"row pc":  func(f []sframe.FDE) []sframe.FDE { f[0].Rows[1].Start = 5; return f },
		"rows":    func(f []sframe.FDE) []sframe.FDE { f[0].Rows = f[0].Rows[:1]; return f },
		"fdes":    func(f []sframe.FDE) []sframe.FDE { return append(f, f[0]) },
	} {
		if d := compareFDEs(base, mutate(clone())); d == "" {
			t.Errorf("%s differs: compareFDEs saw nothing", name)
		}
	}
}

// TestQuickSlice is the campaign's slice in make test: zlib for x86-64 at
// -O2, assembled by sid's gas, each object, ld -r and a PIE checked with
// every dumper. Every finding must be a triaged one, and the one ld
// shows on every PIE (finding 032) must be seen: a checker that finds
// nothing fails here.
func TestQuickSlice(t *testing.T) {
	b, _ := FindBase("zlib")
	if _, err := Locate(b); err != nil {
		testenv.Missing(t, testenv.RealCode, "%v", err)
		return
	}
	if _, err := exec.LookPath("x86_64-linux-gnu-gcc"); err != nil {
		testenv.Missing(t, testenv.HostPackages, "x86_64-linux-gnu-gcc: %v", err)
		return
	}
	tc, err := toolchain.Find("gas-2.47", target.X86_64)
	if err != nil {
		if errors.Is(err, toolchain.ErrNotProvisioned) {
			testenv.Missing(t, testenv.Binutils, "%v", err)
			return
		}
		t.Fatal(err)
	}
	res, err := Run(Options{Bases: []string{"zlib"}, Targets: []target.Target{target.X86_64}, Opts: []string{"O2"},
		Assemblers: []string{tc.Name}, Links: []string{LinkObject, LinkR, LinkPIE},
		Checker: &WithCheck{Static: &StaticChecker{}, Options: check.Options{Static: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var pie *Output
	objs := 0
	for _, o := range res.Outputs {
		if o.BuildErr != nil || o.CheckErr != nil {
			t.Fatalf("%s: build %v, check %v", o.Name(), o.BuildErr, o.CheckErr)
		}
		switch o.Link {
		case LinkPIE:
			pie = o
		case LinkObject:
			objs++
		}
		if !slices.Contains(o.Report.Dumpers, "objdump-2.47") || !slices.Contains(o.Report.Dumpers, "readelf-2.47") {
			t.Errorf("%s: dumpers compared %v, want objdump-2.47 and readelf-2.47 among them (skipped: %v)", o.Name(), o.Report.Dumpers, o.Report.Skipped)
		}
		if o.Report.Version != 3 || o.Report.FDEs == 0 {
			t.Errorf("%s: SFrame version %d with %d FDEs, want version 3 from %s", o.Name(), o.Report.Version, o.Report.FDEs, tc.Name)
		}
	}
	if want := len(b.Library) + len(b.Main); objs != want {
		t.Errorf("%d objects checked, want %d", objs, want)
	}
	if pie == nil {
		t.Fatal("no PIE was checked")
	}
	// zlib has about 150 functions of its own, and tens of thousands of
	// instructions at -O2.
	if pie.Report.Check == nil || pie.Report.Check.Compared < 10000 {
		t.Errorf("PIE: sfconform check compared %v rows with the CFI, want it run over at least 10000 instructions", pie.Report.Check)
	}
	if pie.Report.Functions < 100 || pie.Report.Instructions < 10000 {
		t.Errorf("PIE: %d functions, %d instructions looked up; want at least 100 and 10000", pie.Report.Functions, pie.Report.Instructions)
	}
	seg := false
	for _, f := range pie.Report.Findings {
		seg = seg || f.Kind == "segment"
	}
	if !seg {
		t.Errorf("PIE: no segment finding; ld %s sized PT_GNU_SFRAME as the .sframe section (finding 032 fixed? update KnownFindings): %v", tc.Version, pie.Report.Findings)
	}
	for _, g := range res.New() {
		t.Errorf("untriaged finding %s on %s (%s, %s), e.g. %s: %s", g.Signature, g.Target.Name(), g.Assembler, g.Link, g.Example, g.Finding)
	}
	var sum strings.Builder
	res.Summary(&sum)
	t.Log(sum.String())
}

// TestTrailingBytes: trixie's ld -r leaves zeros after the merged
// section (finding 033), which the checker must see.
func TestTrailingBytes(t *testing.T) {
	b, _ := FindBase("zlib")
	if _, err := Locate(b); err != nil {
		testenv.Missing(t, testenv.RealCode, "%v", err)
		return
	}
	if _, err := toolchain.Find("gas-2.44", target.X86_64); err != nil {
		if errors.Is(err, toolchain.ErrNotProvisioned) {
			testenv.Missing(t, testenv.Binutils, "%v", err)
			return
		}
		t.Fatal(err)
	}
	res, err := Run(Options{Bases: []string{"zlib"}, Targets: []target.Target{target.X86_64}, Opts: []string{"O2"},
		Assemblers: []string{"gas-2.44"}, Links: []string{LinkR}, Checker: &StaticChecker{Dumpers: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outputs) != 1 || res.Outputs[0].Report == nil {
		t.Fatalf("want one checked ld -r output, got %d (%v)", len(res.Outputs), res.Outputs)
	}
	var kinds []string
	for _, f := range res.Outputs[0].Report.Findings {
		kinds = append(kinds, f.Kind)
	}
	if !slices.Contains(kinds, "trailing") {
		t.Errorf("ld -r 2.44 output: findings %v, want trailing (finding 033 fixed? update KnownFindings)", kinds)
	}
	for _, g := range res.New() {
		t.Errorf("untriaged finding %s: %s", g.Signature, g.Finding)
	}
}
