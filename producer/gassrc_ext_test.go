package producer

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// gas-src is registered while the source build is there ('make
// binutils-src'); without it this test skips, or fails with
// SFCONFORM_REQUIRE_BINUTILS_SRC=1. It assembles and links one program
// per target with the build's own as and ld, emitting SFrame v3, and says
// the Debian source package it was built from.
func TestSourceBuildProducer(t *testing.T) {
	t.Parallel()
	b, err := toolchain.FindSourceBuild()
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := New("gas-src")
	if err != nil {
		t.Fatalf("the source build %s is there, but: %v", b.Dir, err)
	}
	v := Version(prod)
	if !strings.Contains(v, b.Package) || !strings.Contains(v, "built from source") {
		t.Errorf("gas-src's exact version %q does not name the source package %s", v, b.Package)
	}
	a, _ := Lookup("gas-src")
	if a.Setup != toolchain.SetupBinutilsSrc {
		t.Errorf("gas-src: setup step %d, want %d", a.Setup, toolchain.SetupBinutilsSrc)
	}
	for _, tg := range target.All {
		sv, err := prod.SFrameVersion(tg)
		if err != nil || sv != 3 {
			t.Errorf("%v: SFrame v%d, %v; want v3", tg, sv, err)
			continue
		}
		p := packed(t, tg, 3, []int64{7}, gen.Options{})[0]
		img, err := prod.Produce(p)
		if err != nil {
			t.Errorf("%v: %v", tg, err)
			continue
		}
		checkImage(t, "gas-src", 3, p, img)
		if img.Record == nil || len(img.Record.Tools) == 0 {
			t.Errorf("%v: no record of the tools", tg)
			continue
		}
		for _, tool := range img.Record.Tools {
			if !strings.HasPrefix(tool.Path, b.Dir) {
				t.Errorf("%v: ran %s, not the source build's (%s)", tg, tool.Path, b.Dir)
			}
		}
	}
}
