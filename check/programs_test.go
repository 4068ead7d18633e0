package check

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The targets real programs are built for, with their gcc and g++.
var programTargets = []struct {
	t       target.Target
	cc, cxx string
}{
	{target.X86_64, "gcc", "g++"},
	{target.AArch64, "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"},
	{target.S390X, "s390x-linux-gnu-gcc", "s390x-linux-gnu-g++"},
}

// program is one build of testdata/programs.
type program struct {
	name string // gas-2.47/x86-64/excpt-pie
	path string
}

// driverDir is a directory holding only "as" and "ld", tc's: the gcc
// driver's -B takes both from there.
func driverDir(t *testing.T, dir string, tc toolchain.Toolchain) string {
	b := filepath.Join(dir, "B-"+tc.Name+"-"+tc.Target.Name())
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"as": tc.AS, "ld": tc.LD} {
		if err := os.Symlink(to, filepath.Join(b, name)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	return b
}

// buildPrograms builds the C and the C++ test programs with gcc and g++
// 12 (-O2, -Wa,--gsframe) and tc's as and ld, as a PIE, statically and as
// a shared library. srcs are the sources (hello.c; excpt.cc excpt2.cc).
func buildPrograms(t *testing.T, dir string, tc toolchain.Toolchain, cc, cxx string, kinds []string, progs ...string) []program {
	b := driverDir(t, dir, tc)
	var out []program
	for _, prog := range progs {
		driver, srcs := cc, []string{"hello.c"}
		switch prog {
		case "excpt":
			driver, srcs = cxx, []string{"excpt.cc", "excpt2.cc"}
		case "lost":
			srcs = []string{"lost.c"}
		case "clobber":
			srcs = []string{"clobber.s"}
		}
		driver = testenv.LookPath(t, driver, testenv.HostPackages)
		for _, kind := range kinds {
			name := tc.Name + "/" + tc.Target.Name() + "/" + prog + "-" + kind
			p := filepath.Join(dir, strings.ReplaceAll(name, "/", "-"))
			args := []string{"-O2", "-Wa,--gsframe", "-B" + b + "/", "-o", p}
			switch kind {
			case "pie":
				args = append(args, "-pie", "-fPIE")
			case "static":
				args = append(args, "-static")
			case "shared":
				args = append(args, "-shared", "-fPIC")
			case "obj":
				args = append(args, "-c")
			}
			for _, s := range srcs {
				args = append(args, filepath.Join("testdata", "programs", s))
			}
			cmd := exec.Command(driver, args...)
			if o, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %s %s: %v\n%s", name, driver, strings.Join(args, " "), err, o)
			}
			out = append(out, program{name: name, path: p})
		}
	}
	return out
}

// sframeToolchains are the provisioned toolchains that write SFrame for
// t, with their ld.
func sframeToolchains(t *testing.T, tg target.Target) []toolchain.Toolchain {
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no GNU toolchain: %v", err)
	}
	var out []toolchain.Toolchain
	for _, tc := range all {
		if tc.Target == tg && tc.SFrameVersion > 0 && tc.LD != "" {
			out = append(out, tc)
		}
	}
	return out
}

// knownErrors are the errors real builds show that are written up as
// findings: a substring of the message, the toolchains that show it, and
// the finding.
var knownErrors = []struct {
	in      string // in the message
	fn      string // the function's name starts so ("": any)
	targets []target.Target
	series  []string
	finding string
}{
	// ld 2.44 and 2.47 describe x86-64 .plt.got entries with CFA = SP+16
	// (reached by a call: SP+8, as ld's own .eh_frame says).
	{fn: ".plt.got", targets: []target.Target{target.X86_64}, series: []string{"2.44", "2.47"}, finding: "037-ld-x86-plt-got-cfa-16"},
}

func knownError(f Finding, tc toolchain.Toolchain) string {
	for _, k := range knownErrors {
		if strings.Contains(f.Message, k.in) && strings.HasPrefix(f.Func, k.fn) &&
			(len(k.targets) == 0 || slices.Contains(k.targets, tc.Target)) &&
			(len(k.series) == 0 || contains(k.series, toolchain.Series(tc.Version))) {
			return k.finding
		}
	}
	return ""
}

