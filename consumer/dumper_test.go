package consumer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// testSection is one SFrame section the dumper consumers are tried on.
type testSection struct {
	name      string
	img       *image.Image
	version   int
	pcrel     bool // FlagFuncStartPCRel
	outermost bool // some FRE has no data words
}

// testSections are the linked sections GNU as and ld made
// (sframe/testdata: version 1 from 2.40, 2 without PC-relative starts from
// 2.44, 3 from 2.47), the builtin encoder's version 2 (PC-relative) and 3
// sections of dumper/testdata, and those version 2 sections again without
// PC-relative starts and in the version 1 layout: every version on every
// target, s390x's version 1 and 2 included, which GNU as never wrote.
func testSections(t *testing.T) []testSection {
	t.Helper()
	var out []testSection
	add := func(name string, tg target.Target, raw []byte, base uint64) {
		tab, err := sframe.Decode(raw, base)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := tab.Sections[0]
		ts := testSection{name: name, version: int(s.Header.Version), pcrel: s.Header.Flags&sframe.FlagFuncStartPCRel != 0,
			img: &image.Image{Target: tg, SFrame: raw, SFrameAddr: base}}
		fdes, err := s.FDEs()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range fdes {
			for _, r := range f.Rows {
				ts.outermost = ts.outermost || r.RA.Kind == sframe.RuleUndefined
			}
		}
		out = append(out, ts)
	}
	read := func(pattern string) []string {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no section matches %s: %v", pattern, err)
		}
		sort.Strings(files)
		return files
	}
	section := func(f string) ([]byte, uint64) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a, err := os.ReadFile(f + ".addr")
		if err != nil {
			t.Fatal(err)
		}
		base, err := strconv.ParseUint(strings.TrimSpace(string(a)), 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		return raw, base
	}
	for _, f := range read("../sframe/testdata/gas-*/*/*.sframe") {
		if strings.HasSuffix(f, ".o.sframe") {
			continue
		}
		tg, err := target.Parse(filepath.Base(filepath.Dir(f)))
		if err != nil {
			t.Fatal(err)
		}
		raw, base := section(f)
		add(strings.TrimPrefix(strings.TrimSuffix(f, ".sframe"), "../sframe/testdata/"), tg, raw, base)
	}
	for _, f := range read("../dumper/testdata/sections/*.sframe") {
		name := strings.TrimSuffix(filepath.Base(f), ".sframe")
		tname, _, _ := strings.Cut(name, "-v")
		tg, err := target.Parse(tname)
		if err != nil {
			t.Fatal(err)
		}
		raw, base := section(f)
		add("builtin/"+name, tg, raw, base)
		if !strings.Contains(name, "-v2-") {
			continue
		}
		tab, _ := sframe.Decode(raw, base)
		fdes, _ := tab.Sections[0].FDEs()
		abi := sframe.ABI(tg)
		fp, ra := sframe.DefaultFixedOffsets(abi)
		plain, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: 2, ABI: abi, Base: base, CFAFixedFP: fp, CFAFixedRA: ra})
		if err != nil {
			t.Fatal(err)
		}
		add("builtin/"+name+"-sectionrel", tg, plain, base)
		v1, err := listingOf(fdes, abi, sframe.Version1).Encode(base)
		if err != nil {
			t.Fatal(err)
		}
		add("builtin/"+strings.Replace(name, "-v2-", "-v1-", 1), tg, v1, base)
	}
	return out
}

// listingOf is a listing of fdes, as a dumper would print them.
func listingOf(fdes []sframe.FDE, abi sframe.ABI, v sframe.Version) *dumper.Listing {
	l := &dumper.Listing{Version: v, ABI: abi}
	l.CFAFixedFP, l.CFAFixedRA = sframe.DefaultFixedOffsets(abi)
	for i, f := range fdes {
		lf := dumper.Func{Index: i, Start: f.Start, Size: f.Size, PCType: f.PCType, RepSize: f.RepSize, PAuthKey: f.PAuthKey, Signal: f.Signal, Type: f.Type}
		for _, r := range f.Rows {
			lf.Rows = append(lf.Rows, dumper.Row{Start: r.Start, CFA: r.CFA, FP: r.FP, RA: r.RA, Mangled: r.MangledRA})
		}
		l.Funcs = append(l.Funcs, lf)
	}
	return l
}

