package toolchain

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// buildAttributeDirectives are what gcc 15 writes for AArch64 when it was
// configured against binutils 2.45 or later (Debian sid's): GNU build
// attributes, metadata for the linker (branch protection, GCS), never
// unwind information. gas before 2.45 refuses them as unknown pseudo-ops.
var buildAttributeDirectives = []string{".aeabi_subsection", ".aeabi_attribute"}

// ForAssembler gives the compiler-written assembly file src in a form tc's
// assembler takes: when tc is a GNU as older than 2.45, the GNU build
// attribute directives a newer gcc writes are dropped, into a copy beside
// src (NAME.<toolchain>.s), and the copy's path is returned with the number
// of lines dropped. Otherwise src itself comes back, with 0. Nothing a
// dropped line says reaches .sframe or .eh_frame, so the table the
// assembler makes is the one it makes of gcc's output.
func (tc Toolchain) ForAssembler(src string) (string, int, error) {
	if !tc.predates("2.45") {
		return src, 0, nil
	}
	text, err := os.ReadFile(src)
	if err != nil {
		return "", 0, err
	}
	var out bytes.Buffer
	dropped := 0
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		t := strings.TrimSpace(string(line))
		drop := false
		for _, d := range buildAttributeDirectives {
			if strings.HasPrefix(t, d+" ") || strings.HasPrefix(t, d+"\t") || t == d {
				drop = true
			}
		}
		if drop {
			dropped++
			continue
		}
		out.Write(line)
	}
	if dropped == 0 {
		return src, 0, nil
	}
	dst := strings.TrimSuffix(src, ".s") + "." + strings.NewReplacer(":", "_", "/", "_").Replace(tc.Name) + ".s"
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		return "", 0, fmt.Errorf("writing %s for %s: %w", dst, tc.Name, err)
	}
	return dst, dropped, nil
}

// predates says whether tc is a GNU as whose version is older than
// series (CompareVersions); a version it cannot read is taken as not
// older.
func (tc Toolchain) predates(series string) bool {
	var major, minor int
	if _, err := fmt.Sscanf(Series(tc.Version), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return strings.HasPrefix(tc.Name, "gas") && CompareVersions(Series(tc.Version), series) < 0
}
