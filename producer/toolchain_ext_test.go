package producer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// These tests run the toolchains ci/setup.sh provisioned; without them
// they skip (testenv.Missing), or fail once setup has run.

// toolchainProducers returns every registered producer that runs real
// tools, by name: gas-<series> and llvm-mc-<major>.
func toolchainProducers(t *testing.T) map[string]Producer {
	t.Helper()
	out := map[string]Producer{}
	for _, n := range Names() {
		if !strings.HasPrefix(n, "gas-") && !strings.HasPrefix(n, "llvm-mc-") {
			continue
		}
		p, err := New(n)
		if err != nil {
			t.Fatalf("New(%q): %v", n, err)
		}
		out[n] = p
	}
	for _, want := range []string{"gas-2.40", "gas-2.44", "gas-2.47"} {
		if out[want] == nil {
			testenv.Missing(t, testenv.Binutils, "producer %s is not registered (toolchains under %s)", want, toolchain.CacheDir())
		}
	}
	if !slices.ContainsFunc(Names(), func(n string) bool { return strings.HasPrefix(n, "llvm-mc-") }) {
		testenv.Missing(t, testenv.LLVM, "no llvm-mc producer is registered (toolchains under %s)", toolchain.CacheDir())
	}
	return out
}

// packed generates programs for seeds and lays them out one after the
// other from the emulator's code and far regions, as a batch needs them.
func packed(t *testing.T, tg target.Target, v int, seeds []int64, opt gen.Options) []*gen.Program {
	t.Helper()
	opt.SFrameVersion = max(v, 2)
	near, far := uint64(0x10000000), uint64(0x150000000)
	var out []*gen.Program
	for _, s := range seeds {
		p, err := gen.Generate(tg, s, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.LayoutAt(near, far); err != nil {
			t.Fatal(err)
		}
		near = alignUp(near+uint64(len(p.Code)), batchAlign)
		far = alignUp(far+uint64(len(p.FarCode)), batchAlign)
		out = append(out, p)
	}
	return out
}

func seedRange(from, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(from + i)
	}
	return out
}

// TestToolchainBatches makes a batch per toolchain producer and target
// and checks each image: gen's code and symbols where gen laid them out,
// the toolchain's version, a section holding a function for (nearly)
// every function of the program, shared by the batch, and a record that
// names the exact tools. Targets a producer cannot do say why.
func TestToolchainBatches(t *testing.T) {
	t.Parallel()
	for name, prod := range toolchainProducers(t) {
		for _, tg := range target.All {
			t.Run(name+"/"+tg.Name(), func(t *testing.T) {
				t.Parallel()
				v, err := prod.SFrameVersion(tg)
				if err != nil {
					if errors.Is(err, toolchain.ErrNotProvisioned) || !strings.Contains(err.Error(), "does not emit SFrame for "+tg.Name()) {
						t.Fatalf("SFrameVersion: %v", err)
					}
					imgs, errs := prod.(BatchProducer).ProduceBatch(packed(t, tg, 3, seedRange(1, 2), gen.Options{}))
					if imgs[0] != nil || errs[0] == nil || errs[0].Error() != err.Error() {
						t.Errorf("a target it cannot do: image %v, error %v; want the reason %q", imgs[0], errs[0], err)
					}
					return
				}
				progs := packed(t, tg, v, seedRange(100, 12), gen.Options{})
				imgs, errs := prod.(BatchProducer).ProduceBatch(progs)
				for i, p := range progs {
					if errs[i] != nil {
						t.Fatalf("seed %d: %v", p.Seed, errs[i])
					}
					checkImage(t, name, v, p, imgs[i])
					if i > 0 && (&imgs[i].SFrame[0] != &imgs[0].SFrame[0] || imgs[i].SFrameAddr != imgs[0].SFrameAddr) {
						t.Errorf("seed %d: the batch's images do not share the linked section", p.Seed)
					}
				}
				tab, err := sframe.Decode(imgs[0].SFrame, imgs[0].SFrameAddr)
				if err != nil {
					t.Fatal(err)
				}
				wantSections := 1
				if strings.HasPrefix(name, "llvm-mc-") {
					wantSections = llvmObjects
				}
				if len(tab.Sections) != wantSections {
					t.Errorf("the linked .sframe holds %d sections, want %d", len(tab.Sections), wantSections)
				}
			})
		}
	}
}

