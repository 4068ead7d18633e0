package main

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// usageExempt are the subcommands whose usage text is being rewritten
// elsewhere, checked once that lands.
var usageExempt = map[string]string{}

// Every subcommand's usage text names each of its flags: the lines above
// "Flags:" are what a reader reads first, and a flag found only in the
// generated list below is easy to miss.
func TestUsageListsEveryFlag(t *testing.T) {
	t.Parallel()
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	flagLine := regexp.MustCompile(`(?m)^  -([a-zA-Z0-9][a-zA-Z0-9-]*)`)
	for _, n := range names {
		var out, errOut bytes.Buffer
		subcommands[n].run([]string{"-h"}, &out, &errOut)
		head, flags, ok := strings.Cut(out.String(), "\nFlags:\n")
		if !ok {
			t.Errorf("%s -h: no Flags: section:\n%s%s", n, out.String(), errOut.String())
			continue
		}
		var missing []string
		for _, entry := range strings.Split("\n"+flags, "\n  -")[1:] {
			m := flagLine.FindStringSubmatch("  -" + entry)
			if m == nil {
				continue
			}
			f := m[1]
			if strings.Contains(entry, "the former name of") {
				continue // an old spelling kept working, not advertised
			}
			if !regexp.MustCompile(`(^|[\s\[|(,])--?` + regexp.QuoteMeta(f) + `\b`).MatchString(head) {
				missing = append(missing, "--"+f)
			}
		}
		// A command that takes --targets says which there are.
		if strings.Contains(flags, "\n  -targets ") {
			for _, tg := range target.All {
				if !strings.Contains(out.String(), tg.Name()) {
					missing = append(missing, "target "+tg.Name())
				}
			}
		}
		if len(missing) == 0 {
			continue
		}
		if why, ok := usageExempt[n]; ok {
			t.Logf("%s: usage does not name %v (%s)", n, missing, why)
			continue
		}
		t.Errorf("%s: the usage text does not name %s", n, strings.Join(missing, ", "))
	}
}
