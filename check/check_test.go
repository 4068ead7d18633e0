package check_test

import (
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// built is one file made from real compiler output by a provisioned gas.
type built struct {
	name string
	tc   toolchain.Toolchain
	obj  string // the relocatable object of frames.c
	exe  string // frames.c and ext.c linked
	so   string // frames.c alone as a shared object (-z now): ext is a shared library's
}

// cc is the gcc that compiles for a target.
func cc(t testing.TB, tg target.Target) []string {
	var c []string
	switch tg {
	case target.X86_64:
		c = []string{"gcc"}
	case target.AArch64:
		c = []string{"aarch64-linux-gnu-gcc", "-mbranch-protection=pac-ret+leaf"}
	case target.AArch64BE:
		c = []string{"aarch64-linux-gnu-gcc", "-mbig-endian"}
	case target.S390X:
		c = []string{"s390x-linux-gnu-gcc"}
	}
	c[0] = testenv.LookPath(t, c[0], testenv.HostPackages)
	return c
}

// buildAll compiles testdata/frames.c with the host's and the cross gccs
// at -O2 and assembles it with every provisioned gas that writes SFrame
// for the target: the fixture iterator of this package's tests.
func buildAll(t *testing.T) []built {
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no GNU toolchain: %v", err)
	}
	dir := t.TempDir()
	var out []built
	for _, tg := range target.All {
		c := cc(t, tg)
		var srcs []string
		for _, base := range []string{"frames", "ext"} {
			s := filepath.Join(dir, tg.Name()+"-"+base+".s")
			args := append(c[1:len(c):len(c)], "-O2", "-fPIC", "-fasynchronous-unwind-tables", "-S", "-o", s, filepath.Join("testdata", base+".c"))
			if b, err := exec.Command(c[0], args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s", c[0], args, err, b)
			}
			srcs = append(srcs, s)
		}
		for _, tc := range all {
			if tc.Target != tg || tc.SFrameVersion == 0 || tc.LD == "" {
				continue
			}
			name := tc.Name + "/" + tg.Name()
			p := filepath.Join(dir, strings.ReplaceAll(name, "/", "-"))
			b := built{name: name, tc: tc, obj: p + ".o", exe: p, so: p + ".so"}
			if r, err := tc.Assemble(forAS(t, tc, srcs[0]), b.obj, "--gsframe"); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, r)
			}
			if r, err := tc.Assemble(forAS(t, tc, srcs[1]), p+"-ext.o", "--gsframe"); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, r)
			}
			if r, err := tc.Link(toolchain.Link{Output: b.exe, Objects: []string{b.obj, p + "-ext.o"}, Text: 0x401000, Entry: 0x401000}); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, r)
			}
			if r, err := tc.Link(toolchain.Link{Output: b.so, Objects: []string{b.obj}, Text: 0x401000, Entry: 0x401000, Shared: true}); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, r)
			}
			out = append(out, b)
		}
	}
	return out
}

// TestRealCompilerOutput checks gcc's output assembled by every gas:
// statically (object and executable) every SFrame row agrees with the
// CFI, or the CFI is one the version cannot express; dynamically every
// function runs and is judged.
func TestRealCompilerOutput(t *testing.T) {
	for _, b := range buildAll(t) {
		b := b
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{b.obj, b.exe} {
				r, err := check.File(path, check.Options{Static: true})
				if err != nil {
					t.Fatal(err)
				}
				s := r.Summary
				if s.Compared == 0 || s.Functions < 10 {
					t.Errorf("%s: %d functions, %d rows compared", path, s.Functions, s.Compared)
				}
				for _, f := range r.Findings {
					if f.Severity == check.SevError {
						t.Errorf("%s: %s %s %s: %s\n sframe %s\n cfi    %s", path, f.Kind, f.Func, f.PC, f.Message, f.SFrame, f.CFI)
					}
				}
				if r.Type == "REL" && !r.Relocated {
					t.Errorf("%s: a relocatable object not laid out", path)
				}
				t.Logf("%s: %s v%d: %d functions, %d instructions, %d compared, %d inexpressible",
					filepath.Base(path), r.Type, r.Sections[0].Version, s.Functions, s.Instructions, s.Compared, s.Inexpressible)
			}
		})
	}
}