// dumperConsumers makes every dumper consumer the provisioned toolchains
// offer, or ends the test for lack of them.
func dumperConsumers(t *testing.T) []*Dumper {
	t.Helper()
	names := dumperNames()
	var out []*Dumper
	llvm := false
	for _, n := range names {
		d, err := NewDumper(n)
		if err != nil {
			t.Fatalf("%s is listed but cannot be made: %v", n, err)
		}
		t.Cleanup(func() { d.Close() })
		out = append(out, d)
		llvm = llvm || d.tool == "llvm-readobj"
	}
	if len(out) == 0 {
		testenv.Missing(t, testenv.Binutils, "no binutils toolchains under %s", filepath.Join(toolchain.CacheDir(), "toolchains"))
	}
	if !llvm && os.Getenv("SFCONFORM_SKIP_LLVM") != "1" {
		testenv.Missing(t, testenv.LLVM, "no llvm-readobj under %s", filepath.Join(toolchain.CacheDir(), "toolchains"))
	}
	return out
}

// lookupsDiffer compares the rows the consumer loaded with the section's
// own at every byte of every function, and describes the differences
// (at most a few); except, when set, says which of the section's rows
// may differ and what the dumper's reading of them must be instead.
func lookupsDiffer(t *testing.T, d *Dumper, s testSection, except func(want sframe.Row) (sframe.Row, bool)) []string {
	t.Helper()
	orig, err := sframe.Decode(s.img.SFrame, s.img.SFrameAddr)
	if err != nil {
		t.Fatal(err)
	}
	fdes, _ := orig.Sections[0].FDEs()
	var diffs []string
	for _, f := range fdes {
		for pc := f.Start; pc < f.End() && len(diffs) < 5; pc++ {
			gf, gr, gerr := d.table.FindRow(pc)
			wf, wr, werr := orig.FindRow(pc)
			if wr.RA.Kind == sframe.RuleUndefined {
				// An outermost row's FP is as stored; no dumper prints it.
				wr.FP, gr.FP = sframe.Rule{}, sframe.Rule{}
			}
			if except != nil && werr == nil {
				if alt, ok := except(wr); ok {
					wr = alt
				}
			}
			if (gerr == nil) != (werr == nil) || gf.Start != wf.Start || gr != wr {
				diffs = append(diffs, fmt.Sprintf("FindRow(%#x): function %#x row %+v, %v; the section: %#x %+v, %v", pc, gf.Start, gr, gerr, wf.Start, wr, werr))
			}
		}
	}
	return diffs
}

