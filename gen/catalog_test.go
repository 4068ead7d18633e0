package gen

import (
	"testing"

	"github.com/sfconform/sfconform/image"
)

// TestCatalogFlags checks that every pattern's flags say what its programs
// do: the planner, the reducer and the reports act on the flags alone, so
// a flag that is missing or wrong misplaces a function silently.
func TestCatalogFlags(t *testing.T) {
	t.Parallel()
	infos := map[string]PatternInfo{}
	for _, info := range Catalog() {
		infos[info.Name] = info
	}
	for _, ti := range isas {
		plain := 0
		for _, p := range ti.patterns {
			name := ti.abi.Name() + " " + p.name
			info := infos[p.name]
			if info.Signal != p.signal || info.SwitchesStack != p.switchesStack || info.Far != p.far ||
				info.EmptyFDE != (p.emptyEntryFDE || p.emptyTrampolineFDE) {
				t.Errorf("%s: PatternInfo %+v does not say what the pattern's flags do", name, info)
			}
			if p.emptyTrampolineFDE && !p.signal {
				t.Errorf("%s: an empty trampoline FDE without a signal handler", name)
			}
			if p.noReturn {
				t.Errorf("%s: a noreturn callee in the catalog", name)
			}
			if p.plain {
				plain++
				if !p.calls || p.needsDeeper() || p.signal || p.far || p.switchesStack || p.emptyEntryFDE ||
					p.earlyExit || p.entryExit || !p.expresses(2) || !p.expresses(3) {
					t.Errorf("%s: flagged plain but not a plain function that calls, in every version", name)
				}
			}
			checkPatternPrograms(t, ti, p)
		}
		if plain != 1 {
			t.Errorf("%s: %d plain patterns, want 1", ti.abi.Name(), plain)
		}
	}
}

// checkPatternPrograms generates programs of p alone and compares what
// they hold with p's flags.
func checkPatternPrograms(t *testing.T, ti *isa, p *pattern) {
	name := ti.abi.Name() + " " + p.name
	var handlers, stacks, far, emptyEntry, emptyTramp, noret int
	for seed := int64(0); seed < 6; seed++ {
		prog, err := Generate(ti.abi, seed, Options{Patterns: []string{p.name}, SFrameVersion: 3})
		if err != nil {
			t.Fatalf("%s seed %d: %v", name, seed, err)
		}
		stacks += len(prog.Stacks())
		for i, f := range prog.Funcs {
			switch {
			case f.Kind == image.KindSignalHandler:
				handlers++
				if f.Pattern != p.name {
					t.Errorf("%s seed %d: handler %s of pattern %s", name, seed, f.Name, f.Pattern)
				}
			case f.Far:
				far++
			case f.EmptyFDE && i == 0:
				emptyEntry++
			case f.EmptyFDE && f.Kind == image.KindSignalRestorer:
				emptyTramp++
			case f.EmptyFDE:
				t.Errorf("%s seed %d: %s has an FDE without rows", name, seed, f.Name)
			case f.Pattern == noreturnCallee.name:
				noret++
			}
			if f.EmptyFDE && f.EmptyFDEPattern != p.name {
				t.Errorf("%s seed %d: %s's FDE without rows is charged to %q", name, seed, f.Name, f.EmptyFDEPattern)
			}
		}
	}
	for _, c := range []struct {
		what  string
		flag  bool
		count int
	}{
		{"signal handlers", p.signal, handlers},
		{"fresh stacks", p.switchesStack, stacks},
		{"far functions", p.far, far},
		{"an entry stub FDE without rows", p.emptyEntryFDE, emptyEntry},
		{"a trampoline FDE without rows", p.emptyTrampolineFDE, emptyTramp},
	} {
		if c.flag != (c.count > 0) {
			t.Errorf("%s: flag %v, but 6 programs have %d %s", name, c.flag, c.count, c.what)
		}
	}
	// A noreturn callee comes with every pattern that exits through one
	// (shrink-wrap too); the plain fallback never makes one.
	if p.exits != (noret > 0) {
		t.Errorf("%s: exits %v, but 6 programs have %d noreturn callees", name, p.exits, noret)
	}
}
