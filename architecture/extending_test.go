package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/toolchain"
)

// docPath is a path written alone in backquotes in docs/extending.md: a
// folder and a file, or a folder with a trailing slash.
var docPath = regexp.MustCompile("`((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*|README\\.md)`")

// docPaths returns the repository paths docs/extending.md names.
func docPaths(text string) []string {
	var out []string
	for _, m := range docPath.FindAllStringSubmatch(text, -1) {
		p := m[1]
		if strings.HasPrefix(p, "$") || strings.Contains(p, "SFCONFORM_CACHE") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// missingPaths lists the paths that are not in the tree under root. A
// path with NAME or TARGET in it is a file to create: its folder must
// exist.
func missingPaths(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		check := p
		if strings.Contains(p, "NAME") || strings.Contains(p, "TARGET") {
			check = filepath.Dir(strings.TrimSuffix(p, "/"))
		}
		if _, err := os.Stat(filepath.Join(root, check)); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// Every file docs/extending.md tells one to touch is in the tree.
func TestExtendingDocNamesRealFiles(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := docPaths(string(data))
	if len(paths) < 40 {
		t.Fatalf("found %d paths in docs/extending.md: the pattern does not read its lists", len(paths))
	}
	if m := missingPaths("..", paths); len(m) > 0 {
		t.Errorf("docs/extending.md names files that are not in the tree: %s", strings.Join(m, ", "))
	}
	// The check can fail: a renamed file is reported.
	if m := missingPaths("..", []string{"consumer/no-such-file.go", "gen/skel_NAME.go", "nowhere/NAME.go"}); strings.Join(m, " ") != "consumer/no-such-file.go nowhere/NAME.go" {
		t.Errorf("missingPaths reports %v", m)
	}
}

// setupSteps reads the numbered list of steps at the top of ci/setup.sh:
// step number to its text.
func setupSteps(t *testing.T) map[int]string {
	t.Helper()
	data, err := os.ReadFile("../ci/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int]string{}
	cur := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			if cur > 0 {
				break
			}
			continue
		}
		var n int
		if _, err := fmt.Sscanf(line, "#   %d. ", &n); err == nil && strings.HasPrefix(line, fmt.Sprintf("#   %d. ", n)) {
			cur = n
		} else if cur > 0 && !strings.HasPrefix(line, "#      ") {
			cur = -1 // the list ended
		}
		if cur > 0 {
			steps[cur] += line + "\n"
		}
	}
	if len(steps) < 7 {
		t.Fatalf("read %d steps from ci/setup.sh's list", len(steps))
	}
	return steps
}

// tool is the word a setup step's text names a plug-in by: its name
// without a version or an argument; GNU's producers by their package.
func tool(name string) string {
	name, _, _ = strings.Cut(name, ":")
	name = strings.TrimRight(name, "0123456789.")
	name = strings.TrimSuffix(name, "-")
	if name == "gas" {
		return "binutils"
	}
	return name
}

// stepProblem says what is wrong with a plug-in's setup step, "" when
// nothing: NoSetup, or a step ci/setup.sh lists whose text names it.
func stepProblem(steps map[int]string, name string, step int) string {
	switch {
	case step == toolchain.NoSetup:
		return ""
	case step <= 0:
		return fmt.Sprintf("%s: setup step %d: want the ci/setup.sh step that provides it, or toolchain.NoSetup", name, step)
	case steps[step] == "":
		return fmt.Sprintf("%s: setup step %d is not in ci/setup.sh's list of steps", name, step)
	case !strings.Contains(steps[step], tool(name)):
		return fmt.Sprintf("%s: ci/setup.sh step %d does not name %q:\n%s", name, step, tool(name), steps[step])
	}
	return ""
}

// Every registered plug-in says which setup step provides it (one that
// ci/setup.sh lists and whose text names it), has a summary, and, when it
// can be made here, an exact version of its own.
func TestPluginsDescribeThemselves(t *testing.T) {
	t.Parallel()
	steps := setupSteps(t)
	for name, step := range producer.SetupProvided() {
		if p := stepProblem(steps, name, step); p != "" {
			t.Error(p)
		}
	}
	for name, step := range consumer.SetupProvided() {
		if p := stepProblem(steps, name, step); p != "" {
			t.Error(p)
		}
	}
	if stepProblem(steps, "glibc", 6) == "" || stepProblem(steps, "glibc", 0) == "" || stepProblem(steps, "glibc", 99) == "" {
		t.Error("stepProblem accepts a wrong step")
	}
	for _, a := range producer.Describe() {
		if p := stepProblem(steps, a.Name, a.Setup); p != "" {
			t.Error(p)
		}
		if a.Summary == "" {
			t.Errorf("producer %s has no summary", a.Name)
		}
		if a.NeedsArg {
			continue
		}
		p, err := producer.New(a.Name)
		testenv.IfNotProvisioned(t, err)
		if err != nil {
			t.Errorf("producer %s: %v", a.Name, err)
			continue
		}
		if _, ok := p.(producer.Versioned); !ok || producer.Version(p) == a.Name {
			t.Errorf("producer %s does not say its exact version (ExactVersion: %q)", a.Name, producer.Version(p))
		}
	}
	for _, a := range consumer.Describe() {
		if p := stepProblem(steps, a.Kind, a.Setup); p != "" {
			t.Error(p)
		}
		if a.Summary == "" {
			t.Errorf("consumer %s has no summary", a.Kind)
		}
		if a.NeedsArg {
			continue
		}
		for _, n := range append([]string{a.Kind}, a.Variants...) {
			c, err := consumer.New(n)
			testenv.IfNotProvisioned(t, err)
			if err != nil {
				t.Errorf("consumer %s: %v", n, err)
				continue
			}
			if _, ok := c.(consumer.Versioned); !ok || consumer.Version(c) == n {
				t.Errorf("consumer %s does not say its exact version (ExactVersion: %q)", n, consumer.Version(c))
			}
			c.Close()
		}
	}
}

// nameAllowed are the production files that may name a provisioned
// consumer, each for what it knows about that library or tool rather
// than about the plug-in: everything else asks the registry.
var nameAllowed = map[string]string{
	"difffuzz/classify.go": "the differential fuzzer's rules about libsframe's and glibc's findings (matched by consumer.About.Library)",
	"repro/report.go":      "the report kind whose commands are a C program against libsframe's API",
	"realcode/csmith.go":   "the triage of known findings by tool",
	"realcode/known.go":    "the known deviations of real code, by tool",
}

// consumerNameLiterals lists, per production .go file under root (tests,
// consumer/ and suites/ aside), the string literals that name a
// provisioned consumer: a kind or variant of names, or a family member
// (a name starting with one of prefixes).
func consumerNameLiterals(t *testing.T, root string, names, prefixes []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (rel == "consumer" || rel == "suites" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			hit := slices.Contains(names, s)
			for _, p := range prefixes {
				hit = hit || strings.HasPrefix(s, p)
			}
			if hit {
				out[filepath.ToSlash(rel)] = append(out[filepath.ToSlash(rel)], s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// No production code outside consumer/ switches on a provisioned
// consumer's name (docs/extending.md): it asks the registry.
func TestNoConsumerNameSwitches(t *testing.T) {
	t.Parallel()
	var names, prefixes []string
	for n, step := range consumer.SetupProvided() {
		if step <= 0 {
			continue
		}
		if consumer.InFamily(n) || strings.TrimRight(n, "0123456789.") != n {
			prefixes = append(prefixes, strings.TrimRight(n, "0123456789."))
			continue
		}
		names = append(names, n)
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	if !slices.Contains(names, "libsframe") || !slices.Contains(prefixes, "objdump-") {
		t.Fatalf("names %v, prefixes %v: the registry was not read", names, prefixes)
	}
	found := consumerNameLiterals(t, "..", names, prefixes)
	if len(found["difffuzz/classify.go"]) == 0 {
		t.Fatal("the walk did not read difffuzz/classify.go, which names libsframe")
	}
	for file, lits := range found {
		if _, ok := nameAllowed[file]; !ok {
			t.Errorf("%s names consumers %q: ask the registry (consumer.Lookup, About) instead", file, lits)
		}
	}
	// The check can fail: a switch on a name is found.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "matrix"), 0o755)
	os.WriteFile(filepath.Join(dir, "matrix", "x.go"), []byte("package matrix\n\nfunc f(n string) bool { return n == \"glibc\" || n == \"readelf-2.40\" }\n"), 0o644)
	if got := consumerNameLiterals(t, dir, names, prefixes); len(got["matrix/x.go"]) != 2 {
		t.Errorf("a file switching on two names: found %v", got)
	}
}
