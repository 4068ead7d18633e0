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
