package producer

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/validate"
)

// TestLayoutsShapeSections checks that the builtin producer with every
// layout shape its version allows writes each at the seeds that pick it, and that such a
// section still decodes to the same functions and breaks no
// rule: an auxiliary header of the length the header says, FDE_SORTED
// clear with the index out of order, the PCREL flag clear, zero bytes
// after the last FRE, two sections.
func TestLayoutsShapeSections(t *testing.T) {
	t.Parallel()
	for _, v := range []sframe.Version{2, 3} {
		var allowed []string
		for _, sh := range LayoutShapes(int(v)) {
			if sh.Why == "" {
				allowed = append(allowed, sh.Name)
			}
		}
		all, err := LayoutSet(allowed...)
		if err != nil {
			t.Fatal(err)
		}
		checkLayouts(t, v, all)
	}
}

func checkLayouts(t *testing.T, v sframe.Version, all Layouts) {
	seen := map[string]int{}
	for _, abi := range target.All {
		for seed := int64(0); seed < 24; seed++ {
			p, err := gen.Generate(abi, seed, gen.Options{SFrameVersion: int(v), Idle: 70})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Layout(0x10000000); err != nil {
				t.Fatal(err)
			}
			img, err := Builtin{Version: v, Layouts: all}.Produce(p)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := Builtin{Version: v}.Produce(p)
			if err != nil {
				t.Fatal(err)
			}
			if vs := validate.Section(img); validate.Invalid(vs) {
				t.Errorf("%s seed %d: %v", abi.Name(), seed, vs)
			}
			secs := img.Sections()
			if len(img.Modules) > 0 {
				seen[LayoutModules]++
				checkModules(t, img, p, abi.Name(), seed)
			}
			tabs := make([]*sframe.Table, len(secs))
			for i, m := range secs {
				tab, err := sframe.Decode(m.SFrame, m.SFrameAddr)
				if err != nil {
					t.Fatalf("%s seed %d module %d: %v", abi.Name(), seed, i, err)
				}
				tabs[i] = tab
				h := tab.Sections[0].Header
				if len(h.AuxHeader) > 0 {
					seen[LayoutAuxHeader]++
				}
				if h.Flags&sframe.FlagFDESorted == 0 {
					seen[LayoutUnsorted]++
				}
				if h.Flags&sframe.FlagFuncStartPCRel == 0 {
					seen[LayoutSectionRelative]++
				}
				if len(tab.Sections) > 1 {
					seen[LayoutConcatenated]++
					if n := len(tab.Sections); n != 2 || tab.Sections[1].Offset%8 != 0 {
						t.Errorf("%s seed %d: %d sections, the second at offset %d", abi.Name(), seed, n, tab.Sections[n-1].Offset)
					}
				}
				last := tab.Sections[len(tab.Sections)-1]
				extra := len(m.SFrame) - last.Offset - last.Size
				if extra > 0 {
					seen[LayoutPadding]++
				}
				if extra < 0 || extra > 7 {
					t.Errorf("%s seed %d: %d bytes after the last section", abi.Name(), seed, extra)
				}
			}
			// The same functions, found at the same PCs, each in the
			// section of the module holding it.
			want, _ := sframe.Decode(plain.SFrame, plain.SFrameAddr)
			for _, f := range p.Funcs {
				tab := tabs[0]
				if len(img.Modules) > 0 {
					i := img.ModuleAt(f.Addr)
					if i < 0 {
						t.Fatalf("%s seed %d: %s at %#x in no module", abi.Name(), seed, f.Name, f.Addr)
					}
					tab = tabs[i]
				}
				a, errA := tab.FindFDE(f.Addr)
				b, errB := want.FindFDE(f.Addr)
				if (errA == nil) != (errB == nil) || errA == nil && (a.Start != b.Start || a.Size != b.Size) {
					t.Fatalf("%s seed %d: %s at %#x: FDE %#x+%d (%v), plain %#x+%d (%v)", abi.Name(), seed, f.Name, f.Addr, a.Start, a.Size, errA, b.Start, b.Size, errB)
				}
			}
		}
	}
	for _, n := range all.Names() {
		if seen[n] == 0 {
			t.Errorf("v%d: no section with layout %s", v, n)
		}
	}
	t.Logf("v%d sections per shape: %v", v, seen)
}

// TestLayoutShapesV3 checks that version 3 allows only the padding,
// concatenated sections and modules: its strict rules forbid the other shapes.
func TestLayoutShapesV3(t *testing.T) {
	for _, sh := range LayoutShapes(3) {
		if (sh.Why == "") != (sh.Name == LayoutPadding || sh.Name == LayoutConcatenated || sh.Name == LayoutModules) {
			t.Errorf("v3 %s: %q", sh.Name, sh.Why)
		}
	}
	for _, sh := range LayoutShapes(2) {
		if sh.Why != "" {
			t.Errorf("v2 %s: %q", sh.Name, sh.Why)
		}
	}
	if _, err := LayoutSet("no-such-shape"); err == nil {
		t.Error("an unknown shape name is accepted")
	}
}

// checkModules checks a multi-module image: 2 to 4 modules whose ranges
// cover the code (and the far segment, a module of its own), each
// section holding only the FDEs of its own range, every section at an
// address of its own, and that the section of the module before a
// boundary has no FDE for the function at it. (_start is in the first
// module: every backtrace from a later module crosses objects.)
func checkModules(t *testing.T, img *image.Image, p *gen.Program, name string, seed int64) {
	t.Helper()
	ms := img.Modules
	if err := img.CheckModules(); err != nil || len(ms) < 2 || len(ms) > 4 {
		t.Fatalf("%s seed %d: %d modules: %v", name, seed, len(ms), err)
	}
	if ms[0].Start != p.Base {
		t.Errorf("%s seed %d: first module at %#x, code at %#x", name, seed, ms[0].Start, p.Base)
	}
	addrs := map[uint64]bool{}
	for i, m := range ms {
		if addrs[m.SFrameAddr] {
			t.Errorf("%s seed %d: two sections at %#x", name, seed, m.SFrameAddr)
		}
		addrs[m.SFrameAddr] = true
		tab, err := sframe.Decode(m.SFrame, m.SFrameAddr)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range tab.Sections {
			for j := 0; j < int(sec.Header.NumFDEs); j++ {
				if f := sec.Func(j); !m.Holds(f.Start) {
					t.Errorf("%s seed %d: module %s [%#x,%#x) has an FDE at %#x", name, seed, m.Name, m.Start, m.End, f.Start)
				}
			}
		}
		if i > 0 && ms[i-1].End == m.Start {
			// The function at the boundary is in this module only.
			prev, _ := sframe.Decode(ms[i-1].SFrame, ms[i-1].SFrameAddr)
			if _, err := prev.FindFDE(m.Start); err == nil {
				t.Errorf("%s seed %d: module %s's section finds the function at %#x of module %s", name, seed, ms[i-1].Name, m.Start, m.Name)
			}
		}
	}
}
