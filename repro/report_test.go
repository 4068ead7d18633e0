package repro_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/minimize"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
	"github.com/sfconform/sfconform/verdict"
)

// minimizedCase makes, minimizes and saves the reproducer of a failure of
// prod's image of a generated program: the first failing step, or the
// first pick accepts.
func minimizedCase(t *testing.T, prodName string, tg target.Target, seed int64, opt gen.Options, consName string, pick func(*harness.Failure) bool) (string, *corpus.Case) {
	t.Helper()
	prod, err := producer.New(prodName)
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "producer %s: %v", prodName, err)
	}
	cons, err := consumer.New(consName)
	if err != nil {
		a, _ := consumer.Lookup(consName)
		step := testenv.Step(a.Setup)
		if !consumer.InFamily(consName) && strings.HasPrefix(consName, "objdump") {
			step = testenv.Binutils // a series not provisioned at all
		}
		testenv.Missing(t, step, "consumer %s: %v", consName, err)
	}
	defer cons.Close()
	hopt := harness.Options{}
	if pick != nil {
		hopt.MaxFailures = 1 << 20
	}
	chk, err := harness.New(tg, hopt)
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	img, prog, err := campaign.Produce(prod, tg, seed, opt)
	if err != nil {
		t.Fatal(err)
	}
	res := chk.Check(img, cons)
	var f *harness.Failure
	for i := range res.Failures {
		if pick == nil || pick(&res.Failures[i]) {
			f = &res.Failures[i]
			break
		}
	}
	if f == nil {
		t.Fatalf("%s %s seed %d x %s: no failure to keep among %d", prodName, tg.Name(), seed, consName, len(res.Failures))
	}
	sig := minimize.FailureSignature(img, f)
	m, err := minimize.Minimize(chk, prod, cons, prog, f.Path, sig, minimize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := repro.NewCase(repro.CaseInput{Img: m.Img, Prog: m.Prog, Seed: seed, Consumer: cons, Res: m.Res, Failure: m.Failure, Minimization: m.Minimization(), Checker: chk})
	path, err := corpus.Save(t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, back
}

// The commands of a toolchain report, run on their own in a shell with
// the provisioned tools first on PATH, show the defect: objdump prints,
// for the PC at fault, the row the report calls actual (or no FDE), and
// not the expected one. The testsuite export's .d fails on what that gas
// makes of the .s, and passes on that objdump's printing of the correct
// rows.
func TestReportCommandsShowTheDefect(t *testing.T) {
	t.Parallel()
	drapNoInfo := func(f *harness.Failure) bool {
		return f.Judgement.Verdict == verdict.NoInfo && strings.Contains(f.Function, "drap") || f.Judgement.Verdict == verdict.NoInfo && f.Judgement.Frame > 0
	}
	for _, tc := range []struct {
		name     string
		producer string
		target   target.Target
		seed     int64
		opt      gen.Options
		pick     func(*harness.Failure) bool
		noFDE    bool // the section has no FDE at the PC at fault
		suite    bool // the testsuite export applies
	}{
		{"gas-2.44 _start outermost", "gas-2.44", target.X86_64, 5, gen.Options{}, nil, false, true},
		// Version 2 cannot express DRAP's CFA: no testsuite case in its
		// layout, the NOINFO is version 2's documented limit.
		{"gas-2.44 drap", "gas-2.44", target.X86_64, 1, gen.Options{SFrameVersion: 3, Patterns: []string{"drap", "fp-frame"}}, drapNoInfo, true, false},
		{"gas-2.40 aarch64 _start", "gas-2.40", target.AArch64, 3, gen.Options{}, nil, true, false},
		{"gas-2.44 aarch64_be _start", "gas-2.44", target.AArch64BE, 4, gen.Options{}, nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, c := minimizedCase(t, tc.producer, tc.target, tc.seed, tc.opt, "builtin", tc.pick)
			rep, err := repro.NewReport(c, path, repro.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Kind != repro.KindToolchain {
				t.Fatalf("report kind %s, want %s (actual %q, expected %q)", rep.Kind, repro.KindToolchain, rep.Actual, rep.Expected)
			}
			md, script := rep.Markdown(), rep.Script()
			if !strings.Contains(md, "```sh\n"+script+"```") {
				t.Fatalf("the report does not carry the commands:\n%s", md)
			}
			out, err := repro.RunScript(t.TempDir(), script, rep.Tools)
			if err != nil {
				t.Fatal(err)
			}
			abi := sframe.ABI(tc.target)
			l, err := dumper.ParseGNU(out, abi)
			if err != nil {
				t.Fatalf("objdump's output does not parse: %v\n%s", err, out)
			}
			// The commands place the code where the run had it: some FDE
			// starts at a function of the image.
			placed := false
			for _, f := range l.Funcs {
				if sym, ok := rep.Replay.Img.SymbolAt(f.Start); ok && sym.Addr == f.Start {
					placed = true
				}
			}
			if !placed {
				t.Errorf("no FDE objdump prints starts at a function of the image:\n%s", out)
			}
			row, covered := rowIn(l, rep.PC)
			switch {
			case tc.noFDE && covered:
				t.Errorf("objdump prints an FDE for %#x (%s), the report says there is none:\n%s", rep.PC, rep.Function, out)
			case !tc.noFDE && !covered:
				t.Errorf("objdump prints no FDE for %#x (%s):\n%s", rep.PC, rep.Function, out)
			case !tc.noFDE:
				if got := repro.Rules(tc.target, row); got != rep.Actual || got == rep.Expected {
					t.Errorf("objdump's row at %#x is %q; the report says %q, expected %q", rep.PC, got, rep.Actual, rep.Expected)
				}
			}
			if !strings.Contains(md, "| actual (the section) | "+rep.Actual) || !strings.Contains(md, "| expected") {
				t.Errorf("the report does not show actual and expected rows:\n%s", md)
			}
			t.Logf("%s: at %#x (%s) actual %q, expected %q", rep.Title(), rep.PC, rep.Function, rep.Actual, rep.Expected)

			files, err := rep.Testsuite()
			if !tc.suite {
				if !errors.Is(err, repro.ErrNoTestsuite) {
					t.Errorf("testsuite export: %v, want ErrNoTestsuite", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkTestsuite(t, rep, files)
		})
	}
}

// rowIn finds the row a listing has for pc.
func rowIn(l *dumper.Listing, pc uint64) (sframe.Row, bool) {
	for _, f := range l.FDEs() {
		if pc < f.Start || pc-f.Start >= uint64(f.Size) {
			continue
		}
		r, err := f.FindRow(pc)
		return r, err == nil
	}
	return sframe.Row{}, false
}

func checkTestsuite(t *testing.T, rep *repro.Report, files []repro.File) {
	t.Helper()
	dir := t.TempDir()
	var src, d string
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f.Name) {
		case ".s":
			src = f.Name
		case ".d":
			d = f.Text
		}
	}
	for _, want := range []string{"#as: ", "#objdump: --sframe=.sframe", "#name: ", "#target: ", "#pass"} {
		if !strings.Contains(d, want) {
			t.Errorf(".d lacks %q:\n%s", want, d)
		}
	}
	tl := rep.Tools
	as := append(append([]string{tl.AS}, tl.ASFlags...), "-o", "t.o", src)
	cmd := exec.Command(as[0], as[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", as, err, out)
	}
	dump := func(file string) string {
		cmd := exec.Command(tl.Objdump, "--sframe=.sframe", file)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("objdump %s: %v\n%s", file, err, out)
		}
		return string(out)
	}
	buggy := dump("t.o")
	if err := repro.MatchD(d, buggy); err == nil {
		t.Errorf("the .d matches what gas makes of the .s: it does not catch the defect\n%s\n%s", d, buggy)
	} else {
		t.Logf("the .d fails on gas's object, as it must: %v", err)
	}
	sec, err := rep.ExpectedSection(sframe.Version(rep.Replay.Img.SFrameVersion), 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	tg := rep.Replay.Img.Target
	elf, err := dumper.ELF(sframe.ABI(tg), tg.ByteOrder(), sec, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "right.elf"), elf, 0o644); err != nil {
		t.Fatal(err)
	}
	if right := dump("right.elf"); repro.MatchD(d, right) != nil {
		t.Errorf("the .d does not match objdump's printing of the correct rows: %v\n%s\n%s", repro.MatchD(d, right), d, right)
	}
}

// A libsframe report's C program, built against the provisioned
// libsframe as the report says and run on its own, shows libsframe's
// answer at the PC at fault differing from the row the section holds:
// sfconform's version 3 entry stub has an FDE without rows (an outermost
// frame, in the specification's words), where libsframe finds no FRE.
func TestReportLibsframeProgram(t *testing.T) {
	t.Parallel()
	path, c := minimizedCase(t, "builtin-v3", target.X86_64, 2, gen.Options{SFrameVersion: 3, Patterns: []string{"empty-fde", "fp-frame"}}, "libsframe", nil)
	rep, err := repro.NewReport(c, path, repro.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != repro.KindLibsframe {
		t.Fatalf("kind %s", rep.Kind)
	}
	md, script := rep.Markdown(), rep.LibsframeScript()
	if !strings.Contains(md, "```sh\n"+script+"```") {
		t.Fatalf("the report does not carry the program:\n%s", md)
	}
	// What a maintainer files comes first; sfconform's own terms (its
	// verdicts, steps, replay command) only in the last section.
	head, tail, ok := strings.Cut(md, "## How sfconform found it")
	if !ok || !strings.Contains(tail, "sfconform repro ") {
		t.Fatalf("no last section on how sfconform found it, with the replay command:\n%s", md)
	}
	for _, word := range []string{"NOINFO", "WRONG", "sfconform repro", "at step", "minimized"} {
		if strings.Contains(head, word) {
			t.Errorf("%q before the last section:\n%s", word, head)
		}
	}
	for _, sec := range []string{"## Reproducer", "## Expected and actual", "## Affected versions"} {
		if !strings.Contains(head, sec) {
			t.Errorf("no %q before the last section", sec)
		}
	}
	if !strings.Contains(head, "| libsframe-src |") {
		a, _ := consumer.Lookup("libsframe-src")
		if _, err := consumer.New("libsframe-src"); err == nil {
			t.Errorf("the libsframe built from source is provisioned (setup step %d) but not among the versions tried:\n%s", a.Setup, head)
		}
	}
	root := filepath.Join(toolchain.CacheDir(), "roots", "sid")
	lib := filepath.Join(root, "usr", "lib", "x86_64-linux-gnu", "libsframe.a")
	if _, err := os.Stat(lib); err != nil {
		a, _ := consumer.Lookup("libsframe")
		testenv.Missing(t, testenv.Step(a.Setup), "sid's libsframe.a: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SFRAME_INCLUDE="+filepath.Join(root, "usr", "include"), "SFRAME_LIB="+lib)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the program: %v, want exit 1 (libsframe differs)\n%s", err, out)
	}
	for _, want := range []string{"libsframe: no FRE", "expected:  RA undefined"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the program's output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("%s\n%s", rep.Title(), out)
}
