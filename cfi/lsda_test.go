package cfi_test

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/internal/testenv"
)

// lsdaBytes is an LSDA as GCC writes it for x86-64: no LPStart, a TType
// table, uleb128 call sites.
var lsdaBytes = []byte{
	0xff,       // LPStart: omit (the function start)
	0x9b, 0x0d, // TType: indirect pcrel sdata4, table end at +13
	0x01, 0x0c, // call sites: uleb128, 12 bytes
	0x10, 0x05, 0x40, 0x01, // [start+0x10, +5) -> start+0x40, action 1
	0x20, 0x04, 0x00, 0x00, // [start+0x20, +4): no landing pad
	0x30, 0x08, 0x50, 0x00, // [start+0x30, +8) -> start+0x50, cleanup
}

func TestParseLSDA(t *testing.T) {
	data := append([]byte{0xaa, 0xbb}, lsdaBytes...) // the LSDA at base+2
	l, err := cfi.ParseLSDA(data, 0x1000, 0x1002, 0x401000, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	want := []cfi.CallSite{
		{Start: 0x401010, End: 0x401015, LandingPad: 0x401040, Action: 1},
		{Start: 0x401020, End: 0x401024},
		{Start: 0x401030, End: 0x401038, LandingPad: 0x401050},
	}
	if len(l.CallSites) != len(want) {
		t.Fatalf("call sites %+v, want %+v", l.CallSites, want)
	}
	for i := range want {
		if l.CallSites[i] != want[i] {
			t.Errorf("call site %d: %+v, want %+v", i, l.CallSites[i], want[i])
		}
	}
	if cs, ok := l.At(0x401014); !ok || cs.LandingPad != 0x401040 {
		t.Errorf("At(0x401014) = %+v, %v", cs, ok)
	}
	if _, ok := l.At(0x401015); ok {
		t.Errorf("At(0x401015): a call site past the first's end")
	}
	// Cut in the third entry: the error names the table's start in data,
	// whose length runs past the end.
	_, err = cfi.ParseLSDA(data[:2+5+8+2], 0x1000, 0x1002, 0x401000, binary.LittleEndian)
	var fe *cfi.FormatError
	if !errors.As(err, &fe) || !errors.Is(err, cfi.ErrTruncated) || fe.Off != 2+5 {
		t.Errorf("truncated table: %v, want a truncation at offset %d", err, 2+5)
	}
	// An entry whose last field runs past the table's stated length.
	bad := append([]byte(nil), data...)
	bad[2+4] = 0x0b // 11 bytes: the third entry's action is outside
	_, err = cfi.ParseLSDA(bad, 0x1000, 0x1002, 0x401000, binary.LittleEndian)
	if !errors.As(err, &fe) || fe.Off != 2+5+8 {
		t.Errorf("entry past the table: %v, want an error at offset %d", err, 2+5+8)
	}
	if _, err := cfi.ParseLSDA(data, 0x1000, 0x2000, 0x401000, binary.LittleEndian); err == nil {
		t.Errorf("an LSDA outside the data parsed")
	}
}

// TestLSDAOfRealProgram: g++'s output, linked, has FDEs with LSDAs (read
// from their augmentation data), and every call-site table parses, its
// ranges inside the FDE's function, its landing pads in executable code.
func TestLSDAOfRealProgram(t *testing.T) {
	gxx := testenv.LookPath(t, "g++", testenv.HostPackages)
	dir := t.TempDir()
	exe := filepath.Join(dir, "excpt")
	src := filepath.Join("..", "check", "testdata", "programs")
	if b, err := exec.Command(gxx, "-O2", "-o", exe, filepath.Join(src, "excpt.cc"), filepath.Join(src, "excpt2.cc")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	eh := f.Section(".eh_frame")
	gx := f.Section(".gcc_except_table")
	if eh == nil || gx == nil {
		t.Fatalf("no .eh_frame or .gcc_except_table")
	}
	ehData, _ := eh.Data()
	gxData, _ := gx.Data()
	tab, err := cfi.Parse(ehData, eh.Addr, f.ByteOrder, true)
	if err != nil {
		t.Fatal(err)
	}
	inText := func(a uint64) bool {
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR != 0 && a >= s.Addr && a < s.Addr+s.Size {
				return true
			}
		}
		return false
	}
	var withLSDA, pads int
	for _, fde := range tab.FDEs {
		if fde.LSDA == 0 {
			continue
		}
		withLSDA++
		l, err := cfi.ParseLSDA(gxData, gx.Addr, fde.LSDA, fde.Start, f.ByteOrder)
		if err != nil {
			t.Errorf("FDE 0x%x: %v", fde.Start, err)
			continue
		}
		for _, cs := range l.CallSites {
			if cs.Start < fde.Start || cs.End > fde.End || cs.End < cs.Start {
				t.Errorf("FDE [0x%x, 0x%x): call site [0x%x, 0x%x) outside", fde.Start, fde.End, cs.Start, cs.End)
			}
			if cs.LandingPad != 0 {
				pads++
				if !inText(cs.LandingPad) {
					t.Errorf("FDE 0x%x: landing pad 0x%x outside executable code", fde.Start, cs.LandingPad)
				}
			}
		}
	}
	if withLSDA == 0 || pads == 0 {
		t.Errorf("%d FDEs with an LSDA, %d landing pads: want some", withLSDA, pads)
	}
	t.Logf("%d FDEs, %d with an LSDA, %d landing pads", len(tab.FDEs), withLSDA, pads)
}