// checkImage checks one toolchain image against its program.
func checkImage(t *testing.T, name string, v int, p *gen.Program, img *image.Image) {
	t.Helper()
	if img.Producer != name || img.SFrameVersion != v || img.Target != p.Target {
		t.Errorf("seed %d: producer %q version %d target %v", p.Seed, img.Producer, img.SFrameVersion, img.Target)
	}
	// Calls to PLT-like stubs go through ld's .plt where ld describes it
	// (plt.go): the code is gen's with those calls reaching the entries.
	code, segs, pltSyms := p.Code, 0, 0
	want := append(p.Symbols(), p.Stacks()...)
	if _, viaPLT := symbolNamed(img, ".plt"); viaPLT {
		to := map[string]uint64{}
		for _, s := range p.PLTStubs() {
			e, ok := symbolNamed(img, s+"@plt")
			if !ok {
				t.Errorf("seed %d: no symbol for the PLT entry of %s", p.Seed, s)
			}
			to[s] = e.Addr
		}
		var err error
		if code, err = p.CodeWithCalls(to); err != nil {
			t.Fatal(err)
		}
		segs, pltSyms = 2, 1+len(to) // the .plt and the GOT; PLT0 and the entries
	}
	if img.CodeAddr != p.Base || string(img.Code) != string(code) || img.Entry != p.Entry || img.Exit != p.Exit {
		t.Errorf("seed %d: code at %#x (%d bytes), entry %#x exit %#x; gen %#x (%d), %#x, %#x",
			p.Seed, img.CodeAddr, len(img.Code), img.Entry, img.Exit, p.Base, len(p.Code), p.Entry, p.Exit)
	}
	if len(img.Symbols) != len(want)+pltSyms {
		t.Errorf("seed %d: %d symbols, gen %d and %d of the PLT", p.Seed, len(img.Symbols), len(want), pltSyms)
	}
	for _, s := range want {
		got, ok := symbolNamed(img, s.Name)
		if !ok || got != s {
			t.Errorf("seed %d: symbol %+v, gen %+v", p.Seed, got, s)
		}
	}
	if len(p.FarCode) > 0 {
		segs++
		if img.Segments[0].Addr != p.FarBase || string(img.Segments[0].Code) != string(p.FarCode) {
			t.Errorf("seed %d: far code %+v, gen %#x", p.Seed, img.Segments, p.FarBase)
		}
	}
	if len(img.Segments) != segs {
		t.Errorf("seed %d: %d segments, want %d", p.Seed, len(img.Segments), segs)
	}
	if len(p.PathRegs()) != len(img.Paths) {
		t.Errorf("seed %d: %d paths", p.Seed, len(img.Paths))
	}
	r := img.Record
	if r == nil || len(r.Tools) != 2 || len(r.Commands) < 2 {
		t.Fatalf("seed %d: record %+v", p.Seed, r)
	}
	for _, tool := range r.Tools {
		if tool.Version == "" || tool.Path == "" || (!strings.HasPrefix(name, "gas:") && tool.Package == "") {
			t.Errorf("seed %d: tool %+v without its exact version", p.Seed, tool)
		}
	}
	tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
	if err != nil {
		t.Fatalf("seed %d: %v", p.Seed, err)
	}
	found := 0
	for _, s := range img.Symbols {
		if _, err := tab.FindFDE(s.Addr); err == nil && !s.IsStack() {
			found++
		}
	}
	// A toolchain may skip an FDE it cannot express (with a warning, or
	// silently: gas 2.40 on DRAP), but not most of them.
	if found < len(p.Funcs)/2 {
		t.Errorf("seed %d: FDEs for %d of %d functions", p.Seed, found, len(p.Funcs))
	}
}

func symbolNamed(img *image.Image, name string) (image.Symbol, bool) {
	for _, s := range img.Symbols {
		if s.Name == name {
			return s, true
		}
	}
	return image.Symbol{}, false
}

