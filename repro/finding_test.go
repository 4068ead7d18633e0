package repro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report finds its case's write-up by the case file's number (or a page
// naming the file) and carries the page's patches whole; a case without a
// write-up gets no patch section.
func TestPatchSectionFromFinding(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "docs", "findings")
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "README.md"), "# Findings\n")
	write(filepath.Join(dir, "099-a-defect.md"), "# 099\n")
	write(filepath.Join(dir, "099-a-defect.patch"), "fix it\n\n--- a/x.c\n+++ b/x.c\n")
	write(filepath.Join(dir, "098-named.md"), "stored case: corpus/cases/other-case.json\n")
	write(filepath.Join(dir, "099-inputs", "replay.sh"), "#!/bin/sh\n")

	var b strings.Builder
	(&Report{Path: filepath.Join(root, "corpus", "cases", "099-x86-64-case.json")}).patchSection(&b)
	got := b.String()
	for _, want := range []string{"## Proposed patch", "`docs/findings/099-a-defect.md`", "`099-a-defect.patch`:\n\n```diff\nfix it\n", "VERIFY_ARGS=099"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}

	if f := findingOf(filepath.Join(root, "corpus", "cases", "other-case.json")); f == nil || filepath.Base(f.page) != "098-named.md" || len(f.patches) != 0 {
		t.Errorf("a case named by a page: %+v", f)
	}
	b.Reset()
	(&Report{Path: filepath.Join(root, "corpus", "cases", "098-named.json")}).patchSection(&b)
	if !strings.Contains(b.String(), "proposes none") {
		t.Errorf("a write-up without a patch: %q", b.String())
	}
	b.Reset()
	(&Report{Path: filepath.Join(root, "corpus", "cases", "unknown.json")}).patchSection(&b)
	if b.Len() != 0 {
		t.Errorf("a case without a write-up gets %q", b.String())
	}
}

// A finding that lives in several components keeps each one's stand-alone
// reproducer in a folder named after the library; a report of a case seen
// through that library's consumer points there, any other at the top.
func TestInputsSectionPerLibrary(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "docs", "findings")
	for name, text := range map[string]string{
		"README.md":                       "# Findings\n",
		"097-two-places.md":               "# 097\n",
		"097-inputs/replay.sh":            "#!/bin/sh\n",
		"097-inputs/driver.c":             "int main(void){return 0;}\n",
		"097-inputs/glibc/replay.sh":      "#!/bin/sh\n",
		"097-inputs/glibc/glibc-driver.c": "int main(void){return 0;}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(root, "corpus", "cases", "097-case.json")
	for consumer, want := range map[string]string{
		"glibc":     "`docs/findings/097-inputs/glibc/`",
		"libsframe": "`docs/findings/097-inputs/`",
	} {
		var b strings.Builder
		if !(&Report{Path: path, Replay: &Replay{Consumer: consumer}}).inputsSection(&b) {
			t.Fatalf("%s: no inputs section", consumer)
		}
		if got := b.String(); !strings.Contains(got, want) {
			t.Errorf("%s: want %s in %q", consumer, want, got)
		}
	}
}
