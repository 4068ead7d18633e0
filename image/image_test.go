package image

import "testing"

func TestSymbolAt(t *testing.T) {
	t.Parallel()
	img := &Image{CodeAddr: 0x1000, Code: make([]byte, 0x40), Symbols: []Symbol{
		{Name: "g", Addr: 0x1020, Size: 0x10},
		{Name: "f", Addr: 0x1000, Size: 0x10},
	}}
	img.SortSymbols()
	for _, c := range []struct {
		pc   uint64
		name string
	}{
		{0x0fff, ""}, {0x1000, "f"}, {0x100f, "f"}, {0x1010, ""}, // gap
		{0x101f, ""}, {0x1020, "g"}, {0x102f, "g"}, {0x1030, ""},
	} {
		s, ok := img.SymbolAt(c.pc)
		if ok != (c.name != "") || s.Name != c.name {
			t.Errorf("SymbolAt(%#x) = %q, %v; want %q", c.pc, s.Name, ok, c.name)
		}
	}
	if got := img.Describe(0x1024); got != "g+0x4" {
		t.Errorf("Describe = %q", got)
	}
	if got := img.Describe(0x1018); got != "0x1018" {
		t.Errorf("Describe in a gap = %q", got)
	}
	if b := img.Instruction(0x103f); len(b) != 1 {
		t.Errorf("Instruction at the last byte: %d bytes", len(b))
	}
	if img.Instruction(0x1040) != nil || img.Instruction(0xfff) != nil {
		t.Error("Instruction outside the code returned bytes")
	}
}

func TestSegmentsAndStacks(t *testing.T) {
	t.Parallel()
	img := &Image{CodeAddr: 0x1000, Code: make([]byte, 0x10),
		Segments: []Segment{{Addr: 0x1_5000_0000, Code: []byte{1, 2, 3}}},
		Symbols: []Symbol{
			{Name: "far", Addr: 0x1_5000_0000, Size: 3},
			{Name: "stack_f", Addr: 0x7000, Size: 0x1000, Kind: KindStack},
			{Name: "f", Addr: 0x1000, Size: 0x10},
		}}
	img.SortSymbols()
	if b := img.Instruction(0x1_5000_0001); len(b) != 2 || b[0] != 2 {
		t.Errorf("Instruction in a segment = % x", b)
	}
	if img.Instruction(0x1_5000_0003) != nil {
		t.Error("Instruction past a segment's end returned bytes")
	}
	if got := img.Describe(0x1_5000_0002); got != "far+0x2" {
		t.Errorf("Describe in a segment = %q", got)
	}
	if s, ok := img.SymbolAt(0x7800); ok {
		t.Errorf("SymbolAt inside a stack = %v: a stack is not a function", s)
	}
	if (Segment{Addr: 0x10, Code: make([]byte, 4)}).End() != 0x14 {
		t.Error("Segment.End")
	}
}

func TestSignalOf(t *testing.T) {
	t.Parallel()
	img := &Image{Signals: []Signal{{Path: 2, At: 0x10, Signo: 14}, {Path: 0, At: 0x20, Signo: 10}}}
	if s, ok := img.SignalOf(0); !ok || s.At != 0x20 {
		t.Errorf("SignalOf(0) = %+v, %v", s, ok)
	}
	if s, ok := img.SignalOf(2); !ok || s.Signo != 14 {
		t.Errorf("SignalOf(2) = %+v, %v", s, ok)
	}
	if _, ok := img.SignalOf(1); ok {
		t.Error("SignalOf(1) found a signal")
	}
}

func TestModules(t *testing.T) {
	t.Parallel()
	one := &Image{SFrame: []byte{1, 2}, SFrameAddr: 0x5000}
	if s := one.Sections(); len(s) != 1 || s[0].SFrameAddr != 0x5000 || !s[0].Holds(0) || !s[0].Holds(WholeSpace-1) {
		t.Errorf("one section as modules: %+v", s)
	}
	img := &Image{Modules: []Module{
		{Name: "exe", Start: 0x1000, End: 0x2000, SFrame: []byte{1}, SFrameAddr: 0x9000},
		{Name: "lib1.so", Start: 0x2000, End: 0x2800, SFrame: []byte{2}, SFrameAddr: 0x9100},
		{Name: "lib2.so", Start: 0x7_0000_0000, End: 0x7_0000_0100, SFrame: []byte{3}, SFrameAddr: 0x7_0000_0100},
	}}
	if err := img.CheckModules(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pc   uint64
		want int
	}{{0xfff, -1}, {0x1000, 0}, {0x1fff, 0}, {0x2000, 1}, {0x27ff, 1}, {0x2800, -1}, {0x7_0000_00ff, 2}, {0x7_0000_0100, -1}} {
		if got := img.ModuleAt(c.pc); got != c.want {
			t.Errorf("ModuleAt(%#x) = %d, want %d", c.pc, got, c.want)
		}
	}
	if len(img.Sections()) != 3 {
		t.Error("Sections of a multi-module image")
	}
	bad := *img
	bad.Modules = []Module{img.Modules[1], img.Modules[0]}
	if bad.CheckModules() == nil {
		t.Error("modules out of order accepted")
	}
	bad.Modules = []Module{{Name: "a b", Start: 1, End: 2}}
	if bad.CheckModules() == nil {
		t.Error("a name with a space accepted")
	}
	bad = *img
	bad.SFrame = []byte{1}
	if bad.CheckModules() == nil {
		t.Error("modules beside a section accepted")
	}
}
