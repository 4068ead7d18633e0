package difffuzz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every rule says who is right and why, under a name of its own.
func TestRulesAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.Name] {
			t.Errorf("rule %s defined twice", r.Name)
		}
		seen[r.Name] = true
		if r.Spec == "" || r.match == nil {
			t.Errorf("rule %s: no Spec or no match", r.Name)
		}
		switch r.right {
		case "builtin", "other", "either":
		default:
			t.Errorf("rule %s: right %q, want builtin, other or either", r.Name, r.right)
		}
		if r.Finding != "" {
			if _, err := os.Stat(filepath.Join("..", r.Finding)); err != nil {
				t.Errorf("rule %s links a finding that is not there: %v", r.Name, err)
			}
		}
		if r.right == "either" && !strings.Contains(r.Spec, "Either is right") {
			t.Errorf("rule %s is \"either\" but its Spec does not say why both are right", r.Name)
		}
	}
}

// Every rule is held to a real case: testdata/repros keeps one
// disagreement of each class (TestRepros replays them), except the rules
// generated for every structure or function rule of the layout, of which
// the mutants so far have not shown every one.
func TestEveryRuleHasAReproducer(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(reproDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, p := range paths {
		r, err := ReadRepro(p)
		if err != nil {
			t.Fatal(err)
		}
		kept[r.Class] = true
	}
	for _, r := range Rules {
		generated := strings.HasPrefix(r.Name, "libsframe-unchecked-") || strings.HasPrefix(r.Name, "libsframe-reads-malformed-")
		switch {
		case kept[r.Name]:
		case generated:
			t.Logf("generated rule %s: no reproducer yet", r.Name)
		default:
			t.Errorf("rule %s: no reproducer in %s", r.Name, reproDir)
		}
	}
}
