package architecture

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	module  = "github.com/sfconform/sfconform"
	unicorn = "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// leaves is the shared vocabulary: these import only each other.
var leaves = []string{"target", "machine", "image", "frame", "verdict", "sigframe"}

// campaignUsers are the packages that run cells with package campaign:
// the engine imports none of them.
var campaignUsers = []string{"cmd", "suites", "matrix", "realcode", "check", "difffuzz"}

// pkg is one package of the module: its production imports and the
// imports of its tests.
type pkg struct {
	imports     []string
	testImports []string
}

// graph maps a package path relative to the module root ("oracle",
// "suites/conformance") to its imports.
type graph map[string]pkg

// load reads every package under root with go/build (no subprocess, no
// network): the same import lists the compiler sees.
func load(t *testing.T, root string) graph {
	t.Helper()
	g := graph{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "failures" || name == "reports") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		p := pkg{imports: bp.Imports}
		p.testImports = append(append(p.testImports, bp.TestImports...), bp.XTestImports...)
		g[filepath.ToSlash(rel)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// local returns the module-relative name of an import path, or "" for a
// path outside the module.
func local(path string) string {
	if path == module {
		return "."
	}
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest
	}
	return ""
}

// deps is the transitive closure of p's production imports inside the
// module, with the chain that reaches each one.
func (g graph) deps(p string) map[string]string {
	seen := map[string]string{}
	var walk func(p, chain string)
	walk = func(p, chain string) {
		for _, imp := range g[p].imports {
			l := local(imp)
			if l == "" {
				continue
			}
			if _, ok := seen[l]; ok {
				continue
			}
			seen[l] = chain + " -> " + l
			walk(l, seen[l])
		}
	}
	walk(p, p)
	return seen
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// violations applies the rules to g and returns one line per broken rule.
func violations(g graph) []string {
	var out []string
	isLeaf := func(p string) bool {
		for _, l := range leaves {
			if p == l {
				return true
			}
		}
		return false
	}
	for p, info := range g {
		deps := g.deps(p)
		switch {
		case p == "oracle":
			for d, chain := range deps {
				if !isLeaf(d) {
					out = append(out, "the oracle depends on "+d+" ("+chain+"): it may use only the leaf packages "+strings.Join(leaves, ", "))
				}
			}
		case under(p, "consumer"):
			for d, chain := range deps {
				if d == "oracle" || d == "gen" || d == "producer" || d == "harness" {
					out = append(out, "consumer package "+p+" depends on "+d+" ("+chain+")")
				}
			}
		case isLeaf(p):
			for d, chain := range deps {
				if !isLeaf(d) {
					out = append(out, "leaf package "+p+" depends on "+d+" ("+chain+")")
				}
			}
		case p == "sframe":
			for d, chain := range deps {
				out = append(out, "sframe depends on "+d+" ("+chain+"): the format library imports nothing of the project")
			}
		case p == "dumper":
			for d, chain := range deps {
				if d != "sframe" {
					out = append(out, "dumper depends on "+d+" ("+chain+"): it reads dumpers' text into sframe types and nothing else")
				}
			}
		case under(p, "report"):
			for d, chain := range deps {
				out = append(out, "report package "+p+" depends on "+d+" ("+chain+"): it renders the values it is given and judges nothing")
			}
		case p == "campaign":
			for d, chain := range deps {
				for _, user := range campaignUsers {
					if under(d, user) {
						out = append(out, "campaign depends on "+d+" ("+chain+"): it runs the cells of "+strings.Join(campaignUsers, ", ")+" and imports none of them")
					}
				}
			}
		case under(p, "kit"):
			// The conformance kit judges an unwinder written from the
			// protocol document through the sfconform binary: its tests
			// link nothing of the project that could lend that unwinder
			// (or the judging) the Go unwinder's knowledge.
			for _, imp := range append(append([]string(nil), info.imports...), info.testImports...) {
				if d := local(imp); d != "" && d != "internal/testenv" {
					out = append(out, "kit package "+p+" imports "+d+": the kit drives the sfconform binary and imports only internal/testenv")
				}
			}
		case p == "corpus":
			for d, chain := range deps {
				if d == "gen" || d == "producer" || d == "oracle" || d == "emu" || d == "harness" || d == "consumer" {
					out = append(out, "corpus depends on "+d+" ("+chain+"): reproducers must read without it")
				}
			}
		}
		if p != "emu" {
			for _, imp := range append(append([]string(nil), info.imports...), info.testImports...) {
				if imp == unicorn {
					out = append(out, p+" imports Unicorn: only emu may")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestDependencyRules(t *testing.T) {
	t.Parallel()
	g := load(t, "..")
	// The walk found the project, not an empty directory.
	for _, p := range append([]string{"oracle", "consumer", "sframe", "corpus", "emu", "gen", "producer", "harness", "campaign", "report/html", "kit"}, leaves...) {
		if _, ok := g[p]; !ok {
			t.Fatalf("package %s not found under the module root", p)
		}
	}
	if v := violations(g); len(v) > 0 {
		t.Fatalf("dependency rules broken:\n%s", strings.Join(v, "\n"))
	}
	if d := g.deps("oracle"); len(d) == 0 {
		t.Fatal("the oracle has no dependencies at all: the import graph was not read")
	}
}

// Each rule fires on a graph that breaks it: the check can fail.
func TestRulesCatchViolations(t *testing.T) {
	t.Parallel()
	base := func() graph {
		return graph{
			"oracle":   {imports: []string{module + "/frame", "fmt"}},
			"frame":    {},
			"consumer": {imports: []string{module + "/sframe", module + "/frame"}},
			"sframe":   {imports: []string{"encoding/binary"}},
			"corpus":   {imports: []string{module + "/frame"}},
			"emu":      {imports: []string{unicorn}},
			"harness":  {imports: []string{module + "/oracle", module + "/consumer", module + "/emu"}},
			"gen":      {},
		}
	}
	if v := violations(base()); len(v) != 0 {
		t.Fatalf("a clean graph reports %v", v)
	}
	for _, c := range []struct {
		name string
		edit func(graph)
		want string
	}{
		{"oracle -> sframe, through a leaf", func(g graph) {
			g["frame"] = pkg{imports: []string{module + "/sframe"}}
		}, "the oracle depends on sframe (oracle -> frame -> sframe)"},
		{"consumer -> oracle", func(g graph) {
			g["consumer"] = pkg{imports: []string{module + "/oracle"}}
		}, "consumer package consumer depends on oracle"},
		{"sframe -> project", func(g graph) {
			g["sframe"] = pkg{imports: []string{module + "/frame"}}
		}, "sframe depends on frame"},
		{"corpus -> gen", func(g graph) {
			g["corpus"] = pkg{imports: []string{module + "/gen"}}
		}, "corpus depends on gen"},
		{"report/html -> oracle", func(g graph) {
			g["report/html"] = pkg{imports: []string{module + "/oracle"}}
		}, "report package report/html depends on oracle"},
		{"campaign -> matrix, through harness", func(g graph) {
			g["campaign"] = pkg{imports: []string{module + "/harness"}}
			g["harness"] = pkg{imports: []string{module + "/matrix"}}
		}, "campaign depends on matrix (campaign -> harness -> matrix)"},
		{"kit test -> sframe", func(g graph) {
			g["kit"] = pkg{testImports: []string{module + "/internal/testenv", module + "/sframe"}}
		}, "kit package kit imports sframe"},
		{"unicorn outside emu, in a test", func(g graph) {
			g["harness"] = pkg{testImports: []string{unicorn}}
		}, "harness imports Unicorn"},
	} {
		g := base()
		c.edit(g)
		v := violations(g)
		found := false
		for _, line := range v {
			if strings.Contains(line, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: violations %q do not mention %q", c.name, v, c.want)
		}
	}
}
