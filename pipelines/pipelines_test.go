package pipelines

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// pinned are the written-up findings the quick slice shows with the
// newest series, so that a change (a fixed ld, a check that stops seeing
// them) is noticed: scenario, case prefix, finding.
var pinned = []struct{ scenario, cs, finding string }{
	{PostLink, "hello: strip", "037-ld-x86-plt-got-cfa-16.md"},
	{PostLink, "excpt: strip", "037-ld-x86-plt-got-cfa-16.md"},
	{GCSections, "hello.c", "038-ld-gc-sections-drops-plt-sframe.md"},
	{LLD, "hello: ld.lld", "045-lld-sframe-plain-section.md"},
	{LLD, "excpt: ld.lld", "045-lld-sframe-plain-section.md"},
	{BOLT, "excpt: llvm-bolt", "046-bolt-stale-sframe.md"},
}

// TestQuickSlice builds the scenarios with the newest series for x86-64
// (the mixed-version links with 2.44 and the newest), statically judged,
// without LTO and far code (together twice the CPU time of the rest:
// `sfconform pipelines --scenarios 6,7` and docs/pipelines.md have them):
// every row is clean or a known finding, clean rows judged something,
// and every negative control is red.
func TestQuickSlice(t *testing.T) {
	if _, err := toolchain.Find("gas-2.47", target.X86_64); err != nil {
		testenv.Missing(t, testenv.Binutils, "gas-2.47: %v", err)
	}
	testenv.LookPath(t, "g++", testenv.HostPackages)
	res, err := Run(Config{
		Targets:   []target.Target{target.X86_64},
		Series:    []string{"2.47"},
		Scenarios: []string{PostLink, GCSections, LDR, COMDAT, LLD, BOLT, Generated},
		Seeds:     []int64{1},
		Dir:       t.TempDir(),
	})
	if errors.Is(err, ErrNoToolchain) {
		testenv.Missing(t, testenv.Binutils, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := Run(Config{
		Targets:   []target.Target{target.X86_64},
		Series:    []string{"2.44", "2.47"},
		Scenarios: []string{Mixed},
		Dir:       t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	res.Rows = append(res.Rows, mixed.Rows...)
	seen := map[string]int{}
	controls := map[string]int{}
	for _, r := range res.Rows {
		seen[r.Scenario]++
		if r.Control != "" {
			controls[r.Scenario]++
		}
		if strings.HasPrefix(r.Control, "GREEN") {
			t.Errorf("%s %s %s: negative control not reported: %s", r.Scenario, r.Toolchain, r.Case, r.Control)
		}
		switch r.Status {
		case Clean:
			if r.Compared == 0 {
				t.Errorf("%s %s %s: clean but no row compared", r.Scenario, r.Toolchain, r.Case)
			}
		case Finding:
			if r.Scenario == Mixed {
				continue // what each ld does with the other series' objects: results, listed in the report
			}
			if r.Toolchain != "gas-2.47" {
				continue // the older series' findings are in the report
			}
			if r.Known != "" {
				t.Logf("known (%s): %s %s: %s", r.Known, r.Scenario, r.Case, r.Detail)
				continue
			}
			t.Errorf("%s %s %s: unexpected finding: %s", r.Scenario, r.Toolchain, r.Case, r.Detail)
		case NotPossible:
			if strings.HasPrefix(r.Detail, "the link fails without --gsframe too") {
				continue // far .ltext: gcc 12's 32-bit .eh_frame and cold jumps, SFrame or not
			}
			t.Errorf("%s %s %s: not possible: %s", r.Scenario, r.Toolchain, r.Case, r.Detail)
		}
	}
	for _, sc := range Scenarios {
		if sc == LTO || sc == FarCode {
			continue
		}
		if seen[sc] == 0 {
			t.Errorf("scenario %s: no row", sc)
		}
		if controls[sc] == 0 {
			t.Errorf("scenario %s: no negative control ran", sc)
		}
	}
	// The pinned findings are still there.
	for _, k := range pinned {
		found := false
		for _, r := range res.Rows {
			if r.Scenario == k.scenario && r.Toolchain == "gas-2.47" && r.Status == Finding && r.Known == k.finding && strings.HasPrefix(r.Case, k.cs) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %q: the known finding (%s) is gone: fixed, or no longer seen", k.scenario, k.cs, k.finding)
		}
	}
	var md bytes.Buffer
	if err := res.Markdown(&md, "go test"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Tool versions", "2.47", "| x86-64 | gas-2.47 |", "## Commands"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if os.Getenv("SFCONFORM_PIPELINES_SHOW") != "" {
		t.Log(md.String())
	}
}

// TestControlNeedsLinkedFile: Corrupt refuses what it cannot corrupt
// meaningfully, naming the file.
func TestControlNeedsLinkedFile(t *testing.T) {
	src, err := FindSources()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Corrupt(src+"/hello.c", t.TempDir()); err == nil || !strings.Contains(err.Error(), "hello.c") {
		t.Errorf("Corrupt(a C source) = %v, want an error naming it", err)
	}
	if got := Control(src+"/hello.c", t.TempDir()); !strings.HasPrefix(got, "GREEN") {
		t.Errorf("Control(a C source) = %q, want GREEN (nothing was corrupted)", got)
	}
}
