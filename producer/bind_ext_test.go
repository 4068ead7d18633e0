package producer

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The slots of the modules' first segments lie in the emulator's low code
// region.
func TestModuleLowSlotsAreMapped(t *testing.T) {
	if moduleLowBase != emu.LowCodeBase || maxPLTModules*moduleLowSlot > emu.LowCodeSize {
		t.Errorf("%d slots of %#x bytes from %#x; the emulator maps [%#x, +%#x)", maxPLTModules, moduleLowSlot, moduleLowBase, emu.LowCodeBase, emu.LowCodeSize)
	}
}

// TestModuleBinder: the loader of the modules binds every JUMP_SLOT of an
// object to the first definition in load order, another object's too,
// and refuses, naming the file, the relocation section and the entry's
// file offset, any relocation ld.so would apply that it does not, and a
// symbol no object defines.
func TestModuleBinder(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if err != nil {
		t.Fatal(err)
	}
	var tc toolchain.Toolchain
	for _, c := range all {
		if c.Name == "gas-2.47" && c.Target == target.X86_64 {
			tc = c
		}
	}
	if tc.Name == "" {
		testenv.Missing(t, testenv.Binutils, "no gas-2.47 toolchain for x86-64")
	}
	// lib.so defines g.ext; the calling object calls it through its PLT
	// and defines nothing of its own that anything calls.
	libPath, lib := linkSO(t, tc, "\t.text\n\t.globl g.ext\n\t.type g.ext, @function\ng.ext:\tret\n\t.size g.ext, .-g.ext\n")
	syms, _ := lib.DynamicSymbols()
	var g uint64
	for _, s := range syms {
		if s.Name == "g.ext" {
			g = s.Value
		}
	}
	for _, c := range []struct{ name, src, want string }{
		{"jump-slot", "\t.text\n\t.globl f\n\t.type f, @function\nf:\tcall g.ext@PLT\n\tret\n\t.size f, .-f\n", ""},
		{"undefined", "\t.text\nf:\tcall elsewhere@PLT\n\tret\n", "binds elsewhere, which no loaded object defines"},
		{"relative", "\t.text\nf:\tcall g.ext@PLT\n\tret\n\t.data\n\t.quad f\n", "relocation R_X86_64_RELATIVE at 0x"},
		{"abs64", "\t.data\n\t.quad g.ext\n", "relocation R_X86_64_64 at 0x"},
	} {
		path, f := linkSO(t, tc, c.src)
		bound, err := bindModules([]string{path, libPath}, target.X86_64)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Base(path)) || !strings.Contains(err.Error(), "(file offset 0x") {
				t.Errorf("%s: %v, want an error naming %s, the file offset and %q", c.name, err, filepath.Base(path), c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		bp := bound[0].plt
		if bp == nil || len(bp.entries) != 1 || bp.entries[0].symbol != "g.ext" || bp.entries[0].value != g {
			t.Fatalf("%s: PLT %+v, want one entry bound to g.ext at %#x", c.name, bp, g)
		}
		e := bp.entries[0]
		slot := false
		for _, s := range bound[0].got {
			if e.slot >= s.Addr && e.slot+8 <= s.End() {
				slot = f.ByteOrder.Uint64(s.Code[e.slot-s.Addr:]) == g
			}
		}
		if !slot {
			t.Errorf("%s: the GOT slot %#x does not hold %#x: %+v", c.name, e.slot, g, bound[0].got)
		}
		if bound[1].plt != nil || len(bound[1].got) != 0 {
			t.Errorf("%s: lib.so, which has no relocation, got %+v", c.name, bound[1])
		}
	}
}

// linkSO assembles src with tc and links it as a shared object, as
// linkShared does, returning its path too.
func linkSO(t *testing.T, tc toolchain.Toolchain, src string) (string, *elf.File) {
	t.Helper()
	dir := t.TempDir()
	s, o, so := filepath.Join(dir, "s.s"), filepath.Join(dir, "s.o"), filepath.Join(dir, "m.so")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Assemble(s, o); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Link(toolchain.Link{Output: so, Objects: []string{o}, Text: 0x10000000, Entry: 0x10000000, Shared: true, TextSegment: 0x10000000 - sharedBelow}); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return so, f
}