// TestDynamic runs the functions of gcc's output under the emulator: all
// steps are judged and the functions without a frame-pointer surprise are
// clean.
func TestDynamic(t *testing.T) {
	for _, b := range buildAll(t) {
		if b.tc.SFrameVersion != 3 {
			continue
		}
		b := b
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			r, err := check.File(b.exe, check.Options{Dynamic: true, SaveDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			// The shared object's calls to ext go through ld's PLT to the
			// check's stand-in for a library function, and come back.
			so, err := check.File(b.so, check.Options{Dynamic: true, SaveDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, fr := range so.Functions {
				if fr.Name == "calls" && fr.Executed != fr.Instructions {
					t.Errorf("shared object: calls ran %d of %d instructions (ends %v: %s)", fr.Executed, fr.Instructions, fr.Ends, fr.FirstEnd)
				}
			}
			for _, f := range so.Findings {
				if f.Severity == check.SevError && !(f.Func == "drap" && b.tc.Target == target.X86_64) {
					t.Errorf("shared object: %s %s: %s", f.Func, f.PC, f.Message)
				}
			}
			if r.Summary.Steps == 0 || r.Summary.Verdicts["OK"] == 0 {
				t.Fatalf("no step judged OK: %+v", r.Summary)
			}
			for _, fr := range r.Functions {
				if fr.Name == "leaf" && (fr.Executed != fr.Instructions || fr.Verdicts["OK"] != fr.Steps) {
					t.Errorf("leaf: %d of %d instructions executed, verdicts %v", fr.Executed, fr.Instructions, fr.Verdicts)
				}
				// indirect calls through its argument, which points
				// outside the file, and sys makes a system call: the
				// lenient emulation returns from both and runs on.
				if (fr.Name == "indirect" && fr.Served["external calls"] == 0) || (fr.Name == "sys" && fr.Served["system calls"] == 0) ||
					((fr.Name == "indirect" || fr.Name == "sys") && (fr.Executed != fr.Instructions || fr.Ends["returned"] != fr.Ends["returned"]+fr.Ends["fault"]+fr.Ends["budget"]+fr.Ends["error"])) {
					t.Errorf("%s: %d of %d instructions executed, served %v, ends %v: %s", fr.Name, fr.Executed, fr.Instructions, fr.Served, fr.Ends, fr.FirstEnd)
				}
				// rec recurses past the unwinder's 64 frames: those steps
				// are set aside, and none is WRONG.
				if strings.HasPrefix(fr.Name, "rec") && (fr.Aside[check.AsideBeyondDepth] == 0 || fr.Verdicts["WRONG"] != 0) {
					t.Errorf("%s: verdicts %v, set aside %v", fr.Name, fr.Verdicts, fr.Aside)
				}
			}
			if n := r.Summary.Verdicts["WRONG"]; n != 0 {
				t.Errorf("%d WRONG steps in a correct file: %v", n, r.Summary.Verdicts)
			}
			// The relocatable object runs too, its code's relocations
			// applied: as the linked file, but for ext, which it does
			// not define (the stand-in returns 0).
			obj, err := check.File(b.obj, check.Options{Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range obj.Findings {
				if f.Severity == check.SevError && !(f.Func == "drap" && b.tc.Target == target.X86_64) {
					t.Errorf("object: %s %s: %s", f.Func, f.PC, f.Message)
				}
			}
			// Functions whose paths do not depend on what ext returns run
			// as they do linked: same instructions, same ends, no call
			// leaving the image but indirect's.
			linked := map[string]check.FuncReport{}
			for _, fr := range r.Functions {
				linked[fr.Name] = fr
			}
			for _, fr := range obj.Functions {
				if fr.Executed == 0 || (fr.Name == "calls" && fr.Executed != fr.Instructions) {
					t.Errorf("object: %s ran %d of %d instructions (ends %v: %s)", fr.Name, fr.Executed, fr.Instructions, fr.Ends, fr.FirstEnd)
				}
				switch fr.Name {
				case "leaf", "calls", "uses_static", "tail", "many", "indirect", "sys":
					if l := linked[fr.Name]; fr.Executed != l.Executed || fmt.Sprint(fr.Ends) != fmt.Sprint(l.Ends) || fmt.Sprint(fr.Served) != fmt.Sprint(l.Served) {
						t.Errorf("object: %s ran %d instructions, ends %v, served %v; linked %d, ends %v, served %v (%s)", fr.Name, fr.Executed, fr.Ends, fr.Served, l.Executed, l.Ends, l.Served, fr.FirstEnd)
					}
				}
			}
			if obj.Summary.Verdicts["WRONG"] != 0 || obj.Summary.Steps == 0 {
				t.Errorf("object: %d steps, verdicts %v", obj.Summary.Steps, obj.Summary.Verdicts)
			}
			t.Logf("%d functions, %d steps %v", r.Summary.Functions, r.Summary.Steps, r.Summary.Verdicts)
		})
	}
}

// TestBrokenRowIsFound moves one row's CFA offset in a linked file's
// section: the static check must name that function with both rules, and
// the dynamic one must judge it WRONG.
func TestBrokenRowIsFound(t *testing.T) {
	var b *built
	for _, x := range buildAll(t) {
		if x.tc.Target == target.X86_64 && x.tc.SFrameVersion == 3 {
			b = &x
		}
	}
	if b == nil {
		testenv.Missing(t, testenv.Binutils, "no x86-64 gas writing SFrame v3")
		return
	}
	broken := filepath.Join(t.TempDir(), "broken")
	victim := breakRow(t, b.exe, broken, "leaf")
	r, err := check.File(broken, check.Options{Static: true, Dynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	var static, dynamic bool
	for _, f := range r.Findings {
		if f.Func != "leaf" || f.Severity != check.SevError {
			continue
		}
		static = static || (f.Kind == check.KindStatic && f.SFrame != f.CFI && f.SFrame != "")
		dynamic = dynamic || f.Kind == check.KindDynamic
	}
	if !static || !dynamic || check.ExitCode([]*check.Report{r}) != 1 {
		js, _ := json.MarshalIndent(r.Findings, "", "  ")
		t.Fatalf("row %s of leaf moved; static found %v, dynamic %v; findings:\n%s", victim, static, dynamic, js)
	}
}

// TestDeepRecursionBrokenRow: rec's rows in the body of the function (the
// largest CFA offset: where its recursive calls return) moved by 8 make
// every caller frame of rec wrong; the steps deeper than the unwinder's
// frame limit must still be WRONG, not set aside, since a frame the
// consumer returned is wrong.
func TestDeepRecursionBrokenRow(t *testing.T) {
	for _, b := range buildAll(t) {
		if b.tc.SFrameVersion != 3 {
			continue
		}
		b := b
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			broken := filepath.Join(t.TempDir(), "broken")
			moved := 0
			mutate(t, b.exe, broken, func(fdes []sframe.FDE, addr func(string) uint64) {
				for i := range fdes {
					if fdes[i].Start != addr("rec") {
						continue
					}
					top := int64(0)
					for _, row := range fdes[i].Rows {
						top = max(top, row.CFA.Offset)
					}
					for k := range fdes[i].Rows {
						if row := &fdes[i].Rows[k]; row.CFA.Offset == top {
							row.CFA.Offset += 8
							moved++
						}
					}
				}
			})
			if moved == 0 {
				t.Fatal("no row of rec moved")
			}
			r, err := check.File(broken, check.Options{Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, fr := range r.Functions {
				// Every deep backtrace has a wrong frame among the
				// first 64: none may be set aside as beyond the limit.
				if strings.HasPrefix(fr.Name, "rec") && (fr.Verdicts["WRONG"] == 0 || fr.Aside[check.AsideBeyondDepth] != 0) {
					t.Errorf("%s: %d rows moved, verdicts %v, set aside %v", fr.Name, moved, fr.Verdicts, fr.Aside)
				}
			}
			if check.ExitCode([]*check.Report{r}) != 1 {
				t.Errorf("exit code %d, want 1", check.ExitCode([]*check.Report{r}))
			}
		})
	}
}

// breakRow copies exe to out with the CFA offset of the last row of
// function fn's FDE moved by 8, re-encoding the section as GNU as would.
func breakRow(t *testing.T, exe, out, fn string) string {
	t.Helper()
	victim := ""
	mutate(t, exe, out, func(fdes []sframe.FDE, addr func(string) uint64) {
		for i := range fdes {
			if fdes[i].Start == addr(fn) {
				row := &fdes[i].Rows[len(fdes[i].Rows)-1]
				row.CFA.Offset += 8
				victim = fmt.Sprintf("+%d: CFA %+v", row.Start, row.CFA)
			}
		}
	})
	if victim == "" {
		t.Fatalf("no FDE for %s", fn)
	}
	return victim
}

// mutate copies exe to out with its .sframe's FDEs changed by change (which
// finds symbols with addr) and re-encoded as GNU as would, to the same size.
func mutate(t *testing.T, exe, out string, change func(fdes []sframe.FDE, addr func(string) uint64)) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	addr := func(name string) uint64 {
		for _, s := range syms {
			if s.Name == name {
				return s.Value
			}
		}
		t.Fatalf("no symbol %s", name)
		return 0
	}
	sec := f.Section(sframe.SectionName)
	data, _ := sec.Data()
	tab, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	s := tab.Sections[0]
	fdes, err := s.FDEs()
	if err != nil {
		t.Fatal(err)
	}
	change(fdes, addr)
	fp, ra := sframe.DefaultFixedOffsets(s.Header.ABI)
	enc, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: s.Header.Version, ABI: s.Header.ABI, Base: sec.Addr, PCRel: true, CFAFixedFP: fp, CFAFixedRA: ra})
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != len(data) {
		t.Fatalf("re-encoded section is %d bytes, not %d", len(enc), len(data))
	}
	file, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copy(file[sec.Offset:], enc)
	if err := os.WriteFile(out, file, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestStructureFindings: an FDE moved out of the executable segment, and
// two FDEs given one start, are errors of their own kinds.
func TestStructureFindings(t *testing.T) {
	var b *built
	for _, x := range buildAll(t) {
		if x.tc.Target == target.X86_64 && x.tc.SFrameVersion == 3 {
			b = &x
		}
	}
	if b == nil {
		testenv.Missing(t, testenv.Binutils, "no x86-64 gas writing SFrame v3")
		return
	}
	for kind, change := range map[string]func([]sframe.FDE, func(string) uint64){
		check.KindOutside: func(fdes []sframe.FDE, addr func(string) uint64) {
			for i := range fdes {
				if fdes[i].Start == addr("leaf") {
					fdes[i].Start = 0x100000 // below the first segment
				}
			}
		},
		check.KindDuplicate: func(fdes []sframe.FDE, addr func(string) uint64) {
			for i := range fdes {
				if fdes[i].Start == addr("calls") {
					fdes[i].Start = addr("leaf")
				}
			}
		},
	} {
		out := filepath.Join(t.TempDir(), kind)
		mutate(t, b.exe, out, change)
		r, err := check.File(out, check.Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.ByKind[kind] == 0 || !r.Failed() {
			js, _ := json.MarshalIndent(r.Findings, "", "  ")
			t.Errorf("%s: not reported:\n%s", kind, js)
		}
	}
}

// TestUnusable: what cannot be checked says why, and exits 2.
func TestUnusable(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "text")
	os.WriteFile(notELF, []byte("hello"), 0o644)
	noSFrame := filepath.Join(dir, "nosframe")
	// A minimal x86-64 ELF header with no sections.
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(h[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint16(h[52:], 64)
	os.WriteFile(noSFrame, h, 0o644)
	for path, want := range map[string]string{
		notELF:                  "not a readable ELF file",
		noSFrame:                "no section headers",
		filepath.Join(dir, "x"): "no such file",
	} {
		r, err := check.File(path, check.DefaultOptions())
		if err == nil || !strings.Contains(r.Unusable, want) || check.ExitCode([]*check.Report{r}) != 2 {
			t.Errorf("%s: err %v, unusable %q, want %q and exit 2", path, err, r.Unusable, want)
		}
	}
}

// TestStripped: a file without symbol tables takes its function starts
// from .eh_frame's FDEs and says so; the static check runs the same.
func TestStripped(t *testing.T) {
	strip := testenv.LookPath(t, "strip", testenv.HostPackages)
	for _, b := range buildAll(t) {
		if b.tc.Target != target.X86_64 || b.tc.SFrameVersion != 3 {
			continue
		}
		out := filepath.Join(t.TempDir(), "stripped")
		if o, err := exec.Command(strip, "--strip-all", "-o", out, b.exe).CombinedOutput(); err != nil {
			t.Fatalf("strip: %v\n%s", err, o)
		}
		full, err := check.File(b.exe, check.Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := check.File(out, check.Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		if full.FuncSource != ".symtab" || r.FuncSource != ".eh_frame" {
			t.Errorf("function starts from %q and, stripped, %q", full.FuncSource, r.FuncSource)
		}
		if r.Summary.Compared == 0 || r.Summary.Differ != 0 || r.Summary.Functions != full.Summary.Functions {
			t.Errorf("stripped: %+v\nfull: %+v", r.Summary, full.Summary)
		}
		return
	}
	testenv.Missing(t, testenv.Binutils, "no x86-64 gas writing SFrame v3")
}

// TestDebugFrame: without .eh_frame (gcc -g -fno-asynchronous-unwind-tables
// puts the CFI in .debug_frame, which gas relocates with absolute
// relocations and section-offset CIE pointers) the static check compares
// with .debug_frame.
func TestDebugFrame(t *testing.T) {
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no GNU toolchain: %v", err)
	}
	dir := t.TempDir()
	n := 0
	for _, tc := range all {
		if tc.SFrameVersion != 3 {
			continue
		}
		c := cc(t, tc.Target)
		s, o := filepath.Join(dir, tc.Target.Name()+".s"), filepath.Join(dir, tc.Target.Name()+".o")
		args := append(c[1:], "-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-S", "-o", s, filepath.Join("testdata", "frames.c"))
		if b, err := exec.Command(c[0], args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", c[0], args, err, b)
		}
		if r, err := tc.Assemble(forAS(t, tc, s), o, "--gsframe"); err != nil {
			t.Fatalf("%v\n%s", err, r)
		}
		r, err := check.File(o, check.Options{Static: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.CFISource != ".debug_frame" || r.Summary.Compared == 0 || r.Summary.Differ != 0 || r.Summary.Errors != 0 {
			t.Errorf("%s: CFI %q, %+v", tc.Target, r.CFISource, r.Summary)
		}
		n++
	}
	if n == 0 {
		testenv.Missing(t, testenv.Binutils, "no gas writing SFrame v3")
	}
}

// matrixEnv runs TestCompilerMatrix (make check-matrix): every
// optimisation level of frames.c, every gas, objects, static and PIE
// links, static and dynamic checks. A few minutes on two cores.
const matrixEnv = "SFCONFORM_CHECK_MATRIX"

// TestCompilerMatrix is the long slice of the real-code checks: -O0, -O2,
// -O2 with and without the frame pointer, -O3 (and pac-ret on AArch64),
// each assembled by every gas that writes SFrame for the target, checked
// as an object and linked (-static at a fixed address, and -pie). Every
// static difference and every dynamic failure other than finding 030 fails
// it.
func TestCompilerMatrix(t *testing.T) {
	if os.Getenv(matrixEnv) != "1" {
		t.Skipf("the long slice: %s=1 (make check-matrix)", matrixEnv)
	}
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no GNU toolchain: %v", err)
	}
	dir := t.TempDir()
	opts := map[string][]string{"O0": {"-O0"}, "O2": {"-O2"}, "O2fp": {"-O2", "-fno-omit-frame-pointer"},
		"O2nofp": {"-O2", "-fomit-frame-pointer"}, "O3": {"-O3"}, "O2pac": {"-O2", "-mbranch-protection=pac-ret+leaf"}}
	for _, tc := range all {
		if tc.SFrameVersion == 0 || tc.LD == "" {
			continue
		}
		c := cc(t, tc.Target)
		for name, o := range opts {
			if name == "O2pac" && !tc.Target.IsAArch64() {
				continue
			}
			tc, name, o := tc, name, o
			t.Run(tc.Name+"/"+tc.Target.Name()+"/"+name, func(t *testing.T) {
				p := filepath.Join(dir, tc.Name+"-"+tc.Target.Name()+"-"+name)
				var objs []string
				for _, base := range []string{"frames", "ext"} {
					args := append(append(c[1:len(c):len(c)], o...), "-fasynchronous-unwind-tables", "-fPIE", "-S", "-o", p+base+".s", filepath.Join("testdata", base+".c"))
					if b, err := exec.Command(c[0], args...).CombinedOutput(); err != nil {
						t.Fatalf("%s %v: %v\n%s", c[0], args, err, b)
					}
					if r, err := tc.Assemble(forAS(t, tc, p+base+".s"), p+base+".o", "--gsframe"); err != nil {
						t.Fatalf("%v\n%s", err, r)
					}
					objs = append(objs, p+base+".o")
				}
				files := []string{objs[0], p}
				if r, err := tc.Link(toolchain.Link{Output: p, Objects: objs, Text: 0x401000, Entry: 0x401000}); err != nil {
					t.Fatalf("%v\n%s", err, r)
				}
				pie := p + "-pie"
				args := append(append([]string{}, tc.LDFlags...), "-pie", "-e", "leaf", "-o", pie)
				if b, err := exec.Command(tc.LD, append(args, objs...)...).CombinedOutput(); err == nil {
					files = append(files, pie)
				} else {
					t.Logf("no PIE: %v\n%s", err, b)
				}
				for _, f := range files {
					r, err := check.File(f, check.Options{Static: true, Dynamic: true, SaveDir: t.TempDir()})
					if err != nil {
						t.Fatal(err)
					}
					for _, x := range r.Findings {
						if x.Severity == check.SevError && !(x.Func == "drap" && tc.Target == target.X86_64 && x.Kind == check.KindDynamic) {
							t.Errorf("%s: %s %s %s: %s\n sframe %s\n cfi    %s", filepath.Base(f), x.Kind, x.Func, x.PC, x.Message, x.SFrame, x.CFI)
						}
					}
					s := r.Summary
					t.Logf("%s: %s v%d: %d functions, %d instructions, %d compared, %d inexpressible, %d executed, %d steps %v",
						filepath.Base(f), r.Type, r.Sections[0].Version, s.Functions, s.Instructions, s.Compared, s.Inexpressible, s.Executed, s.Steps, s.Verdicts)
				}
			})
		}
	}
}

// replays loads a saved reproducer and runs it again through the harness:
// it must fail at the same step with the same verdict.
func replays(t *testing.T, path string) {
	t.Helper()
	cs, err := corpus.Load(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	img, err := cs.Image()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	chk, err := harness.New(img.Target, harness.Options{Budget: 20000})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	cons, err := consumer.New("builtin")
	if err != nil {
		t.Fatal(err)
	}
	res := chk.Check(img, cons)
	if len(res.Failures) == 0 || res.Failures[0].Step != cs.Step || res.Failures[0].Judgement.Verdict != cs.Verdict {
		t.Errorf("%s does not replay: recorded step %d %s, now %+v", path, cs.Step, cs.Verdict, res.Failures)
	}
}

// forAS gives gcc's assembly file src in the form tc's assembler takes
// (toolchain.ForAssembler: a newer gcc's build attributes dropped for an
// older gas).
func forAS(t *testing.T, tc interface {
	ForAssembler(string) (string, int, error)
}, src string) string {
	t.Helper()
	s, _, err := tc.ForAssembler(src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
