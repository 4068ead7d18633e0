package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// checkSource is one function with a frame, as gas reads it.
const checkSource = `	.text
	.globl	f
	.type	f, @function
f:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	popq	%rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc
	.size	f, .-f
`

// TestCheckExitStatus: 0 for a clean file, 2 for an unusable one (named
// with the reason), and --json is a list of reports.
func TestCheckExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("not elf"), 0o644)
	out, errOut, code := runCLI("check", bad)
	if code != exitSetup || !strings.Contains(out, "UNUSABLE") || !strings.Contains(errOut, bad) {
		t.Errorf("check %s: exit %d\n%s\n%s", bad, code, out, errOut)
	}

	tc, err := toolchain.Find("gas-2.47", target.X86_64)
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "gas-2.47: %v", err)
		return
	}
	src, obj, exe := filepath.Join(dir, "a.s"), filepath.Join(dir, "a.o"), filepath.Join(dir, "a")
	os.WriteFile(src, []byte(checkSource), 0o644)
	if r, err := tc.Assemble(src, obj, "--gsframe"); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if r, err := tc.Link(toolchain.Link{Output: exe, Objects: []string{obj}, Text: 0x401000, Entry: 0x401000}); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	out, errOut, code = runCLI("check", "--json", "--save", "", exe, obj)
	var reports []check.Report
	if err := json.Unmarshal([]byte(out), &reports); err != nil || code != exitOK || len(reports) != 2 {
		t.Fatalf("check --json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if s := reports[0].Summary; s.Functions != 1 || s.Compared != 4 || s.Steps == 0 || s.Verdicts["OK"] != s.Steps {
		t.Errorf("linked: %+v", s)
	}
	if reports[1].Type != "REL" || !reports[1].Relocated || reports[1].Summary.Compared != 4 {
		t.Errorf("object: %+v", reports[1])
	}
	// Unusable wins over a clean file.
	if _, _, code := runCLI("check", "--static-only", exe, bad); code != exitSetup {
		t.Errorf("a clean and an unusable file: exit %d, want %d", code, exitSetup)
	}
}
