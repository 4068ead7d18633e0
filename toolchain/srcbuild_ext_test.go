package toolchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
)

// The source build describes itself as the packaged toolchains do, with
// the exact source package: every target's tools are there and emit SFrame
// v3, the version is what its assembler reports, and the release series'
// glob (load, All, Names) never lists it.
func TestSourceBuild(t *testing.T) {
	t.Parallel()
	b, err := FindSourceBuild()
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if b.Package == "" || !strings.HasSuffix(b.Dir, "binutils-src-"+b.Package) {
		t.Errorf("source package %q, directory %s", b.Package, b.Dir)
	}
	if _, err := os.Stat(filepath.Join(b.Src, "libsframe", "sframe.c")); err != nil {
		t.Errorf("the source tree: %v", err)
	}
	tcs, err := b.Probed()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[target.Target]bool{}
	for _, tc := range tcs {
		seen[tc.Target] = true
		if tc.SFrameVersion != 3 || tc.Name != "gas-src" || !strings.HasPrefix(tc.Package, b.Package) {
			t.Errorf("%v: %s SFrame v%d, package %q", tc.Target, tc.Name, tc.SFrameVersion, tc.Package)
		}
		v, err := ToolVersion(tc.AS)
		if err != nil || lastField(v) != b.Version {
			t.Errorf("%v: %s --version: %q, %v; srcbuild.conf says %s", tc.Target, tc.AS, v, err, b.Version)
		}
	}
	for _, tg := range target.All {
		if !seen[tg] {
			t.Errorf("no source-built toolchain for %v", tg)
		}
	}
	names, _ := Names()
	for _, n := range names {
		if n == "gas-src" {
			t.Error("the release toolchains' list holds the source build")
		}
	}
	all, _ := All()
	for _, tc := range all {
		if strings.HasPrefix(tc.AS, b.Dir) {
			t.Errorf("All lists the source build's %s as %s", tc.AS, tc.Name)
		}
	}
}