// TestBatchTableIsTheSingleProgramTable: linking programs together does
// not change what the toolchain says about any of them. Every function's
// rows in a batch's section equal its rows when its program is assembled
// and linked alone, at the same addresses.
func TestBatchTableIsTheSingleProgramTable(t *testing.T) {
	t.Parallel()
	for name, prod := range toolchainProducers(t) {
		for _, tg := range target.All {
			v, err := prod.SFrameVersion(tg)
			if err != nil {
				continue
			}
			t.Run(name+"/"+tg.Name(), func(t *testing.T) {
				t.Parallel()
				progs := packed(t, tg, v, seedRange(7, 5), gen.Options{})
				imgs, errs := prod.(BatchProducer).ProduceBatch(progs)
				for i, p := range progs {
					if errs[i] != nil {
						t.Fatal(errs[i])
					}
					alone, err := prod.Produce(p)
					if err != nil {
						t.Fatal(err)
					}
					if alone.Record.Batch != 1 || imgs[i].Record.Batch != len(progs) {
						t.Errorf("batch sizes %d and %d recorded", alone.Record.Batch, imgs[i].Record.Batch)
					}
					batch, err1 := sframe.Decode(imgs[i].SFrame, imgs[i].SFrameAddr)
					single, err2 := sframe.Decode(alone.SFrame, alone.SFrameAddr)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					for _, s := range alone.Symbols {
						if s.IsStack() {
							continue
						}
						got, want := rowsAt(batch, s.Addr), rowsAt(single, s.Addr)
						if b, ok := symbolNamed(imgs[i], s.Name); ok && (s.Name == ".plt" || strings.HasSuffix(s.Name, "@plt")) {
							// The linker's .plt is the batch's, elsewhere
							// and with more entries: the same rows.
							got, want = pltRowsAt(batch, b.Addr), pltRowsAt(single, s.Addr)
						}
						if got != want {
							t.Errorf("seed %d %s: in the batch %s, alone %s", p.Seed, s.Name, got, want)
						}
					}
				}
			})
		}
	}
}

// pltRowsAt is what rowsAt says, bar where the FDE starts and how long
// it is.
func pltRowsAt(tab *sframe.Table, pc uint64) string {
	f, err := tab.FindFDE(pc)
	if err != nil {
		return "no FDE"
	}
	rows, err := f.Rows()
	return fmt.Sprintf("%v rep %d, at %d in it: %+v %v", f.PCType, f.RepSize, (pc-f.Start)%max(uint64(f.RepSize), 1), rows, err)
}

func rowsAt(tab *sframe.Table, pc uint64) string {
	f, err := tab.FindFDE(pc)
	if err != nil {
		return "no FDE"
	}
	rows, err := f.Rows()
	return fmt.Sprintf("[%#x,+%d) %v %+v %v", f.Start, f.Size, f.PCType, rows, err)
}