// TestRealPrograms checks programs as users build them, with every
// provisioned gas and ld that writes SFrame for the target: a small C
// program and a C++ program with exceptions, templates and an inline
// function used from two translation units, as a PIE, statically and as
// a shared library. Their sections are right, so every error is a false
// alarm unless a finding explains it; and the check must judge them
// (functions run, rows compared), so that a check that judges nothing
// cannot pass. Under -short only the newest series is built and the
// static links are checked statically only.
func TestRealPrograms(t *testing.T) {
	dir := t.TempDir()
	for _, pt := range programTargets {
		tcs := sframeToolchains(t, pt.t)
		if testing.Short() && len(tcs) > 1 {
			tcs = tcs[len(tcs)-1:] // the newest series only
		}
		for _, tc := range tcs {
			progs := buildPrograms(t, dir, tc, pt.cc, pt.cxx, []string{"pie", "static", "shared"}, "hello", "excpt")
			for _, p := range progs {
				t.Run(p.name, func(t *testing.T) {
					opts := DefaultOptions()
					if testing.Short() && strings.HasSuffix(p.name, "-static") {
						opts.Dynamic = false
					}
					r, err := File(p.path, opts)
					if err != nil {
						t.Fatal(err)
					}
					s := r.Summary
					t.Logf("%d errors, %d warnings, %d notes; %d functions, %d with FDE; %d compared; %d steps %v; gaps %v",
						s.Errors, s.Warnings, s.Notes, s.Functions, s.WithFDE, s.Compared, s.Steps, s.Verdicts, gapText(r.Gaps))
					for _, f := range r.Findings {
						if f.Severity != SevError {
							continue
						}
						if k := knownError(f, tc); k != "" {
							t.Logf("known (%s): %s %s %s: %s", k, f.Kind, f.Func, f.PC, f.Message)
							continue
						}
						t.Errorf("false alarm: %s %s %s: %s\n  sframe: %s\n  cfi:    %s", f.Kind, f.Func, f.PC, f.Message, f.SFrame, f.CFI)
					}
					if s.Compared == 0 || s.WithFDE < 2 {
						t.Errorf("nothing judged: %d rows compared, %d functions with an FDE", s.Compared, s.WithFDE)
					}
					if opts.Dynamic && s.Verdicts["OK"] == 0 {
						t.Errorf("the dynamic check judged no step OK: %v", s.Verdicts)
					}
				})
			}
		}
	}
}

