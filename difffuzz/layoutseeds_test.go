package difffuzz

import (
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// TestLayoutSeedsHaveEveryShape: the layouts seeds give the consumers
// every section shape they look for, on every target and version that
// can write it: a shape no seed has is never fuzzed.
func TestLayoutSeedsHaveEveryShape(t *testing.T) {
	var got = map[string][]string{} // by producer/target
	for _, c := range seedsFor(t) {
		if !strings.Contains(c.Name, LayoutSuffix) {
			continue
		}
		parts := strings.SplitN(c.Name, "/", 3)
		key := parts[0] + "/" + parts[1]
		names, err := producer.SectionShapes(c.Section, c.Addr)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if strings.Count(c.Name, "/") > 3 { // a module's section
			names = append(names, producer.LayoutModules)
		}
		got[key] = append(got[key], names...)
	}
	for _, v := range []sframe.Version{2, 3} {
		for _, tg := range target.All {
			key := "builtin-v" + string(rune('0'+v)) + LayoutSuffix + "/" + tg.Name()
			for _, n := range WantedShapes {
				if n == producer.LayoutSectionRelative && v >= 3 {
					continue
				}
				if !slices.Contains(got[key], n) {
					t.Errorf("%s: no seed section has %s (it has %v)", key, n, compact(got[key]))
				}
			}
		}
	}
}

func compact(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
