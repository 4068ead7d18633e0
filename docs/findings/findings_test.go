package findings

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// findingFile matches the numbered write-ups; README.md and older notes
// are not findings.
var findingFile = regexp.MustCompile(`^(\d{3})-[a-z0-9.-]+\.md$`)

// findings lists the numbered write-ups of this directory, in order.
func findings(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && findingFile.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no NNN-*.md finding in docs/findings")
	}
	return out
}

// fence is one fenced code block of a Markdown file.
type fence struct {
	info []string // the info string's fields: language, then arguments
	body []string // its lines
	line int      // line number of the opening fence (1-based)
}

// fences returns the fenced blocks of md (``` fences, not nested).
func fences(md string) ([]fence, error) {
	var out []fence
	var cur *fence
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fence{info: strings.Fields(strings.TrimPrefix(trimmed, "```")), line: n}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body = append(cur.body, line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: fenced block never closed", cur.line)
	}
	return out, sc.Err()
}

// step is one "$ command" of a transcript and what it prints.
type step struct {
	cmd  string
	want []string
	line int
}

// steps splits a console block into its commands.
func steps(f fence) ([]step, error) {
	var out []step
	for i, l := range f.body {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			out = append(out, step{cmd: cmd, line: f.line + 1 + i})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("line %d: output before the first \"$ \" command", f.line+1+i)
		}
		out[len(out)-1].want = append(out[len(out)-1].want, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("line %d: console block without a command", f.line)
	}
	return out, nil
}

// inputFile reports the file a fenced block defines ("asm a.s"): a second
// info field that is a plain file name.
func inputFile(f fence) (string, bool) {
	if len(f.info) != 2 || f.info[0] == "console" {
		return "", false
	}
	name := f.info[1]
	return name, strings.Contains(name, ".") && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, ".")
}

// toolWord finds the toolchain programs a command runs.
var toolWord = regexp.MustCompile(`(?:^|[\s|;&(])((?:x86_64|aarch64|s390x)-linux-gnu-[a-z]+|llvm-[a-z]+)\b`)

// toolPath matches a tool's own path where it names itself in a message:
// the provisioned wrappers run the programs of a private root (objdump
// 2.44 says "/var/cache/sfconform/roots/trixie/usr/bin/x86_64-linux-gnu-objdump: a.o: ...",
// the host's 2.40 "/usr/bin/aarch64-linux-gnu-ld: ..."), where a distribution's
// tools on PATH say "x86_64-linux-gnu-objdump: ...".
var toolPath = regexp.MustCompile(`/[^\s:'"]*/((?:x86_64|aarch64|s390x)-linux-gnu-[a-z]+|llvm-[a-z]+)\b`)

