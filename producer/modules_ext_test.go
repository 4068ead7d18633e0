package producer_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
	"github.com/sfconform/sfconform/validate"
	"github.com/sfconform/sfconform/verdict"
)

// modulesSeeds are seeds the modules layout picks (1 in 8: seed%8 == 4).
func modulesSeeds(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(4 + 8*i)
	}
	return out
}

// laidOut generates the programs of seeds for SFrame version v and lays
// each out on its own at the emulator's code and far regions.
func laidOut(t *testing.T, tg target.Target, v int, seeds []int64) []*gen.Program {
	t.Helper()
	var out []*gen.Program
	for _, s := range seeds {
		p, err := gen.Generate(tg, s, gen.Options{SFrameVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.LayoutAt(0x10000000, 0x150000000); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestToolchainModules links the programs the modules layout picks with
// GNU as and ld 2.47 one ELF per module (an executable and shared
// objects) and checks that each module's section is its own: every FDE of
// it lies in the module's code range, the sections lie at distinct
// addresses, and every function the one-ELF build of the same program
// describes is described by its module's section. Every step of every
// path is then judged, and the builtin unwinder reading the modules gets
// the same verdicts, step for step in number, as reading the one-ELF
// build, and so does the differential against sfconform's own encoding;
// with two modules' sections swapped the verdicts differ.
func TestToolchainModules(t *testing.T) {
	for _, c := range []struct {
		producer string
		targets  []target.Target
	}{
		{"gas-2.47", []target.Target{target.X86_64, target.AArch64, target.S390X}},
		{"gas-2.44", []target.Target{target.X86_64}},
		{"gas-2.40", []target.Target{target.X86_64}},
		{"llvm-mc-23", []target.Target{target.X86_64}},
	} {
		gas, err := producer.New(c.producer)
		if err != nil {
			testenv.Missing(t, testenv.Binutils, "producer %s: %v (toolchains under %s)", c.producer, err, toolchain.CacheDir())
		}
		ml, ok := gas.(producer.ModuleLinker)
		if !ok {
			t.Fatalf("%s (%T) does not link modules", c.producer, gas)
		}
		mods := ml.WithModules(true)
		for _, tg := range c.targets {
			t.Run(c.producer+"/"+tg.Name(), func(t *testing.T) { modulesOf(t, gas, mods, tg) })
		}
	}
}

func modulesOf(t *testing.T, gas, mods producer.Producer, tg target.Target) {
	v, err := gas.SFrameVersion(tg)
	if err != nil {
		t.Fatal(err)
	}
	chk, err := harness.New(tg, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	// Seed 44 (module 6) has a module whose only function is a signal
	// restorer, which GNU as 2.47 gives an FDE without FREs.
	// gen writes version 2 rows at least (campaign.NewMix gives a
	// version 1 toolchain the version 2 mix).
	progs := laidOut(t, tg, max(v, 2), modulesSeeds(6))
	imgs, errs := mods.(producer.BatchProducer).ProduceBatch(progs)
	var two, more, libSteps, pltSteps int
	for i, p := range progs {
		if errs[i] != nil {
			t.Fatalf("seed %d: %v", p.Seed, errs[i])
		}
		img := imgs[i]
		objects := 0
		for _, m := range img.Modules {
			if !producer.PLTModule(m.Name) {
				objects++
			}
		}
		if objects < 2 {
			continue
		}
		bucket := map[bool]string{true: "modules:2", false: "modules:3+"}[objects == 2]
		if names, err := producer.ImageShapes(img); err != nil || !slices.Contains(names, bucket) {
			t.Errorf("seed %d: %d objects (%d modules with the .plt mappings), shapes %v (%v), not %s", p.Seed, objects, len(img.Modules), names, err, bucket)
		}
		if objects == 2 {
			two++
		} else {
			more++
		}
		one, err := gas.Produce(p)
		if err != nil {
			t.Fatalf("seed %d, one ELF: %v", p.Seed, err)
		}
		if len(one.Modules) != 0 {
			t.Fatalf("seed %d: the producer without the modules layout made %d modules", p.Seed, len(one.Modules))
		}
		if slices.ContainsFunc(one.Symbols, func(s image.Symbol) bool { return s.Name == ".plt" }) {
			// The one ELF calls gen's PLT-like stubs through ld's .plt
			// (plt.go), the modules reach the stubs: not the same steps.
			t.Logf("seed %d: the one-ELF build calls its stubs through a PLT: not compared", p.Seed)
			continue
		}
		checkOwnSections(t, p.Seed, img, one)
		if a, b := validate.Section(img), validate.Section(one); len(a) != len(b) {
			t.Errorf("seed %d: the modules' sections break %v, the one ELF's %v", p.Seed, a, b)
		}
		if !strings.Contains(strings.Join(img.Record.Commands, "\n"), "-shared") {
			t.Errorf("seed %d: no module was linked as a shared object: %q", p.Seed, img.Record.Commands)
		}
		// The differential reads each module's rows: they differ from
		// sfconform's own encoding where the one ELF's do.
		ref, err := harness.Reference(img, p)
		if err != nil {
			t.Fatal(err)
		}
		// A reproducer's one-ELF commands keep none of a module's link.
		if tl := producer.ToolsOf(img.Record); tl == nil || slices.ContainsFunc(tl.LDFlags, func(a string) bool {
			return strings.HasPrefix(a, "--defsym") || a == "-Bsymbolic" || a == "-shared"
		}) {
			t.Errorf("seed %d: the tools read from the record: %+v", p.Seed, tl)
		}
		// Calls between modules through a PLT run its entries: steps the
		// one ELF has not, each judged OK, each a row sfconform's own
		// encoding has not (gen knows no PLT).
		tr := chk.Trace(img, consumer.NewBuiltin())
		plt := 0
		for _, pc := range tr.Executed {
			switch i := img.ModuleAt(pc); {
			case i >= 0 && producer.PLTModule(img.Modules[i].Name):
				plt++
				if s, ok := img.SymbolAt(pc); !ok || !strings.HasSuffix(s.Name, "@plt") {
					t.Errorf("seed %d: step at %#x in %s is in no PLT entry's symbol (%+v)", p.Seed, pc, img.Modules[i].Name, s)
				}
			case i >= 0 && img.Modules[i].Name != "exe":
				libSteps++
			}
		}
		pltSteps += plt
		got, want := chk.CheckAgainst(img, ref, consumer.NewBuiltin()), chk.CheckAgainst(one, ref, consumer.NewBuiltin())
		// A PLT entry's step is OK; where the one ELF's walks fail at the
		// entry stub (gas 2.40 and 2.44 leave it without its outermost
		// row), a walk from the entry fails there too, WRONG or ERROR as
		// the stack holds, but never for want of a row (NOINFO).
		wantCounts := want.Counts
		if want.Counts[verdict.OK] == want.Steps {
			wantCounts[verdict.OK] += plt
		} else {
			wantCounts = got.Counts
			wantCounts[verdict.NoInfo] = want.Counts[verdict.NoInfo]
		}
		if got.Steps == 0 || got.Steps != want.Steps+plt || got.Counts != wantCounts || got.LoadErr != nil || got.RunErr != nil {
			t.Errorf("seed %d: %d modules: %d steps (%d in a PLT), verdicts %v (%v, %v); one ELF: %d steps, verdicts %v",
				p.Seed, len(img.Modules), got.Steps, plt, got.Counts, got.LoadErr, got.RunErr, want.Steps, want.Counts)
		}
		if got.Differs != want.Differs+plt || got.Equivalent != want.Equivalent+plt {
			t.Errorf("seed %d: %d modules: rows differ from sfconform's encoding at %d steps (%d equivalent, %d in a PLT); one ELF: %d (%d)",
				p.Seed, len(img.Modules), got.Differs, got.Equivalent, plt, want.Differs, want.Equivalent)
		}
		swapped := *img
		swapped.Modules = append([]image.Module(nil), img.Modules...)
		var objs []int
		for i, m := range swapped.Modules {
			if !producer.PLTModule(m.Name) {
				objs = append(objs, i)
			}
		}
		m0, m1 := &swapped.Modules[objs[0]], &swapped.Modules[objs[1]]
		m0.SFrame, m1.SFrame, m0.SFrameAddr, m1.SFrameAddr = m1.SFrame, m0.SFrame, m1.SFrameAddr, m0.SFrameAddr
		if bad := chk.Check(&swapped, consumer.NewBuiltin()); bad.Counts == want.Counts {
			t.Errorf("seed %d: with the sections of %s and %s swapped the verdicts are the same: %v", p.Seed, m0.Name, m1.Name, bad.Counts)
		}
	}
	t.Logf("%d programs of 2 modules, %d of 3 or more; %d steps in shared objects, %d in PLT entries", two, more, libSteps, pltSteps)
	if two+more == 0 || libSteps == 0 {
		t.Errorf("%d programs made of modules, %d steps in shared objects: nothing was judged", two+more, libSteps)
	}
	// GNU ld describes its .plt in .sframe for x86-64 and s390x, not for
	// AArch64, and loses llvm-mc's FDEs in a link with a .plt: there the
	// calls stay direct, and the producer's Limits say why.
	why, direct := gas.(producer.Limited).Limits(tg)["plt-stubs"]
	if direct == (pltSteps > 0) {
		t.Errorf("%s: %d steps in PLT entries; the producer's limits say %q", tg.Name(), pltSteps, why)
	}
}

// checkOwnSections checks that each module's section describes its own
// functions: the FDEs of the one-ELF build, each in exactly its module's.
func checkOwnSections(t *testing.T, seed int64, img, one *image.Image) {
	t.Helper()
	all, err := sframe.Decode(one.SFrame, one.SFrameAddr)
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[uint64]string{}
	plts := map[uint64]image.Module{} // a .plt mapping by its object's section
	for _, m := range img.Modules {
		if producer.PLTModule(m.Name) {
			plts[m.SFrameAddr] = m
		}
	}
	n := 0
	for _, m := range img.Modules {
		if producer.PLTModule(m.Name) {
			continue
		}
		if other, dup := addrs[m.SFrameAddr]; dup {
			t.Errorf("seed %d: modules %s and %s have their sections at %#x", seed, other, m.Name, m.SFrameAddr)
		}
		addrs[m.SFrameAddr] = m.Name
		tab, err := sframe.Decode(m.SFrame, m.SFrameAddr)
		if err != nil {
			t.Fatalf("seed %d: module %s: %v", seed, m.Name, err)
		}
		for _, s := range tab.Sections {
			for i := 0; i < int(s.Header.NumFDEs); i++ {
				f := s.Func(i)
				if pm, ok := plts[m.SFrameAddr]; ok && pm.Holds(f.Start) {
					continue // ld's FDEs for its .plt
				}
				n++
				if !m.Holds(f.Start) {
					t.Errorf("seed %d: module %s [%#x,%#x) has an FDE at %#x", seed, m.Name, m.Start, m.End, f.Start)
				}
				if g, err := all.FindFDE(f.Start); err != nil || g.Start != f.Start || g.Size != f.Size {
					t.Errorf("seed %d: module %s's FDE at %#x (+%d) is not the one-ELF build's (%+v, %v)", seed, m.Name, f.Start, f.Size, g, err)
				}
			}
		}
	}
	if want := fdeTotal(all); n != want {
		t.Errorf("seed %d: the modules' sections hold %d FDEs, the one-ELF build's %d", seed, n, want)
	}
}

func fdeTotal(t *sframe.Table) int {
	n := 0
	for _, s := range t.Sections {
		n += int(s.Header.NumFDEs)
	}
	return n
}
