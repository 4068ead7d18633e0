package repro

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// finding is a case's write-up in docs/findings: its page and the patches
// it proposes, as paths relative to the repository the case lies in.
type finding struct {
	root    string
	page    string
	patches []string
}

// caseNumber is the finding number a stored case's file name starts with
// (corpus/cases/018-glibc-....json).
var caseNumber = regexp.MustCompile(`^(\d{3})-`)

// findingOf finds the write-up of the case file casePath: the repository
// is the nearest directory above it holding docs/findings/README.md; the
// page is docs/findings/NNN-*.md for the number the file name starts with,
// else the first page that names the file. Nil when there is none.
func findingOf(casePath string) *finding {
	abs, err := filepath.Abs(casePath)
	if err != nil {
		return nil
	}
	root := ""
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "docs", "findings", "README.md")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
	dir := filepath.Join(root, "docs", "findings")
	base := filepath.Base(casePath)
	var pages []string
	if m := caseNumber.FindStringSubmatch(base); m != nil {
		pages, _ = filepath.Glob(filepath.Join(dir, m[1]+"-*.md"))
	}
	if len(pages) == 0 {
		all, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9]-*.md"))
		for _, p := range all {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), base) {
				pages = append(pages, p)
				break
			}
		}
	}
	if len(pages) == 0 {
		return nil
	}
	f := &finding{root: root, page: pages[0]}
	num := filepath.Base(pages[0])[:3]
	f.patches, _ = filepath.Glob(filepath.Join(dir, num+"-*.patch"))
	return f
}

func (f *finding) rel(p string) string {
	if r, err := filepath.Rel(f.root, p); err == nil {
		return r
	}
	return p
}

// patchSection writes the proposed patches of the case's write-up, whole,
// or says that the write-up gives none and why to look there.
func (rep *Report) patchSection(b *strings.Builder) {
	f := findingOf(rep.Path)
	if f == nil {
		return
	}
	b.WriteString("## Proposed patch\n\n")
	num := filepath.Base(f.page)[:3]
	if len(f.patches) == 0 {
		fmt.Fprintf(b, "The write-up (`%s` in sfconform) proposes none and says why.\n\n", f.rel(f.page))
		return
	}
	fmt.Fprintf(b, "From the write-up (`%s` in sfconform), which says how it was verified (`make verify-fixes VERIFY_ARGS=%s`: the component built from the source with and without the patch, the input replayed against both, and a slice of sfconform's matrix that may not get worse). Apply with `patch -p1` in the source tree.\n\n", f.rel(f.page), num)
	for _, p := range f.patches {
		text, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(b, "(`%s`: %v)\n\n", f.rel(p), err)
			continue
		}
		fmt.Fprintf(b, "`%s`:\n\n```diff\n%s", filepath.Base(p), text)
		if !strings.HasSuffix(string(text), "\n") {
			b.WriteString("\n")
		}
		b.WriteString("```\n\n")
	}
}

// inputsSection points at the write-up's attachable input and stand-alone
// reproducer (docs/findings/NNN-inputs/, or its folder named after the
// consumer's library: glibc/ for a glibc finding), listing their files. False when there is none.
func (rep *Report) inputsSection(b *strings.Builder) bool {
	f := findingOf(rep.Path)
	if f == nil {
		return false
	}
	num := filepath.Base(f.page)[:3]
	dir := filepath.Join(f.root, "docs", "findings", num+"-inputs")
	// A finding in one of several components keeps each component's
	// reproducer in a folder named after the library (016-inputs/glibc).
	if lib := about(rep.Replay.Consumer).Library; lib != "" {
		if st, err := os.Stat(filepath.Join(dir, lib)); err == nil && st.IsDir() {
			dir = filepath.Join(dir, lib)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	var files []string
	for _, e := range ents {
		if !e.IsDir() {
			files = append(files, "`"+e.Name()+"`")
		}
	}
	fmt.Fprintf(b, "The write-up's stand-alone reproducer, in `%s/` of sfconform (attach the directory): %s. `replay.sh` builds and runs it against the component's source or build tree given as its argument; `expected-unfixed.txt` is what it prints today, `expected-fixed.txt` with the proposed patch.\n\n", f.rel(dir), strings.Join(files, ", "))
	return true
}
