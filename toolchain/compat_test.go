package toolchain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gcc 15's AArch64 build attributes are dropped for gas before 2.45 and
// kept for later ones; the rest of the file is untouched.
func TestForAssembler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "f.s")
	text := "\t.arch armv8-a\n\t.text\nf:\n\t.cfi_startproc\n\tret\n\t.cfi_endproc\n" +
		"\t.aeabi_subsection aeabi_feature_and_bits, optional, ULEB128\n\t.aeabi_attribute Tag_Feature_BTI, 1\n\t.aeabi_attribute Tag_Feature_PAC, 1\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, version string
		dropped       int
	}{
		{"gas-2.40", "2.40", 3},
		{"gas-2.44", "2.44", 3},
		{"gas-2.47", "2.47.50.20261021", 0},
		{"gas:/opt/b", "2.45", 0},
		{"llvm-mc-23", "23.1.4", 0},
	} {
		tcv := &Toolchain{Name: tc.name, Version: tc.version}
		got, n, err := tcv.ForAssembler(src)
		if err != nil || n != tc.dropped {
			t.Fatalf("%s: %d lines dropped, %v; want %d", tc.name, n, err, tc.dropped)
		}
		if n == 0 {
			if got != src {
				t.Errorf("%s: %s, want the source itself", tc.name, got)
			}
			continue
		}
		b, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), ".aeabi_") || !strings.Contains(string(b), "\t.cfi_startproc\n\tret\n\t.cfi_endproc\n") {
			t.Errorf("%s: %q", tc.name, b)
		}
	}
}
