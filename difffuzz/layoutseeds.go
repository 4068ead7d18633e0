package difffuzz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// Section layouts as seeds.
//
// The builtin producer with its section layouts on (producer.Layouts: an
// auxiliary header, an unsorted table, v2 starts relative to the
// section, padding after the last FRE, two sections concatenated, a
// process of several modules) writes the header shapes no toolchain
// writes today; gen's idle functions make large tables. A seed producer
// named builtin-vN+layouts is builtin-vN with every shape its version
// can write (those its strict rules forbid included: a consumer may still
// read them, and what it does with them is the question). Its programs
// are picked from the seeds on, each kept when its sections have a shape
// (WantedShapes) no earlier one had, until every shape is there or
// layoutScan seeds are looked at; each section of a program of modules is
// a case of its own, with the program's states.

// LayoutSuffix makes a builtin producer's name a layouts seed producer's.
const LayoutSuffix = "+layouts"

// WantedShapes are the section shapes (producer.ImageShapes) the layouts
// seeds look for.
var WantedShapes = append(slices.Clone(producer.LayoutNames), "fdes:64-999", "fdes:1000-9999")

// layoutScan is how many seeds the layouts seeds look at, at most.
const layoutScan = 400

// layoutProducer is the builtin producer with every layout shape version v
// can write.
func layoutProducer(name string) (producer.Builtin, bool) {
	base, ok := strings.CutSuffix(name, LayoutSuffix)
	if !ok {
		return producer.Builtin{}, false
	}
	var v sframe.Version
	if _, err := fmt.Sscanf(base, "builtin-v%d", &v); err != nil {
		return producer.Builtin{}, false
	}
	var names []string
	for _, sh := range producer.LayoutShapes(int(v)) {
		if sh.Why == "" || sh.Violates != nil {
			names = append(names, sh.Name)
		}
	}
	set, err := producer.LayoutSet(names...)
	if err != nil {
		return producer.Builtin{}, false
	}
	return producer.Builtin{Version: v, Layouts: set}, true
}

// layoutSeedsOf makes the cases of a layouts seed producer on tg.
func layoutSeedsOf(pool *campaign.Worker, name string, prod producer.Builtin, tg target.Target, opt SeedOptions) ([]*Case, error) {
	checker, err := pool.Checker(tg)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range WantedShapes {
		if n == producer.LayoutSectionRelative && prod.Version >= 3 {
			continue // v3 starts are always PC-relative
		}
		want[n] = true
	}
	var out []*Case
	for s := opt.Seed; s < opt.Seed+layoutScan && len(want) > 0; s++ {
		img, _, err := campaign.Produce(prod, tg, s, gen.Options{})
		if err != nil {
			return nil, fmt.Errorf("seed %s on %s, program %d: %w", name, tg.Name(), s, err)
		}
		shapes, err := producer.ImageShapes(img)
		if err != nil {
			return nil, fmt.Errorf("seed %s on %s, program %d: %w", name, tg.Name(), s, err)
		}
		var adds []string
		for _, sh := range shapes {
			if want[sh] {
				adds = append(adds, sh)
			}
		}
		if len(adds) == 0 {
			continue
		}
		for _, sh := range adds {
			delete(want, sh)
		}
		rec := &recorder{Builtin: consumer.NewBuiltin()}
		if res := checker.Check(img, rec); res.RunErr != nil {
			return nil, fmt.Errorf("seed %s on %s, program %d: the run stopped: %w", name, tg.Name(), s, res.RunErr)
		}
		states := spread([][]*machine.Snapshot{rec.states}, opt.Steps)
		for _, m := range img.Sections() {
			c := &Case{
				Name:    fmt.Sprintf("%s/%s/v%d/seed%d", name, tg.Name(), prod.Version, s),
				Target:  tg,
				Addr:    m.SFrameAddr,
				Section: slices.Clone(m.SFrame),
				Steps:   states,
			}
			if m.Name != "" {
				c.Name += "/" + m.Name
			}
			out = append(out, c)
		}
	}
	return out, nil
}