// TestWarningsNameTheirFunction: gas 2.44 skips the FDE of a DRAP
// function with a warning that names no line ("<file>: Warning: skipping
// SFrame FDE; ..."); the image keeps it with the function it is about. A
// warning that names a line says which line of the program's own assembly
// text.
func TestWarningsNameTheirFunction(t *testing.T) {
	t.Parallel()
	prod := toolchainProducers(t)["gas-2.44"]
	// DRAP and a CFA on %r10 or %r11 are version 3 patterns: gas 2.44
	// gets them anyway, and an empty FDE, which it leaves out without a
	// word.
	progs := packed(t, target.X86_64, 3, seedRange(1, 6), gen.Options{Patterns: []string{"drap", "cfa-other-reg-ra-in-reg", "empty-fde", "fp-frame"}})
	imgs, errs := prod.(BatchProducer).ProduceBatch(progs)
	n := 0
	for i, p := range progs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		lines := strings.Split(p.Assembly(), "\n")
		tab, err := sframe.Decode(imgs[i].SFrame, imgs[i].SFrameAddr)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range imgs[i].Record.Warnings {
			if w.Tool != "as" || w.Line < 0 || w.Line > len(lines) || !strings.Contains(w.Text, "skipping SFrame FDE") {
				t.Errorf("seed %d: warning %+v", p.Seed, w)
				continue
			}
			n++
			if w.Line > 0 && !strings.Contains(lines[w.Line-1], ".cfi_") {
				t.Errorf("seed %d: %v is about line %d %q", p.Seed, w, w.Line, lines[w.Line-1])
			}
			s, ok := symbolNamed(imgs[i], w.Function)
			if !ok || !strings.HasSuffix(w.Function, "_drap") && !strings.HasSuffix(w.Function, "_cfa_other_reg_ra_in_reg") {
				t.Errorf("seed %d: %v names %q, not a DRAP or other-register function of the program", p.Seed, w, w.Function)
				continue
			}
			directive := w.Text[strings.LastIndex(w.Text, " in ")+4:]
			if _, after, ok := strings.Cut(p.Assembly(), "\n"+w.Function+":\n"); !ok || !strings.Contains(strings.SplitN(after, ".cfi_endproc", 2)[0], "\t"+directive+" ") {
				t.Errorf("seed %d: %v, but %s has no %s", p.Seed, w, w.Function, directive)
			}
			if _, err := tab.FindFDE(s.Addr); err == nil {
				t.Errorf("seed %d: %v, but %s has an FDE", p.Seed, w, s.Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("gas 2.44 warned about no DRAP function: the attribution went unchecked")
	}
}

// TestAToolFailureLandsOnItsProgram: an assembler that fails on one
// program of a batch fails that program only; the batch is split until
// the failure is pinned down.
func TestAToolFailureLandsOnItsProgram(t *testing.T) {
	prod := toolchainProducers(t)["gas-2.47"].(*GAS)
	b, err := prod.build(target.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Refuses any file holding the program of seed 23.
	fake := filepath.Join(dir, "as")
	script := fmt.Sprintf("#!/bin/sh\nfor a; do src=$a; done\nif grep -q 'seed 23$' \"$src\"; then echo \"$src:3: Error: refused\" >&2; exit 1; fi\nexec %s \"$@\"\n", b.as.AS)
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := *b
	bad.as.AS = fake
	progs := packed(t, target.X86_64, 3, seedRange(20, 7), gen.Options{})
	imgs, errs := bad.produce(progs)
	for i, p := range progs {
		switch {
		case p.Seed == 23 && (errs[i] == nil || !strings.Contains(errs[i].Error(), "refused") || !strings.HasPrefix(errs[i].Error(), "seed 23:")):
			t.Errorf("seed 23: error %v, want the assembler's refusal for it alone", errs[i])
		case p.Seed != 23 && (errs[i] != nil || imgs[i] == nil):
			t.Errorf("seed %d: %v", p.Seed, errs[i])
		}
	}
}

// TestOwnBuildDirectory: gas:<dir> runs the same producer over the tools
// in a directory, here the provisioned 2.44's, and records no Debian
// package for them.
func TestOwnBuildDirectory(t *testing.T) {
	t.Parallel()
	toolchainProducers(t)
	tc, err := toolchain.Find("gas-2.44", target.AArch64)
	if err != nil {
		t.Fatal(err)
	}
	name := "gas:" + filepath.Dir(tc.AS)
	prod, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := prod.SFrameVersion(target.AArch64BE); v != 2 || err != nil {
		t.Fatalf("%s: SFrame v%d, %v", name, v, err)
	}
	if _, err := prod.SFrameVersion(target.S390X); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("%s for s390x: %v, want GNU as's 'not supported'", name, err)
	}
	p := packed(t, target.AArch64BE, 2, []int64{5}, gen.Options{})[0]
	img, err := prod.Produce(p)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, name, 2, p, img)
	if _, err := New("gas:" + t.TempDir()); err == nil || !strings.Contains(err.Error(), "no assembler and linker") {
		t.Errorf("gas:<empty dir>: %v", err)
	}
	if _, err := New("gas"); err == nil || !strings.Contains(err.Error(), "gas:<dir>") {
		t.Errorf("gas without a directory: %v", err)
	}
}