// normalize turns a command's output into comparable lines: the tools'
// own paths as their names, no trailing blanks, no trailing empty lines.
func normalize(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(toolPath.ReplaceAllString(l, "$1"), " \t\r")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// binDirs returns the directories of the toolchains a console block
// names, in that order.
func binDirs(t *testing.T, names []string) []string {
	t.Helper()
	var dirs []string
	for _, name := range names {
		if strings.HasPrefix(name, "llvm-mc-") {
			all, err := toolchain.LLVM()
			i := slices.IndexFunc(all, func(tc toolchain.Toolchain) bool { return tc.Name == name })
			if i < 0 {
				testenv.Missing(t, testenv.LLVM, "%s is not provisioned (%v)", name, err)
			}
			dirs = append(dirs, filepath.Dir(all[i].AS))
			continue
		}
		// Every provisioned binutils version has the x86-64 tools, in
		// the one directory that holds all its triples.
		tc, err := toolchain.Find(name, target.X86_64)
		if err != nil {
			if errors.Is(err, toolchain.ErrNotProvisioned) {
				testenv.Missing(t, testenv.Binutils, "%v", err)
			}
			t.Fatal(err)
		}
		dirs = append(dirs, filepath.Dir(tc.AS))
	}
	return dirs
}

// missingStep is check-lib.sh's report of a piece setup has not provided.
var missingStep = regexp.MustCompile(`is missing: run make setup \(ci/setup.sh step (\d+)\)`)

// checkedBy names another check in a finding without transcripts.
var checkedBy = regexp.MustCompile("(?m)^Checked by: `([^`]+)`")

// TestTranscripts runs every transcript of every finding and requires the
// output the write-up shows. A command exits 0 or the transcript says
// otherwise: a command expected to fail is written "cmd; echo "exit $?"",
// so that the status is part of the output. A finding without transcripts
// must name what checks it instead ("Checked by: `path`").
func TestTranscripts(t *testing.T) {
	t.Parallel()
	for _, name := range findings(t) {
		t.Run(strings.TrimSuffix(name, ".md"), func(t *testing.T) {
			t.Parallel()
			checkFinding(t, name)
		})
	}
}

func checkFinding(t *testing.T, name string) {
	md, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := fences(string(md))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	dir := t.TempDir()
	var consoles []fence
	for _, b := range blocks {
		if len(b.info) > 0 && b.info[0] == "console" {
			consoles = append(consoles, b)
			continue
		}
		file, ok := inputFile(b)
		if !ok {
			continue
		}
		path := filepath.Join(dir, file)
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s:%d: %s defined twice", name, b.line, file)
		}
		if err := os.WriteFile(path, []byte(strings.Join(b.body, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(consoles) == 0 {
		m := checkedBy.FindSubmatch(md)
		if m == nil {
			t.Fatalf("%s has no transcript (a ```console TOOLCHAIN block) and names no other check (a line \"Checked by: `path`\")", name)
		}
		if _, err := os.Stat(filepath.Join("..", "..", string(m[1]))); err != nil {
			t.Fatalf("%s: checked by %s: %v", name, m[1], err)
		}
		if string(m[1]) == "docs/findings/check-lib.sh" {
			// The decoder findings' reproductions: C programs and commands
			// marked with check-lib comments.
			out, err := exec.Command("bash", "check-lib.sh", name[:3]).CombinedOutput()
			if m := missingStep.FindSubmatch(out); err != nil && m != nil {
				step, _ := strconv.Atoi(string(m[1]))
				testenv.Missing(t, testenv.Step(step), "%s", bytes.TrimSpace(out))
			}
			if err != nil {
				t.Fatalf("%s: check-lib.sh %s: %v\n%s", name, name[:3], err, out)
			}
		}
		return
	}
	for _, b := range consoles {
		if len(b.info) < 2 {
			t.Fatalf("%s:%d: a console block names the toolchains it runs (```console gas-2.44)", name, b.line)
		}
		dirs := binDirs(t, b.info[1:])
		ss, err := steps(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, s := range ss {
			for _, m := range toolWord.FindAllStringSubmatch(s.cmd, -1) {
				if strings.HasSuffix(m[1], "-gcc") {
					continue // the cross compilers are the host's (setup step 1), named in Affected
				}
				if !slices.ContainsFunc(dirs, func(d string) bool { _, err := os.Stat(filepath.Join(d, m[1])); return err == nil }) {
					t.Fatalf("%s:%d: %s is not in the toolchains the block names (%s): the host's would run", name, s.line, m[1], strings.Join(b.info[1:], " "))
				}
			}
			got, err := run(dir, dirs, s.cmd)
			if err != nil {
				t.Fatalf("%s:%d: $ %s\n%v\n%s", name, s.line, s.cmd, err, strings.Join(got, "\n"))
			}
			want := normalize(s.want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s:%d (%s): $ %s\n%s", name, s.line, strings.Join(b.info[1:], " "), s.cmd, diff(want, got))
			}
		}
	}
}

// run runs cmd with /bin/sh in dir, the toolchain directories first on
// PATH, and returns its normalized output (stdout and stderr together).
func run(dir string, bins []string, cmd string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// No core files: the shell then reports a crash as "Aborted" or
	// "Segmentation fault", with nothing that varies from run to run.
	c := exec.CommandContext(ctx, "/bin/sh", "-c", "ulimit -c 0\n"+cmd)
	c.Dir = dir
	c.Env = []string{"PATH=" + strings.Join(append(slices.Clone(bins), "/usr/bin", "/bin"), ":"), "LC_ALL=C", "HOME=" + dir}
	out, err := c.CombinedOutput()
	got := normalize(strings.Split(string(out), "\n"))
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return got, fmt.Errorf("exit status %d: a command that fails says so in the transcript (append `; echo \"exit $?\"`)", ee.ExitCode())
		}
		return got, err
	}
	return got, nil
}

// diff shows want and got side by side from the first line they differ.
func diff(want, got []string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "output differs from line %d of the command's output:\n", i+1)
	for _, l := range want[i:] {
		sb.WriteString("  want | " + l + "\n")
	}
	for _, l := range got[i:] {
		sb.WriteString("  got  | " + l + "\n")
	}
	return sb.String()
}

// TestIndex requires every finding in README.md's index.
func TestIndex(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range findings(t) {
		if !strings.Contains(string(readme), "]("+name+")") {
			t.Errorf("README.md does not list %s (a row linking [NNN](%s))", name, name)
		}
	}
}

// TestFencesAndSteps holds the parser to the transcript format on the
// edge cases a write-up can get wrong.
func TestFencesAndSteps(t *testing.T) {
	t.Parallel()
	md := "text\n```asm a.s\n\tnop\n```\n\n```console gas-2.44\n$ cat a.s\n\tnop\n$ true\n```\n"
	bs, err := fences(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].line != 2 || bs[1].line != 6 {
		t.Fatalf("fences %+v", bs)
	}
	if f, ok := inputFile(bs[0]); !ok || f != "a.s" {
		t.Errorf("input file %q %v, want a.s", f, ok)
	}
	if _, ok := inputFile(bs[1]); ok {
		t.Error("a console block taken for an input file")
	}
	ss, err := steps(bs[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].cmd != "cat a.s" || !slices.Equal(ss[0].want, []string{"\tnop"}) || ss[1].line != 9 || len(ss[1].want) != 0 {
		t.Errorf("steps %+v", ss)
	}
	if _, err := fences("```asm a.s\nnop\n"); err == nil {
		t.Error("an unclosed fence is accepted")
	}
	if _, err := steps(fence{info: []string{"console", "gas-2.44"}, body: []string{"stray", "$ true"}, line: 1}); err == nil {
		t.Error("output before the first command is accepted")
	}
	got := normalize([]string{"/var/cache/sfconform/roots/trixie/usr/bin/x86_64-linux-gnu-objdump: a.o: file format not recognized  ", "", ""})
	if !slices.Equal(got, []string{"x86_64-linux-gnu-objdump: a.o: file format not recognized"}) {
		t.Errorf("normalize: %q", got)
	}
	if got := normalize([]string{"a.s:6: Internal error in f at ../../gas/scfi.c:694."}); got[0] != "a.s:6: Internal error in f at ../../gas/scfi.c:694." {
		t.Errorf("normalize changed a source path: %q", got)
	}
}

// patchFile matches the proposed patches, NNN-*.patch.
var patchFile = regexp.MustCompile(`^(\d{3})-[a-z0-9.-]+\.patch$`)

// TestPatches holds every proposed patch to what ci/verify-fixes.sh needs
// and the index promises: its finding's page links it; its inputs
// (NNN-inputs/, or NNN-inputs/glibc/ for a patch to glibc's sysdeps/)
// hold an executable replay.sh and the two outputs, which differ (a
// replay that prints the same with and without the patch shows nothing);
// and it applies to the source it is made against (glibc's files of
// setup step 7, binutils' tree of 'make binutils-src').
func TestPatches(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	cache := toolchain.CacheDir()
	n := 0
	for _, e := range ents {
		m := patchFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n++
		name := e.Name()
		t.Run(strings.TrimSuffix(name, ".patch"), func(t *testing.T) {
			body, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			pages, _ := filepath.Glob(m[1] + "-*.md")
			linked := false
			for _, p := range pages {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				linked = linked || bytes.Contains(b, []byte("]("+name+")"))
			}
			if !linked {
				t.Errorf("no page %s-*.md links [..](%s)", m[1], name)
			}
			glibc := bytes.Contains(body, []byte("\n+++ b/sysdeps/"))
			inputs := m[1] + "-inputs"
			if glibc {
				inputs += "/glibc"
			}
			_, noInputs := os.Stat(inputs)
			switch {
			case glibc && noInputs != nil:
				// ci/verify-fixes.sh replays it by the page's own
				// reproduction, which must apply the patch.
				if !reproApplies(t, m[1], name) {
					t.Errorf("%s has no %s and no page %s-*.md whose check-lib run applies it", name, inputs, m[1])
				}
			default:
				if fi, err := os.Stat(filepath.Join(inputs, "replay.sh")); err != nil || fi.Mode()&0o111 == 0 {
					t.Errorf("%s/replay.sh is missing or not executable (%v)", inputs, err)
				}
				un, err1 := os.ReadFile(filepath.Join(inputs, "expected-unfixed.txt"))
				fx, err2 := os.ReadFile(filepath.Join(inputs, "expected-fixed.txt"))
				switch {
				case err1 != nil || err2 != nil:
					t.Errorf("%s lacks the replay's outputs: %v %v", inputs, err1, err2)
				case bytes.Equal(un, fx):
					t.Errorf("%s/expected-unfixed.txt and expected-fixed.txt are the same: the replay shows nothing", inputs)
				}
			}
			var src string
			if glibc {
				stamp, err := os.ReadFile(filepath.Join(cache, "stamps", "glibc-src-sid"))
				if err != nil {
					testenv.Missing(t, testenv.Step(7), "glibc's source files (%v)", err)
				}
				src = stampValue(stamp, "dir")
			} else {
				stamp, err := os.ReadFile(filepath.Join(cache, "stamps", "binutils-src"))
				if err != nil {
					testenv.Missing(t, testenv.BinutilsSrc, "binutils' source tree (%v)", err)
				}
				src = filepath.Join(cache, "sources", "binutils-"+stampValue(stamp, "version"))
			}
			cmd := exec.Command("patch", "-p1", "--dry-run", "--quiet", "-d", src, "-i", filepath.Join(must(os.Getwd()), name))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s does not apply to %s: %v\n%s", name, src, err, out)
			}
		})
	}
	if n == 0 {
		t.Fatal("no NNN-*.patch in docs/findings")
	}
}

// reproApplies reports whether a page of finding num is checked by
// check-lib.sh and its run applies the patch name.
func reproApplies(t *testing.T, num, name string) bool {
	t.Helper()
	pages, _ := filepath.Glob(num + "-*.md")
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("<!-- check-lib: run -->")) && bytes.Contains(b, []byte("-p1 <$R/docs/findings/"+name)) {
			return true
		}
	}
	return false
}