func gapText(gs []Gap) string {
	var parts []string
	for _, g := range gs {
		parts = append(parts, g.Cause+":"+itoa(g.Functions))
	}
	return strings.Join(parts, " ")
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// newest is the newest provisioned toolchain of series for tg.
func newest(t *testing.T, tg target.Target, series string) toolchain.Toolchain {
	var out toolchain.Toolchain
	for _, tc := range sframeToolchains(t, tg) {
		if toolchain.Series(tc.Version) == series {
			out = tc
		}
	}
	if out.Name == "" {
		testenv.Missing(t, testenv.Binutils, "no gas/ld %s for %s", series, tg.Name())
	}
	return out
}

// TestLostFDE: a function GNU as leaves out of an object that carries
// SFrame (lost.c's lost(), whose CFI has DW_CFA_GNU_args_size 16) is an
// error and makes the file fail, on every target, linked or as the object
// gas wrote, while the crt files' functions of the same link stay
// coverage.
func TestLostFDE(t *testing.T) {
	dir := t.TempDir()
	for _, pt := range programTargets {
		tc := newest(t, pt.t, "2.47")
		for _, p := range buildPrograms(t, dir, tc, pt.cc, pt.cxx, []string{"pie", "obj"}, "lost") {
			r, err := File(p.path, Options{Static: true})
			if err != nil {
				t.Fatal(err)
			}
			if ExitCode([]*Report{r}) != 1 {
				t.Errorf("%s: exit %d, want 1 (%d errors)", p.name, ExitCode([]*Report{r}), r.Summary.Errors)
			}
			lost := gapOf(r, CauseLost)
			if lost == nil || !lost.Error || !contains(lost.Names, "lost") {
				t.Errorf("%s: gaps %+v, want lost() under %q as an error", p.name, r.Gaps, CauseLost)
			}
			for _, g := range r.Gaps {
				if g.Cause != CauseLost && (g.Error || contains(g.Names, "before") || contains(g.Names, "after")) {
					t.Errorf("%s: gap %+v: only lost() is an error", p.name, g)
				}
			}
		}
	}
}

func gapOf(r *Report, cause string) *Gap {
	for i := range r.Gaps {
		if r.Gaps[i].Cause == cause {
			return &r.Gaps[i]
		}
	}
	return nil
}

// TestLinkerDroppedInputs: objects assembled by gas 2.44 (SFrame v2)
// linked by ld 2.47, which ignores version 2 input ("unexpected SFrame
// section type; section ignored"): the output's section holds only ld's
// PLT FDEs. Every function with CFI is then an error, not coverage, and
// --strict is not needed for exit 1.
func TestLinkerDroppedInputs(t *testing.T) {
	dir := t.TempDir()
	as := newest(t, target.X86_64, "2.44")
	ld := newest(t, target.X86_64, "2.47")
	mixed := as
	mixed.Name, mixed.LD = "gas-2.44+ld-2.47", ld.LD
	p := buildPrograms(t, dir, mixed, "gcc", "g++", []string{"pie"}, "hello")[0]
	r, err := File(p.path, Options{Static: true})
	if err != nil {
		t.Fatal(err)
	}
	g := gapOf(r, CauseDropped)
	if ExitCode([]*Report{r}) != 1 || g == nil || !g.Error || !contains(g.Names, "main") || !contains(g.Names, "greet") {
		t.Errorf("exit %d, gaps %+v: want main and greet under %q as errors", ExitCode([]*Report{r}), r.Gaps, CauseDropped)
	}
}

// TestStrict: --strict makes the crt files' coverage gaps of a correct
// build errors; without it the same file passes.
func TestStrict(t *testing.T) {
	dir := t.TempDir()
	// AArch64: an x86-64 PIE has a real error, ld's .plt.got row (037).
	tc := newest(t, target.AArch64, "2.47")
	p := buildPrograms(t, dir, tc, "aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", []string{"pie"}, "hello")[0]
	for _, strict := range []bool{false, true} {
		r, err := File(p.path, Options{Static: true, Strict: strict})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if strict {
			want = 1
		}
		if got := ExitCode([]*Report{r}); got != want {
			t.Errorf("strict=%v: exit %d, want %d (gaps %+v)", strict, got, want, r.Gaps)
		}
		if gapOf(r, CauseNoCFI) == nil || gapOf(r, CauseNoSFrameInput) == nil {
			t.Errorf("strict=%v: gaps %+v: want the crt files' functions without CFI (_init) and without SFrame (_start)", strict, r.Gaps)
		}
	}
}

// TestNoReturn: greet() calls abort() through the PLT when its argument
// is NULL (variant 0): that run must end there, at the exit stand-in,
// never return from abort into the bytes after the call; the same for
// the C++ program's throws (__cxa_throw, _Unwind_Resume).
func TestNoReturn(t *testing.T) {
	dir := t.TempDir()
	tc := newest(t, target.X86_64, "2.47")
	progs := buildPrograms(t, dir, tc, "gcc", "g++", []string{"pie"}, "hello", "excpt")
	for _, p := range progs {
		r, err := File(p.path, Options{Dynamic: true, Variants: 2})
		if err != nil {
			t.Fatal(err)
		}
		exits := map[string]int{}
		for _, f := range r.Functions {
			exits[f.Name] = f.Ends["exit"]
		}
		for _, fn := range map[string][]string{"hello": {"greet"}, "excpt": {"_Z2fai", "main"}}[strings.Split(filepath.Base(p.path), "-")[4]] {
			if exits[fn] == 0 {
				t.Errorf("%s: no run of %s ended at a call that never returns (ends: %v)", p.name, fn, exits)
			}
		}
		if r.Summary.Errors > 0 {
			t.Errorf("%s: %d errors", p.name, r.Summary.Errors)
		}
	}
}

// TestClobberedSlot: a function that, on the check's synthetic inputs,
// overwrites the FP it saved (clobber.s's clob, as zlib's inflate_table
// does) is left out from that step on, counted, and not an error; a
// function whose CFI names a wrong slot for its FP (wrongslot), which it
// then writes, stays an error; and so does finding 030's rule that
// outlives the pop of %rbp (frames.c's drap, a real gcc build).
func TestClobberedSlot(t *testing.T) {
	dir := t.TempDir()
	tc := newest(t, target.X86_64, "2.47")
	p := buildPrograms(t, dir, tc, "gcc", "g++", []string{"pie"}, "clobber")[0]
	r, err := File(p.path, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	fns := map[string]FuncReport{}
	for _, f := range r.Functions {
		fns[f.Name] = f
	}
	for _, fn := range []string{"clob", "clob2"} {
		if c := fns[fn]; c.Clobbered == 0 || c.Aside[AsideClobbered] == 0 || c.Verdicts["WRONG"] != 0 {
			t.Errorf("%s: %d runs left out, set aside %v, verdicts %v: want the run of variant 0 left out, no WRONG step", fn, c.Clobbered, c.Aside, c.Verdicts)
		}
	}
	for _, fn := range []string{"wrongslot", "stale"} {
		if w := fns[fn]; w.Clobbered != 0 || w.Verdicts["WRONG"] == 0 {
			t.Errorf("%s: %d runs left out, verdicts %v: want its wrong row WRONG, nothing left out", fn, w.Clobbered, w.Verdicts)
		}
	}
	errs := map[string]bool{}
	for _, f := range r.Findings {
		if f.Severity == SevError {
			errs[f.Func] = true
		}
	}
	if errs["clob"] || errs["clob2"] || !errs["wrongslot"] || !errs["stale"] || ExitCode([]*Report{r}) != 1 || r.Summary.Clobbered == 0 {
		t.Errorf("errors in %v (want wrongslot and stale, not clob or clob2), exit %d, %d runs left out", errs, ExitCode([]*Report{r}), r.Summary.Clobbered)
	}

	// 030: gcc's DRAP epilogue.
	drap := filepath.Join(dir, "drap")
	b := driverDir(t, dir, tc)
	cmd := exec.Command(testenv.LookPath(t, "gcc", testenv.HostPackages), "-O2", "-fPIC", "-fasynchronous-unwind-tables", "-Wa,--gsframe", "-B"+b+"/", "-c", "-o", drap+".o", filepath.Join("testdata", "frames.c"))
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, o)
	}
	r, err = File(drap+".o", DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range r.Findings {
		found = found || (f.Func == "drap" && f.Kind == KindDynamic && f.Severity == SevError)
	}
	for _, f := range r.Functions {
		if f.Name == "drap" && f.Clobbered != 0 {
			t.Errorf("drap: %d runs left out as clobbered", f.Clobbered)
		}
	}
	if !found {
		t.Errorf("finding 030 no longer found: no dynamic error in drap")
	}
}

// TestLandingPads: every landing pad of the C++ program (its LSDAs'
// call-site tables) is entered by a run, as the personality routine
// enters it, and judged: no error, and the runs execute more of the file
// than the runs without them.
func TestLandingPads(t *testing.T) {
	dir := t.TempDir()
	for _, pt := range programTargets {
		tc := newest(t, pt.t, "2.47")
		for _, p := range buildPrograms(t, dir, tc, pt.cc, pt.cxx, []string{"pie"}, "excpt") {
			r, err := File(p.path, Options{Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			pr := r.Pads
			if pr == nil {
				t.Errorf("%s: no landing pads", p.name)
				continue
			}
			if pr.Pads == 0 || pr.Entered != pr.Pads || pr.WithPads <= pr.Executed {
				t.Errorf("%s: landing pads %+v: want every one entered, and more code executed", p.name, pr)
			}
			if r.Summary.Errors > 0 || r.Summary.Aside[AsidePadEntry] == 0 {
				t.Errorf("%s: %d errors, set aside %v", p.name, r.Summary.Errors, r.Summary.Aside)
			}
			t.Logf("%s: %d landing pads entered; %d instructions executed without them, %d with", p.name, pr.Entered, pr.Executed, pr.WithPads)
			if pt.t == target.X86_64 {
				brokenPad(t, p.path, filepath.Join(dir, "broken-pad"))
			}
		}
	}
}

// brokenPad moves the SFrame row that holds at a landing pad in main.cold
// (code only an exception reaches) by 8: the dynamic check must judge it
// WRONG there.
func brokenPad(t *testing.T, exe, out string) {
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var cold elf.Symbol
	for _, s := range syms {
		if s.Name == "main.cold" {
			cold = s
		}
	}
	eh := f.Section(".eh_frame")
	ehData, _ := eh.Data()
	tab, err := cfi.Parse(ehData, eh.Addr, f.ByteOrder, true)
	if err != nil || cold.Size == 0 {
		t.Fatalf("main.cold %+v, .eh_frame: %v", cold, err)
	}
	pad := uint64(0)
	for _, fde := range tab.FDEs {
		if fde.LSDA == 0 {
			continue
		}
		gx := f.Section(".gcc_except_table")
		d, _ := gx.Data()
		l, err := cfi.ParseLSDA(d, gx.Addr, fde.LSDA, fde.Start, f.ByteOrder)
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range l.CallSites {
			if cs.LandingPad >= cold.Value && cs.LandingPad < cold.Value+cold.Size && pad == 0 {
				pad = cs.LandingPad
			}
		}
	}
	if pad == 0 {
		t.Fatalf("no landing pad in main.cold")
	}
	sec := f.Section(sframe.SectionName)
	data, _ := sec.Data()
	st, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sections[0]
	fdes, err := s.FDEs()
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for i := range fdes {
		fd := &fdes[i]
		if pad < fd.Start || pad >= fd.Start+uint64(fd.Size) {
			continue
		}
		for k := len(fd.Rows) - 1; k >= 0; k-- {
			if fd.Start+uint64(fd.Rows[k].Start) <= pad {
				fd.Rows[k].CFA.Offset += 8
				moved = true
				break
			}
		}
	}
	if !moved {
		t.Fatalf("no SFrame row at the landing pad 0x%x", pad)
	}
	fp, ra := sframe.DefaultFixedOffsets(s.Header.ABI)
	enc, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: s.Header.Version, ABI: s.Header.ABI, Base: sec.Addr, PCRel: true, CFAFixedFP: fp, CFAFixedRA: ra})
	if err != nil || len(enc) > len(data) {
		t.Fatalf("re-encoding: %v (%d bytes, was %d)", err, len(enc), len(data))
	}
	enc = append(enc, make([]byte, len(data)-len(enc))...) // sframe's encoding may be tighter than gas's
	file, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copy(file[sec.Offset:], enc)
	if err := os.WriteFile(out, file, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := File(out, Options{Dynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range r.Findings {
		if x.Kind == KindDynamic && x.Severity == SevError && strings.Contains(x.Message, "main.cold") {
			return
		}
	}
	t.Errorf("the row at landing pad 0x%x in main.cold moved: no dynamic error names main.cold (%d errors)", pad, r.Summary.Errors)
}

// A stripped file has no function symbols: function starts come from
// .eh_frame, where the PLT and GCC's cold parts must still be what they
// are (linker stubs entered through the PLT; code inside another
// function's frame), not functions run from a call. The stripped hello
// PIE then has one error, the .plt.got row ld 2.47 gets wrong (finding
// 037), and none from the runs.
func TestStrippedProgram(t *testing.T) {
	dir := t.TempDir()
	tc := newest(t, target.X86_64, "2.47")
	p := buildPrograms(t, dir, tc, "gcc", "g++", []string{"pie"}, "hello")[0]
	strip := testenv.LookPath(t, "strip", testenv.HostPackages)
	stripped := p.path + "-stripped"
	if o, err := exec.Command(strip, "-o", stripped, p.path).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, o)
	}
	r, err := File(stripped, Options{Static: true, Dynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.FuncSource != ".eh_frame" {
		t.Fatalf("function starts from %q, want .eh_frame (the file is stripped)", r.FuncSource)
	}
	var errs []string
	for _, f := range r.Findings {
		if f.Severity == SevError {
			errs = append(errs, f.Kind+" "+f.Func+": "+f.Message)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "static .plt.got") {
		t.Errorf("%d errors, want the .plt.got row of finding 037 alone:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}
