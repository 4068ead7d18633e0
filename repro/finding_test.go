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
