package producer

import (
	"fmt"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func TestBuiltinImage(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			p, err := gen.Generate(abi, 7, gen.Options{SFrameVersion: int(v)})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Layout(0x10000000); err != nil {
				t.Fatal(err)
			}
			img, err := Builtin{Version: v}.Produce(p)
			if err != nil {
				t.Fatal(err)
			}
			if img.SFrameAddr%8 != 0 || img.SFrameAddr < img.CodeAddr+uint64(len(img.Code)) {
				t.Errorf("%s v%d: section at %#x overlaps or is unaligned", abi.Name(), v, img.SFrameAddr)
			}
			tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
			if err != nil {
				t.Fatalf("%s v%d: %v", abi.Name(), v, err)
			}
			h := tab.Sections[0].Header
			if h.Version != v || h.ABI != sframe.ABI(abi) || h.Flags&sframe.FlagFDESorted == 0 || h.Flags&sframe.FlagFuncStartPCRel == 0 {
				t.Errorf("%s v%d: header %+v", abi.Name(), v, h)
			}
			if tab.Order != abi.ByteOrder() || img.SFrameVersion != int(v) || img.Producer != fmt.Sprintf("builtin-v%d", v) {
				t.Errorf("%s: section in the wrong byte order", abi.Name())
			}
			// One FDE per symbol, at the symbol's address and size.
			if len(img.Symbols) != len(p.Funcs) {
				t.Fatalf("%d symbols for %d functions", len(img.Symbols), len(p.Funcs))
			}
			for i, s := range img.Symbols {
				if i > 0 && s.Addr <= img.Symbols[i-1].Addr {
					t.Errorf("symbols not sorted at %s", s.Name)
				}
				f, err := tab.FindFDE(s.Addr)
				if err != nil || f.Start != s.Addr || f.Size != s.Size {
					t.Errorf("%s v%d: %s [%#x+%d]: FDE %+v, %v", abi.Name(), v, s.Name, s.Addr, s.Size, f, err)
				}
				if got, ok := img.SymbolAt(s.Addr + uint64(s.Size) - 1); !ok || got.Name != s.Name {
					t.Errorf("SymbolAt(last byte of %s) = %v", s.Name, got)
				}
			}
			if _, ok := img.SymbolAt(img.CodeAddr - 1); ok {
				t.Error("SymbolAt before the code found a symbol")
			}
			if len(img.Paths) != gen.DefaultPaths {
				t.Errorf("%d paths, want %d", len(img.Paths), gen.DefaultPaths)
			}
			for k, args := range p.ArgSets {
				for i, r := range p.ArgRegs {
					if img.Paths[k][r] != args[i] {
						t.Errorf("path %d: argument register %d = %#x, want %#x", k, r, img.Paths[k][r], args[i])
					}
				}
			}
		}
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"builtin-v2", "builtin-v3"} {
		p, err := New(name)
		if err != nil || p.Name() != name {
			t.Fatalf("New(%q) = %v, %v", name, p, err)
		}
		for _, tg := range target.All {
			v, err := p.SFrameVersion(tg)
			if err != nil || fmt.Sprintf("builtin-v%d", v) != name {
				t.Errorf("%s on %v: version %d, %v", name, tg, v, err)
			}
		}
	}
	if _, err := New("builtin-v1"); err == nil {
		t.Error("builtin-v1 exists: the encoder writes versions 2 and 3 only")
	}
	if _, err := New("builtin-v3:x"); err == nil {
		t.Error("an argument to builtin-v3 accepted")
	}
	if n := Names(); len(n) < 2 || n[0] != "builtin-v2" || n[1] != "builtin-v3" {
		t.Errorf("Names() = %v", n)
	}
}

// The target numbering is SFrame's ABI identifiers: the builtin producer
// converts one to the other with a type conversion.
func TestTargetIsSFrameABI(t *testing.T) {
	t.Parallel()
	for _, tg := range target.All {
		a := sframe.ABI(tg)
		if a.Name() != tg.Name() || a.ByteOrder() != tg.ByteOrder() || a.SPRegister() != tg.SP() || a.FPRegister() != tg.FP() {
			t.Errorf("%v: sframe says %v %v sp %d fp %d", tg, a.Name(), a.ByteOrder(), a.SPRegister(), a.FPRegister())
		}
	}
}
