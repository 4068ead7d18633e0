package producer

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// pltMeasured is what was measured (2026-11) of linking a program that
// calls through the PLT as a shared object: GNU ld 2.40, 2.44 and
// 2.47.50 write SFrame FDEs for the .plt they make on x86-64 (PLT0, then
// one PCMASK FDE for the entries), 2.47.50 on s390x too; none of them for
// AArch64 (the .plt is made, .sframe describes .text only). llvm-mc's
// objects, which GNU ld 2.44 concatenates instead of merging, lose their
// FDEs: .sframe then holds ld's PLT FDEs alone. The PLT probe must find
// exactly that (ok, or the reason's telling words); a linker that changes
// makes this test fail, to be noticed.
func pltMeasured(producer string, tg target.Target) (ok bool, why string) {
	switch {
	case tg.IsAArch64():
		return false, "writes no SFrame FDE for the " + tg.Name() + " .plt"
	case strings.HasPrefix(producer, "llvm-mc-"):
		return false, "keeps 2 FDEs and none for"
	}
	return true, ""
}

// buildOf is the toolBuild a toolchain producer uses for tg.
func buildOf(t *testing.T, prod Producer, tg target.Target) *toolBuild {
	t.Helper()
	var b *toolBuild
	var err error
	switch p := prod.(type) {
	case *GAS:
		b, err = p.build(tg)
	case *LLVMMC:
		b, err = p.build(tg)
	default:
		t.Fatalf("%s is no toolchain producer", prod.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPLTThroughTheLinker: where ld describes its .plt, a batch of
// programs calling PLT-like stubs is linked as a shared object whose
// calls go through ld's PLT entries. Each image carries the .plt and the
// bound GOT, a symbol for PLT0 and for each of its entries; ld's table
// has a PCINC FDE for PLT0 and a PCMASK FDE repeating every entry for the
// entries. Running the programs executes the entries, the first one and
// others, and the builtin unwinder's frames there, which only ld's rows
// give, match the machine (the outermost frame aside: GNU as before 2.47
// never marks it). Where ld does not describe its .plt (AArch64) the
// probe says so and the calls reach gen's stubs.
func TestPLTThroughTheLinker(t *testing.T) {
	t.Parallel()
	for name, prod := range toolchainProducers(t) {
		for _, tg := range target.All {
			v, err := prod.SFrameVersion(tg)
			if err != nil {
				continue
			}
			t.Run(name+"/"+tg.Name(), func(t *testing.T) {
				t.Parallel()
				b := buildOf(t, prod, tg)
				sup := b.pltProbe()
				ok, why := pltMeasured(name, tg)
				if sup.ok != ok || !strings.Contains(sup.why, why) {
					t.Fatalf("the PLT probe says %+v; measured: %v, %q", sup, ok, why)
				}
				if lim := prod.(Limited).Limits(tg); ok != (lim == nil) || !ok && !strings.Contains(lim["plt-stubs"], sup.why) {
					t.Errorf("Limits says %q; the probe %+v", lim, sup)
				}
				progs := packed(t, tg, v, seedRange(1, 8), gen.Options{Patterns: []string{"plt-stubs", "tail-call", "fp-frame", "leaf"}})
				imgs, errs := b.produce(progs)
				for i := range progs {
					if errs[i] != nil {
						t.Fatal(errs[i])
					}
				}
				if !sup.ok {
					for _, img := range imgs {
						if _, ok := symbolNamed(img, ".plt"); ok || len(img.Segments) != 0 {
							t.Errorf("ld does not describe its .plt, yet the image has one: %+v", img.Segments)
						}
					}
					return
				}
				m, err := emu.New(tg)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				abi := pltABIs[tg]
				var inPLT, laterEntries, entries int
				for i, p := range progs {
					img := imgs[i]
					tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
					if err != nil {
						t.Fatal(err)
					}
					plt0, ok := symbolNamed(img, ".plt")
					if !ok {
						if len(p.PLTStubs()) > 0 {
							t.Fatalf("seed %d calls stubs %v and has no .plt", p.Seed, p.PLTStubs())
						}
						continue
					}
					if f, err := tab.FindFDE(plt0.Addr); err != nil || f.Start != plt0.Addr || f.PCType != sframe.PCInc || f.Size != uint32(abi.first) {
						t.Errorf("seed %d: PLT0 at %#x has FDE %+v (%v), want a %d-byte PCINC one", p.Seed, plt0.Addr, f, err, abi.first)
					}
					for _, s := range p.PLTStubs() {
						e, ok := symbolNamed(img, s+"@plt")
						if !ok {
							t.Fatalf("seed %d: no symbol for the PLT entry of %s", p.Seed, s)
						}
						entries++
						f, err := tab.FindFDE(e.Addr)
						rep := abi.entry
						if v == 1 {
							rep = 0 // version 1 FDEs have no repetition size
						}
						if err != nil || f.Start != plt0.End() || f.PCType != sframe.PCMask || int(f.RepSize) != rep {
							t.Errorf("seed %d: PLT entry %s at %#x has FDE %+v (%v), want a PCMASK one from %#x repeating every %d bytes", p.Seed, s, e.Addr, f, err, plt0.End(), abi.entry)
						}
						if got, want := gotValue(t, img, abi, e.Addr), symbolAddr(t, img, p.StubTarget(s)); got != want {
							t.Errorf("seed %d: the GOT slot of %s holds %#x, want %s's address %#x", p.Seed, s, got, p.StubTarget(s), want)
						}
					}
					n, later := runPLT(t, m, img, plt0, abi)
					inPLT += n
					laterEntries += later
				}
				t.Logf("%d PLT entries; %d steps in them, %d in entries after the first, each judged right below the outermost frame", entries, inPLT, laterEntries)
				if inPLT == 0 || laterEntries == 0 {
					t.Errorf("%d steps in PLT entries, %d in entries after the first: the PCMASK repetition went unjudged", inPLT, laterEntries)
				}
			})
		}
	}
}

// runPLT runs img's paths under the oracle and the builtin unwinder and
// requires the frames right at every step inside a PLT entry, up to the
// outermost frame. It returns those steps, and how many of them were in
// an entry other than the .plt's first.
func runPLT(t *testing.T, m *emu.Machine, img *image.Image, plt0 image.Symbol, abi pltABI) (steps, later int) {
	t.Helper()
	tr, err := oracle.NewTracker(img.Target, img.Symbols, img.Entry)
	if err != nil {
		t.Fatal(err)
	}
	cons := consumer.NewBuiltin()
	if err := cons.Load(img); err != nil {
		t.Fatal(err)
	}
	m.SetTrack(img.RuleRegs...)
	segs := make([]emu.Segment, len(img.Segments))
	for i, s := range img.Segments {
		segs[i] = emu.Segment{Addr: s.Addr, Code: s.Code}
	}
	var expected []frame.Frame
	out := make([]consumer.Result, 1)
	for k, regs := range img.Paths {
		tr.Reset()
		r := &emu.Run{Code: img.Code, CodeAddr: img.CodeAddr, Segments: segs, Entry: img.Entry, Exit: img.Exit, Regs: regs, Budget: 1 << 20}
		_, err := m.Execute(r, func(s *emu.Step) error {
			if err := tr.Observe(s.Regs, s); err != nil {
				return err
			}
			pc := s.Regs.PC
			if pc < plt0.End() || pc >= plt0.Addr+uint64(len(pltSegment(img, plt0).Code)) {
				return nil
			}
			steps++
			if pc >= plt0.End()+uint64(abi.entry) {
				later++
			}
			expected = tr.Expected(expected[:0], s.Regs)
			if err := cons.Unwind([]consumer.Step{{Index: s.Index, Regs: s.Regs, Mem: s}}, out); err != nil {
				t.Fatal(err)
			}
			// The PLT entry's row gives frame 0's CFA and frame 1's PC,
			// SP and FP; frame 1's CFA and everything further out come
			// from other rows.
			if j := oracle.Compare(expected, out[0].Frames, out[0].Err); j.Frame == 0 || j.Frame == 1 && j.Field != "cfa" {
				t.Errorf("path %d step %d at %s: %v frame %d %s: %s", k, s.Index, img.Describe(pc), j.Verdict, j.Frame, j.Field, j.Detail)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("path %d: %v", k, err)
		}
	}
	return steps, later
}

// pltSegment is the segment holding the .plt.
func pltSegment(img *image.Image, plt0 image.Symbol) image.Segment {
	for _, s := range img.Segments {
		if s.Addr == plt0.Addr {
			return s
		}
	}
	return image.Segment{}
}

// gotValue is what the GOT slot the PLT entry at addr jumps through holds
// in the image's segments.
func gotValue(t *testing.T, img *image.Image, abi pltABI, addr uint64) uint64 {
	t.Helper()
	code := img.Instruction(addr)
	slot, ok := abi.slot(code, addr)
	if !ok {
		t.Fatalf("the PLT entry at %#x (% x) loads no GOT slot", addr, code[:min(len(code), abi.entry)])
	}
	for _, s := range img.Segments {
		if slot >= s.Addr && slot+8 <= s.End() {
			return img.Target.ByteOrder().Uint64(s.Code[slot-s.Addr:])
		}
	}
	t.Fatalf("the GOT slot %#x of the PLT entry at %#x is in no segment of the image", slot, addr)
	return 0
}

func symbolAddr(t *testing.T, img *image.Image, name string) uint64 {
	t.Helper()
	s, ok := symbolNamed(img, name)
	if !ok {
		t.Fatalf("no symbol %s", name)
	}
	return s.Addr
}

// pltSource is a shared object's source calling g through the PLT, for
// each target, with more after it (%[4]s).
var pltSource = map[target.Target]string{
	target.X86_64: "\t.text\n\t.globl f\n\t.type f, @function\nf:\tcall g.ext@PLT\n\tcall k.ext@PLT\n\tret\n\t.size f, .-f\n" +
		"\t.type g, @function\ng:\tret\n\t.size g, .-g\n\t.globl g.ext; .type g.ext, @function; .set g.ext, g\n" +
		"\t.globl k.ext; .type k.ext, @function; .set k.ext, f\n%s",
	target.AArch64: "\t.text\n\t.globl f\n\t.type f, %%function\nf:\tbl g.ext\n\tbl k.ext\n\tret\n\t.size f, .-f\n" +
		"\t.type g, %%function\ng:\tret\n\t.size g, .-g\n\t.globl g.ext; .type g.ext, %%function; .set g.ext, g\n" +
		"\t.globl k.ext; .type k.ext, %%function; .set k.ext, f\n%s",
	target.S390X: "\t.text\n\t.globl f\n\t.type f, @function\nf:\tbrasl %%r14,g.ext@PLT\n\tbrasl %%r14,k.ext@PLT\n\tbr %%r14\n\t.size f, .-f\n" +
		"\t.type g, @function\ng:\tbr %%r14\n\t.size g, .-g\n\t.globl g.ext; .type g.ext, @function; .set g.ext, g\n" +
		"\t.globl k.ext; .type k.ext, @function; .set k.ext, f\n%s",
}

// linkShared assembles src with tc and links it as a batch in PLT mode
// is linked, returning the open shared object.
func linkShared(t *testing.T, tc toolchain.Toolchain, src string) *elf.File {
	t.Helper()
	dir := t.TempDir()
	s, o, so := filepath.Join(dir, "s.s"), filepath.Join(dir, "s.o"), filepath.Join(dir, "s.so")
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
	return f
}

// TestPLTLoader: the loader binds each PLT entry's GOT slot to its
// JUMP_SLOT's symbol, on every target (AArch64 too, whose .plt ld makes
// without describing it), and refuses, naming it, every other dynamic
// relocation and a JUMP_SLOT it cannot bind as ld.so would here.
func TestPLTLoader(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if err != nil {
		t.Fatal(err)
	}
	tcs := map[target.Target]toolchain.Toolchain{}
	for _, tc := range all {
		if tc.Name == "gas-2.47" {
			tcs[tc.Target] = tc
		}
	}
	for _, tg := range target.All {
		tc, ok := tcs[tg]
		if !ok {
			testenv.Missing(t, testenv.Binutils, "no gas-2.47 toolchain for %s", tg.Name())
			continue
		}
		src := pltSource[tg]
		if src == "" {
			src = pltSource[target.AArch64]
		}
		f := linkShared(t, tc, fmt.Sprintf(src, ""))
		l, err := readPLT(f, tg)
		if err != nil {
			t.Fatalf("%s: %v", tg.Name(), err)
		}
		syms, _ := f.Symbols()
		addr := map[string]uint64{}
		for _, s := range syms {
			addr[s.Name] = s.Value
		}
		if len(l.entries) != 2 || l.entries["g.ext"].value != addr["g"] || l.entries["k.ext"].value != addr["f"] {
			t.Errorf("%s: entries %+v, want g.ext bound to g %#x and k.ext to f %#x", tg.Name(), l.entries, addr["g"], addr["f"])
		}
		for _, e := range l.entries {
			if e.addr < l.addr+uint64(l.abi.first) || (e.addr-l.addr-uint64(l.abi.first))%uint64(l.abi.entry) != 0 {
				t.Errorf("%s: entry of %s at %#x is not an entry of the .plt at %#x", tg.Name(), e.symbol, e.addr, l.addr)
			}
			bound := false
			for _, g := range l.got {
				if e.slot >= g.Addr && e.slot+8 <= g.End() {
					bound = f.ByteOrder.Uint64(g.Code[e.slot-g.Addr:]) == e.value
				}
			}
			if !bound {
				t.Errorf("%s: the GOT slot %#x of %s does not hold %#x", tg.Name(), e.slot, e.symbol, e.value)
			}
		}
	}
	tc, ok := tcs[target.X86_64]
	if !ok {
		return
	}
	for _, c := range []struct{ name, more, want string }{
		{"undefined", "\t.text\nh:\tcall elsewhere@PLT\n", "binds elsewhere, which the object does not define"},
		{"relative", "\t.data\n\t.quad g\n", "relocation R_X86_64_RELATIVE at 0x"},
		{"glob_dat", "\t.text\nh:\tmov g.ext@GOTPCREL(%rip), %rax\n", "relocation R_X86_64_GLOB_DAT at 0x"},
		{"object", "\t.data\n\t.globl d\n\t.type d, @object\nd:\t.quad 0\n\t.size d, 8\n\t.text\nh:\tcall d@PLT\n", "binds d of type STT_OBJECT, not a function"},
	} {
		f := linkShared(t, tc, fmt.Sprintf(pltSource[target.X86_64], c.more))
		if _, err := readPLT(f, target.X86_64); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: readPLT: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