// TestDumpersReadWhatTheySupport holds Supports to what the dumpers do.
// Every dumper reads every section of its targets: where Supports says
// yes, Load succeeds and every byte of every function looks up the row
// the section itself has (the rows came from the dumper's text); where it
// says no, Load fails or some lookup differs. Two behaviours Supports
// cannot express are checked as such: binutils before 2.45 refuse a
// version 2 section with PC-relative function starts (erratum 1), and
// binutils before 2.46 print an FRE without data words (an outermost row,
// erratum 2) as "fp+-1": a CFA of FP-1, the RA and FP where they were.
func TestDumpersReadWhatTheySupport(t *testing.T) {
	t.Parallel()
	sections := testSections(t)
	for _, d := range dumperConsumers(t) {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			read, refused := 0, 0
			gnu := d.tool != "llvm-readobj"
			for _, s := range sections {
				if _, ok := d.paths[s.img.Target]; !ok {
					continue
				}
				supported := d.Supports(s.img.Target, s.version)
				loadErr := d.Load(s.img)
				var except func(sframe.Row) (sframe.Row, bool)
				switch {
				case supported == nil && gnu && toolchain.CompareVersions(d.series, "2.45") < 0 && s.version == 2 && s.pcrel:
					if loadErr == nil {
						t.Errorf("%s: binutils %s read a version 2 section with PC-relative starts", s.name, d.series)
					}
					continue
				case supported == nil && gnu && toolchain.CompareVersions(d.series, "2.46") < 0 && s.outermost:
					abi := sframe.ABI(s.img.Target)
					fixedFP, fixedRA := sframe.DefaultFixedOffsets(abi)
					except = func(w sframe.Row) (sframe.Row, bool) {
						if w.RA.Kind != sframe.RuleUndefined {
							return w, false
						}
						w.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: abi.FPRegister(), Offset: -1}
						w.RA, w.FP = sframe.Rule{Kind: sframe.RuleSame}, sframe.Rule{}
						if fixedRA != 0 {
							w.RA = sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int64(fixedRA), Deref: true}
						}
						_ = fixedFP
						return w, true
					}
				}
				switch {
				case supported == nil && loadErr != nil:
					t.Errorf("%s: supported, but Load: %v", s.name, loadErr)
				case supported == nil:
					if diffs := lookupsDiffer(t, d, s, except); len(diffs) > 0 {
						t.Errorf("%s: %s rows differ from the section's:\n%s", s.name, d.name, strings.Join(diffs, "\n"))
					}
					read++
				case loadErr == nil && len(lookupsDiffer(t, d, s, nil)) == 0:
					t.Errorf("%s: Supports(%v, %d) says %q, but %s read every row right", s.name, s.img.Target, s.version, supported, d.name)
				default:
					refused++
				}
			}
			t.Logf("%s read %d sections it supports right; of the others it misread or refused %d", d.name, read, refused)
			if read == 0 {
				t.Errorf("%s read no section it supports", d.name)
			}
		})
	}
}

// A dumper that fails in any way fails Load with its command and output
// in the error; the next Load works again. The tool here is a script
// standing in for a dumper.
func TestDumperFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := os.ReadFile("../dumper/testdata/objdump-2.47/sections/x86-64-v3-seed1.txt")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../dumper/testdata/sections/x86-64-v3-seed1.sframe")
	if err != nil {
		t.Fatal(err)
	}
	addr, err := os.ReadFile("../dumper/testdata/sections/x86-64-v3-seed1.sframe.addr")
	if err != nil {
		t.Fatal(err)
	}
	base, err := strconv.ParseUint(strings.TrimSpace(string(addr)), 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	img := &image.Image{Target: target.X86_64, SFrame: raw, SFrameAddr: base}
	goodText := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(goodText, good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"crash", "echo partial; kill -SEGV $$", []string{"crashed (signal 11", "partial"}},
		{"hang", "echo started; exec sleep 30", []string{"hung: killed after", "started"}},
		{"exit", "echo 'objdump: file format not recognized' >&2; exit 1", []string{"failed: exit status 1", "file format not recognized"}},
		{"complaint", "cat " + goodText + "; echo 'objdump: warning: odd' >&2", []string{"complained", "warning: odd"}},
		{"garbage", "echo 'Contents of the SFrame section .sframe:'; echo '    Version: SFRAME_VERSION_3'; echo 'hello'", []string{"printed what cannot be read", `line 3 "hello"`, "hello"}},
		{"nothing", "true", []string{"no \"Contents of the SFrame section\" line", "(no output)"}},
	} {
		d := &Dumper{name: "objdump-test", tool: "objdump", series: "2.47", paths: map[target.Target]string{target.X86_64: script(c.name, c.body)}, timeout: 300 * time.Millisecond}
		start := time.Now()
		err := d.Load(img)
		if err == nil {
			t.Errorf("%s: Load succeeded", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to contain %q", c.name, err, w)
			}
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: Load took %v", c.name, time.Since(start))
		}
		if uerr := d.Unwind([]Step{{Regs: &machine.Registers{}}}, make([]Result, 1)); uerr == nil {
			t.Errorf("%s: Unwind after a failed Load succeeded", c.name)
		}
		// The same consumer reads the next image again.
		d.paths[target.X86_64] = script(c.name+"-then-good", "cat "+goodText)
		if err := d.Load(img); err != nil {
			t.Errorf("%s: the next Load: %v", c.name, err)
		}
		d.Close()
	}
}

