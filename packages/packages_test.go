package packages

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// RequirePackagesEnv turns a missing source of ci/packages.sh (which
// neither 'make setup' nor 'make test' runs) from a skip into a failure.
const RequirePackagesEnv = "SFCONFORM_REQUIRE_PACKAGES"

// source locates pkg's source: a package of setup's step 8 (zlib, bzip2)
// is missing as setup's steps are (testenv.Missing); any other is
// ci/packages.sh's, required only under RequirePackagesEnv=1.
func source(t *testing.T, pkg string, fromSetup bool) {
	t.Helper()
	_, err := Locate(pkg)
	if err == nil {
		return
	}
	if !errors.Is(err, ErrNoSource) {
		t.Fatal(err)
	}
	if fromSetup {
		testenv.Missing(t, testenv.RealCode, "%v", err)
		return
	}
	switch v := os.Getenv(RequirePackagesEnv); v {
	case "", "0":
		t.Skipf("%v: run ci/packages.sh (make packages) for this test; skipping", err)
	case "1":
		t.Fatalf("%v, although %s=1: run ci/packages.sh", err, RequirePackagesEnv)
	default:
		t.Fatalf("%v; and %s=%q: want 1 or unset", err, RequirePackagesEnv, v)
	}
}

// quick builds pkg's quick targets for x86-64 with the newest series and
// checks what the build made: every output an object with an SFrame
// section of the series' version, .eh_frame beside it, and no error.
func quick(t *testing.T, pkg string, wantMin int) {
	t.Helper()
	all, err := toolchain.All()
	testenv.IfNotProvisioned(t, err)
	var series string
	for _, tc := range all {
		if tc.Target == target.X86_64 && tc.SFrameVersion > 0 && toolchain.CompareVersions(toolchain.Series(tc.Version), series) > 0 {
			series = toolchain.Series(tc.Version)
		}
	}
	if series == "" {
		testenv.Missing(t, testenv.Binutils, "no toolchain writes SFrame for x86-64")
	}
	work := t.TempDir()
	res, err := Run(Config{Packages: []string{pkg}, Targets: []target.Target{target.X86_64}, Series: []string{series}, Work: work, Jobs: 2, Quick: true})
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	r := res[0]
	if r.Status != Built {
		log, _ := os.ReadFile(work + "/" + r.Log)
		t.Fatalf("%s: %s: %s\n%s", pkg, r.Status, r.Why, tail(string(log), 3000))
	}
	if !strings.Contains(r.Flags.CFLAGS+r.Flags.CXXFLAGS, "-Wa,--gsframe") || !strings.Contains(r.Flags.CFLAGS+r.Flags.CXXFLAGS, "-fstack-protector-strong") {
		t.Errorf("flags are not dpkg-buildflags' with -Wa,--gsframe: %+v", r.Flags)
	}
	if len(r.Files) < wantMin {
		t.Fatalf("%d outputs, want at least %d: %+v", len(r.Files), wantMin, r.Files)
	}
	described := 0
	for _, f := range r.Files {
		if f.NoUnwind {
			// Tables only (bzip2's crctable.o): no code, no CFI.
			if f.Sizes.Text != 0 {
				t.Errorf("%s: %d bytes of code without .eh_frame or .sframe", f.Rel, f.Sizes.Text)
			}
			continue
		}
		described++
		if f.Unusable != "" || f.Version != r.SFrameVersion || f.Sizes.SFrame == 0 || f.Sizes.EHFrame == 0 {
			t.Errorf("%s: unusable %q, SFrame v%d (want v%d), %d bytes .sframe, %d bytes .eh_frame",
				f.Rel, f.Unusable, f.Version, r.SFrameVersion, f.Sizes.SFrame, f.Sizes.EHFrame)
		}
		for _, g := range f.Groups {
			if g.Severity == "error" && Triage(r, f, g) == "" {
				t.Errorf("%s: a new finding: %d× %s (%s)", f.Rel, g.Count, g.Key, g.Example)
			}
		}
	}
	if described < wantMin {
		t.Errorf("%d outputs with unwind information, want at least %d", described, wantMin)
	}
	// Stored, and read back for the report.
	stored, err := Load(work)
	if err != nil || len(stored) != 1 || len(stored[0].Files) != len(r.Files) {
		t.Fatalf("Load: %v, %d results", err, len(stored))
	}
	var md strings.Builder
	if err := Markdown(&md, stored, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| "+pkg+" ") {
		t.Errorf("the report has no row for %s:\n%s", pkg, md.String())
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// bzip2's library by its own Makefile (the source of setup's step 8).
func TestQuickMakeBzip2(t *testing.T) {
	source(t, "bzip2", true)
	quick(t, "bzip2", 7)
}

// tinyxml2's library by cmake: C++ (ci/packages.sh's source and cmake).
func TestQuickCMakeTinyxml2(t *testing.T) {
	source(t, "tinyxml2", false)
	quick(t, "tinyxml2", 1)
}
