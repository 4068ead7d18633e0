package difffuzz

import "testing"

// The layout reads what every producer writes without finding a broken
// rule: it is the classifier's eyes, and a rule it misreads would
// classify a valid section as malformed.
func TestLayoutOfSeedsIsClean(t *testing.T) {
	for _, c := range seedsFor(t) {
		l := readLayout(c.Section, c.Addr)
		if len(l.sections) == 0 {
			t.Errorf("%s: no section read", c.Name)
			continue
		}
		nfdes := 0
		for _, s := range l.sections {
			nfdes += len(s.fdes)
			if !s.countsOK || !s.fresInside || !s.fdesComplete {
				t.Errorf("%s: section at %d: counts %v, FREs inside %v, FDEs complete %v", c.Name, s.off, s.countsOK, s.fresInside, s.fdesComplete)
			}
		}
		if nfdes == 0 {
			t.Errorf("%s: no FDE read", c.Name)
		}
		for _, b := range l.broken {
			t.Errorf("%s: %v", c.Name, b)
		}
	}
}