// The dumper consumers are named after the provisioned tools; a name of
// a tool that is not there is an error saying so.
func TestDumperNames(t *testing.T) {
	t.Parallel()
	ds := dumperConsumers(t)
	names := Names()
	for _, d := range ds {
		if !strings.Contains(strings.Join(names, " "), d.name) || !InFamily(d.name) {
			t.Errorf("%s missing from Names() %v or not a family member", d.name, names)
		}
		c, err := New(d.name)
		if err != nil || c.Name() != d.name || c.BatchSize() != 1 {
			t.Errorf("New(%s) = %v, %v", d.name, c, err)
		}
		if _, err := New(d.name + ":arg"); err == nil {
			t.Errorf("%s with an argument accepted", d.name)
		}
	}
	if InFamily("builtin") {
		t.Error("builtin is a family member")
	}
	for _, n := range []string{"objdump-1.0", "readelf-1.0", "llvm-readobj-1"} {
		if _, err := NewDumper(n); !errors.Is(err, toolchain.ErrNotProvisioned) {
			t.Errorf("NewDumper(%s): %v, want ErrNotProvisioned", n, err)
		}
		if _, err := New(n); err == nil {
			t.Errorf("New(%s) succeeded", n)
		}
	}
}

// BenchmarkDumperLoad is the cost of one Load per dumper (running the
// tool and reading its text) on an x86-64 section of 28 functions, next
// to the builtin consumer's decode; Unwind costs the same for all.
func BenchmarkDumperLoad(b *testing.B) {
	load := func(b *testing.B, c Consumer, file string) {
		raw, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		a, err := os.ReadFile(file + ".addr")
		if err != nil {
			b.Fatal(err)
		}
		base, _ := strconv.ParseUint(strings.TrimSpace(string(a)), 0, 64)
		img := &image.Image{Target: target.X86_64, SFrame: raw, SFrameAddr: base}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := c.Load(img); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("builtin", func(b *testing.B) { load(b, NewBuiltin(), "../dumper/testdata/sections/x86-64-v2-seed1.sframe") })
	for _, n := range dumperNames() {
		d, err := NewDumper(n)
		if err != nil {
			b.Fatal(err)
		}
		file := "../dumper/testdata/sections/x86-64-v2-seed1.sframe"
		if d.Supports(target.X86_64, 2) != nil {
			file = "../sframe/testdata/gas-2.40/x86-64/prologues.sframe"
			if d.Supports(target.X86_64, 1) != nil {
				continue
			}
		} else if d.tool != "llvm-readobj" && toolchain.CompareVersions(d.series, "2.45") < 0 {
			file = "../sframe/testdata/gas-2.44/x86-64/prologues.sframe" // no PC-relative starts
		}
		b.Run(n, func(b *testing.B) { load(b, d, file) })
		d.Close()
	}
}

// Only GNU dumpers before 2.45 refuse PC-relative v2 function starts.
func TestRefusesPCRelV2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool, series string
		refuses      bool
	}{{"objdump", "2.40", true}, {"readelf", "2.44", true}, {"objdump", "2.45", false}, {"readelf", "2.47", false}, {"llvm-readobj", "23", false}} {
		d := &Dumper{name: c.tool + "-" + c.series, tool: c.tool, series: c.series}
		if err := d.RefusesPCRelV2(); (err != nil) != c.refuses {
			t.Errorf("%s: RefusesPCRelV2() = %v, want refusal %v", d.name, err, c.refuses)
		}
	}
}
