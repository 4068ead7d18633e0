package producer

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

func TestBuiltinImage(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			// The PLT stubs and a new-stack function among the patterns:
			// their FDE is the PCMASK case, and the image declares a stack.
			p, err := gen.Generate(abi, 7, gen.Options{SFrameVersion: int(v), Patterns: []string{"plt-stubs", "new-stack", "fp-frame", "leaf", "sp-frame"}})
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
			// One FDE per function symbol, at the symbol's address and
			// size, but a PLT stub's FDE is its block's PCMASK FDE,
			// repeating every stub; the stacks new-stack functions switch
			// to are symbols besides.
			if len(img.Symbols) != len(p.Funcs)+len(p.Stacks()) {
				t.Fatalf("%d symbols for %d functions and %d stacks", len(img.Symbols), len(p.Funcs), len(p.Stacks()))
			}
			stubs := 0
			funcs := map[string]*gen.Func{}
			for _, f := range p.Funcs {
				funcs[f.Name] = f
			}
			for i, s := range img.Symbols {
				if i > 0 && s.Addr <= img.Symbols[i-1].Addr {
					t.Errorf("symbols not sorted at %s", s.Name)
				}
				if s.IsStack() {
					continue
				}
				f, err := tab.FindFDE(s.Addr)
				if block := funcs[s.Name].StubBlock; block != "" {
					stubs++
					// The block's FDE spans its first stub to its last.
					start, end := ^uint64(0), uint64(0)
					for _, g := range p.Funcs {
						if g.StubBlock == block {
							start, end = min(start, g.Addr), max(end, g.Addr+uint64(g.Size))
						}
					}
					if err != nil || f.PCType != sframe.PCMask || uint32(f.RepSize) != s.Size || f.Start != start || f.End() != end {
						t.Errorf("%s v%d: stub %s [%#x+%d] of block [%#x,%#x): FDE %+v, %v", abi.Name(), v, s.Name, s.Addr, s.Size, start, end, f, err)
					}
				} else if err != nil || f.Start != s.Addr || f.Size != s.Size || f.PCType != sframe.PCInc {
					t.Errorf("%s v%d: %s [%#x+%d]: FDE %+v, %v", abi.Name(), v, s.Name, s.Addr, s.Size, f, err)
				}
				if got, ok := img.SymbolAt(s.Addr + uint64(s.Size) - 1); !ok || got.Name != s.Name {
					t.Errorf("SymbolAt(last byte of %s) = %v", s.Name, got)
				}
			}
			if stubs == 0 {
				t.Errorf("%s: seed 7 has no PLT stubs: the PCMASK case went unchecked", abi.Name())
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

// A function more than 4 GiB from the section: version 3 writes its 64-bit
// offset, version 2 refuses, naming the function and the distance.
func TestBuiltinFarFunction(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		p, err := gen.Generate(abi, 3, gen.Options{Patterns: []string{"far-code", "fp-frame"}, SFrameVersion: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Layout(0x10000000); err != nil {
			t.Fatal(err)
		}
		img, err := Builtin{Version: 3}.Produce(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(img.Segments) != 1 || img.Segments[0].Addr != 0x10000000+gen.FarOffset || len(img.Segments[0].Code) == 0 {
			t.Fatalf("%s: segments %+v, want the far code at base + %#x", abi.Name(), img.Segments, gen.FarOffset)
		}
		tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
		if err != nil {
			t.Fatal(err)
		}
		var far *gen.Func // the first, lowest far function
		near := 0
		for _, f := range p.Funcs {
			if !f.Far {
				near++
			} else if far == nil {
				far = f
			}
		}
		if fde, err := tab.FindFDE(far.Addr); err != nil || fde.Start != far.Addr || far.Addr-img.SFrameAddr < 1<<32 {
			t.Errorf("%s: FDE of %s at %#x (section at %#x): %+v, %v", abi.Name(), far.Name, far.Addr, img.SFrameAddr, fde, err)
		}
		// The first far function follows the near ones among the sorted
		// 20-byte version 2 FDEs; the start field is an FDE's first word.
		field := img.SFrameAddr + sframe.HeaderSize + uint64(near)*20
		_, err = Builtin{Version: 2}.Produce(p)
		if err == nil || !strings.Contains(err.Error(), "function "+far.Name+":") ||
			!strings.Contains(err.Error(), fmt.Sprintf("start is %d bytes from its start field", far.Addr-field)) {
			t.Errorf("%s: version 2 of a far function: err = %v", abi.Name(), err)
		}
	}
}

// A toolchain producer that is not provisioned says so, naming where it
// was looked for and what setup provides.
func TestUnprovisionedToolchainProducer(t *testing.T) {
	t.Parallel()
	_, err := New("gas-1.99")
	if !errors.Is(err, toolchain.ErrNotProvisioned) || !strings.Contains(err.Error(), "gas-1.99") || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("New(gas-1.99): %v", err)
	}
	if _, err := New("nonesuch"); err == nil || errors.Is(err, toolchain.ErrNotProvisioned) {
		t.Errorf("New(nonesuch): %v", err)
	}
}