// stampValue is KEY's value in a setup stamp (KEY=VALUE lines).
func stampValue(stamp []byte, key string) string {
	for _, l := range strings.Split(string(stamp), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	return ""
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// plusFile matches the files a patch changes ("+++ b/PATH").
var plusFile = regexp.MustCompile(`(?m)^\+\+\+ b/(\S+)`)

// TestPatchesStack applies every proposed patch to one copy of its source
// (binutils' tree of 'make binutils-src', glibc's files of setup step 7),
// in file-name order, each on top of the ones before: ci/verify-fixes.sh
// verifies each alone, and a maintainer taking several (005 and 007 change
// the same function, 040, 070 and 071 neighbouring lines) must be able to
// apply them together. Only the files the patches change are copied.
func TestPatchesStack(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("[0-9][0-9][0-9]-*.patch")
	if err != nil || len(names) == 0 {
		t.Fatalf("no NNN-*.patch in docs/findings (%v)", err)
	}
	cache := toolchain.CacheDir()
	for _, kind := range []string{"binutils", "glibc"} {
		t.Run(kind, func(t *testing.T) {
			var src string
			if kind == "glibc" {
				stamp, err := os.ReadFile(filepath.Join(cache, "stamps", "glibc-src-sid"))
				if err != nil {
					testenv.Missing(t, testenv.Step(7), "glibc's source files (%v)", err)
				}
				src = stampValue(stamp, "dir")
			} else {
				stamp, err := os.ReadFile(filepath.Join(cache, "stamps", "binutils-src"))
				if err != nil {
					testenv.Missing(t, testenv.BinutilsSrc, "binutils' source tree (%v)", err)
				}
				src = filepath.Join(cache, "sources", "binutils-"+stampValue(stamp, "version"))
			}
			tree := t.TempDir()
			applied := 0
			for _, name := range names {
				body, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(body, []byte("\n+++ b/sysdeps/")) != (kind == "glibc") {
					continue
				}
				for _, m := range plusFile.FindAllSubmatch(body, -1) {
					f := string(m[1])
					if _, err := os.Stat(filepath.Join(tree, f)); err == nil || bytes.Contains(body, []byte("--- /dev/null\n+++ b/"+f)) {
						continue // copied already, or a file the patch creates
					}
					b, err := os.ReadFile(filepath.Join(src, f))
					if err != nil {
						t.Fatalf("%s changes %s: %v", name, f, err)
					}
					if err := os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(tree, f), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command("patch", "-p1", "--quiet", "--no-backup-if-mismatch", "-d", tree, "-i", filepath.Join(must(os.Getwd()), name))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s does not apply on top of the patches before it: %v\n%s", name, err, out)
				}
				applied++
			}
			if applied < 2 {
				t.Fatalf("%d %s patches: nothing to stack", applied, kind)
			}
		})
	}
}
