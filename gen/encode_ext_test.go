package gen

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// gasCommand returns GNU as 2.40 for abi with the flags the target needs:
// the provisioned toolchain if there is one, else (only on a machine where
// setup has not run) the host's cross binutils, which Debian bookworm ships
// at 2.40. Without either, testenv.Missing skips the test or fails it.
func gasCommand(t *testing.T, abi target.Target) []string {
	t.Helper()
	tc, err := toolchain.Find("gas-2.40", abi)
	if err == nil {
		return append([]string{tc.AS}, tc.ASFlags...)
	}
	// Once setup has run, the provisioned toolchain must be there: a
	// fallback would hide its absence.
	if required, _ := testenv.SetupRequired(); required {
		testenv.Missing(t, testenv.Binutils, "cannot check %s encodings against GNU as 2.40: %v", abi.Name(), err)
	}
	name := map[target.Target]string{
		target.X86_64:    "x86_64-linux-gnu-as",
		target.AArch64:   "aarch64-linux-gnu-as",
		target.AArch64BE: "aarch64-linux-gnu-as",
		target.S390X:     "s390x-linux-gnu-as",
	}[abi]
	path, lerr := exec.LookPath(name)
	if lerr != nil {
		testenv.Missing(t, testenv.Binutils, "cannot check %s encodings against GNU as 2.40: %v; and %s is not on PATH", abi.Name(), err, name)
	}
	if abi == target.AArch64BE {
		return []string{path, "-EB"}
	}
	return []string{path}
}

// assemble runs GNU as over src and returns the object's .text bytes.
func assemble(t *testing.T, as []string, dir, src string, extra ...string) (text []byte, obj string) {
	t.Helper()
	s := filepath.Join(dir, "p.s")
	obj = filepath.Join(dir, "p.o")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append(append([]string(nil), as[1:]...), extra...), "-o", obj, s)
	if out, err := exec.Command(as[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s\n--- source ---\n%s", as[0], strings.Join(args, " "), err, out, numbered(src))
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".text")
	if sec == nil {
		t.Fatalf("%s: no .text", obj)
	}
	text, err = sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range f.Sections {
		if rs.Type == elf.SHT_RELA && rs.Info < uint32(len(f.Sections)) && f.Sections[rs.Info] == sec && rs.Size > 0 {
			t.Fatalf("%s: .text has relocations (%s, %d bytes): gen's branches should all resolve inside the section", obj, rs.Name, rs.Size)
		}
	}
	return text, obj
}

func numbered(src string) string {
	var sb strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&sb, "%4d %s\n", i+1, l)
	}
	return sb.String()
}

// checkSameCode compares gen's code with the object's .text: equal, apart
// from the padding GNU as appends to align the section's end (s390x nopr).
func checkSameCode(t *testing.T, p *Program, text []byte) {
	t.Helper()
	if len(text) < len(p.Code) {
		t.Fatalf("GNU as made %d bytes of .text, gen %d", len(text), len(p.Code))
	}
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			at := f.Addr - p.Base + uint64(in.Off)
			if got := text[at : at+uint64(len(in.Bytes))]; !bytes.Equal(got, in.Bytes) {
				t.Fatalf("%s seed %d: %s+0x%x %q: gen % x, GNU as % x", p.Target.Name(), p.Seed, f.Name, in.Off, in.Text, in.Bytes, got)
			}
		}
	}
	pad := text[len(p.Code):]
	if len(pad) >= 8 || !(allBytes(pad, 0) || (p.Target == target.S390X && allPairs(pad, 0x07, 0x07))) {
		t.Fatalf("unexpected bytes after the code: % x", pad)
	}
}

func allBytes(b []byte, v byte) bool {
	for _, c := range b {
		if c != v {
			return false
		}
	}
	return true
}

func allPairs(b []byte, hi, lo byte) bool {
	if len(b)%2 != 0 {
		return false
	}
	for i := 0; i < len(b); i += 2 {
		if b[i] != hi || b[i+1] != lo {
			return false
		}
	}
	return true
}

// TestEncodingMatchesGNUAs assembles the rendered assembly of many
// programs, all patterns mixed and each pattern alone, with GNU as and
// requires its bytes to equal gen's own encoding.
func TestEncodingMatchesGNUAs(t *testing.T) {
	t.Parallel()
	seeds := int64(16)
	if testing.Short() {
		seeds = 4
	}
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			as := gasCommand(t, abi)
			dir := t.TempDir()
			opts := []Options{{}, {Funcs: 16, MaxDepth: 6}}
			for _, name := range Patterns(abi) {
				opts = append(opts, Options{Patterns: []string{name}})
			}
			for seed := int64(1); seed <= seeds; seed++ {
				for _, opt := range opts {
					p, err := Generate(abi, seed, opt)
					if err != nil {
						t.Fatalf("seed %d %+v: %v", seed, opt, err)
					}
					if err := p.Layout(0); err != nil {
						t.Fatal(err)
					}
					text, _ := assemble(t, as, dir, p.Assembly())
					checkSameCode(t, p, text)
				}
			}
		})
	}
}

// TestLongBranches forces x86-64 jumps past the 8-bit range so that the
// relaxation to 32-bit displacements is checked against GNU as too.
func TestLongBranches(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	as := gasCommand(t, abi)
	dir := t.TempDir()
	long := 0
	for seed := int64(1); seed <= 6; seed++ {
		p, err := Generate(abi, seed, Options{Funcs: 60, MaxDepth: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Funcs {
			for _, o := range f.ops {
				if o.br != nil && o.br.relax && !o.br.short {
					long++
				}
			}
		}
		text, _ := assemble(t, as, dir, p.Assembly())
		checkSameCode(t, p, text)
	}
	if long == 0 {
		t.Fatal("no relaxed jump took the long form: the test does not exercise relaxation")
	}
}

// TestGasSFrameMatchesRows assembles the rendered assembly with every
// provisioned GNU as that emits SFrame for the target, links it at gen's
// layout address, and compares the linked .sframe rows with gen's FDEs:
// the .cfi_* rendering must say what the rows say. The directives are
// rendered from the rows, so a wrong row renders as a wrong directive and
// passes here: TestRowsMatchGasSCFI and TestRowsAgainstExecution check the
// rows themselves.
func TestGasSFrameMatchesRows(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no provisioned GNU toolchain to compare SFrame rows with: %v", err)
	}
	seeds := int64(10)
	if testing.Short() {
		seeds = 3
	}
	for _, tc := range all {
		if tc.SFrameVersion == 0 {
			continue
		}
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pats := gasPatterns(t, tc, false)
			for seed := int64(1); seed <= seeds; seed++ {
				for _, opt := range []Options{{Patterns: pats}, {Funcs: 14, MaxDepth: 6, Patterns: pats}} {
					p, err := Generate(tc.Target, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					tab := gasSFrame(t, tc, dir, p, p.Assembly())
					if n := fdeCount(tab); n != len(p.Funcs) {
						t.Fatalf("%s seed %d %+v: %d FDEs for %d functions", tc.Name, seed, opt, n, len(p.Funcs))
					}
					// Before SFrame v3 GNU as has no outermost-frame FRE: it
					// ignores .cfi_undefined of the RA column and describes
					// the entry stub with the CIE's rule, so only later
					// versions can agree on the stub.
					compareFDEs(t, tc.Name, p, tab, tc.SFrameVersion >= 3)
				}
			}
		})
	}
}

// TestRowsMatchGasSCFI checks gen's rows against rows the real toolchain
// derives from the instructions alone. GNU as --scfi=experimental
// (x86-64 since 2.43, AArch64 since 2.44) synthesises the CFI of
// ABI-conforming code from its instructions; given gen's assembly without
// a single .cfi_* directive, its --gsframe output owes nothing to gen's
// rows, and must equal them row for row. GNU as has no SCFI for s390x,
// whose rows only TestRowsAgainstExecution checks independently.
//
// The entry stub is left to the rows: it realigns the stack, which SCFI
// refuses, and its frame is the outermost one, which SCFI cannot know.
// Without its .type directive SCFI does not treat it as a function.
func TestRowsMatchGasSCFI(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no provisioned GNU toolchain to synthesise CFI with: %v", err)
	}
	seeds := int64(10)
	if testing.Short() {
		seeds = 3
	}
	covered := map[target.Target]bool{}
	for _, tc := range all {
		if tc.SFrameVersion == 0 || !hasSCFI(t, tc) {
			continue
		}
		covered[tc.Target] = true
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			checked := map[string]bool{}
			pats := gasPatterns(t, tc, true)
			for seed := int64(1); seed <= seeds; seed++ {
				for _, opt := range []Options{{Patterns: pats}, {Funcs: 16, MaxDepth: 6, Patterns: pats}} {
					p, err := Generate(tc.Target, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range p.Funcs[1:] {
						checked[f.Pattern] = true
					}
					src := withoutCFI(p.Assembly(), p.Funcs[0].Name)
					tab := gasSFrame(t, tc, dir, p, src, "--scfi=experimental")
					if n := fdeCount(tab); n != len(p.Funcs)-1 {
						t.Fatalf("%s seed %d %+v: SCFI made %d FDEs for %d functions besides the stub", tc.Name, seed, opt, n, len(p.Funcs)-1)
					}
					compareFDEs(t, tc.Name+" --scfi", p, tab, false)
				}
			}
			for _, name := range Patterns(tc.Target) {
				if _, cannot := gasCannot[gasCase{tc.Name, tc.Target, name, true}]; !checked[name] && !cannot {
					t.Errorf("no program had a %s function: pattern not checked", name)
				}
			}
		})
	}
	for _, abi := range []target.Target{target.X86_64, target.AArch64, target.AArch64BE} {
		if !covered[abi] {
			testenv.Missing(t, testenv.Binutils, "no provisioned GNU as emits SFrame and synthesises CFI (--scfi) for %s", abi.Name())
		}
	}
}

// gasCannot lists what a real GNU as cannot do with a pattern, as
// measured; the value quotes what it does instead. Such a pattern is left
// out of that assembler's comparison (and the test log says so): the
// assembler's shortcoming is a finding, not gen's. The entries live with
// each target's pattern tests (amd64_gas_test.go).
var gasCannot = map[gasCase]string{}

type gasCase struct {
	toolchain string
	target    target.Target
	pattern   string
	scfi      bool // rows derived by --scfi=experimental, not from the CFI
}

// gasPatterns returns the patterns of tc's target that tc can do, or nil
// when it can do them all (the default mix).
func gasPatterns(t *testing.T, tc toolchain.Toolchain, scfi bool) []string {
	t.Helper()
	var out []string
	for _, name := range Patterns(tc.Target) {
		if why, ok := gasCannot[gasCase{tc.Name, tc.Target, name, scfi}]; ok {
			t.Logf("pattern %s left out: %s", name, why)
			continue
		}
		out = append(out, name)
	}
	if len(out) == len(Patterns(tc.Target)) {
		return nil
	}
	return out
}

func fdeCount(tab *sframe.Table) int {
	n := 0
	for _, sec := range tab.Sections {
		n += int(sec.Header.NumFDEs)
	}
	return n
}

// hasSCFI reports whether tc's assembler offers --scfi for its target.
func hasSCFI(t *testing.T, tc toolchain.Toolchain) bool {
	t.Helper()
	out, err := exec.Command(tc.AS, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", tc.AS, err, out)
	}
	return bytes.Contains(out, []byte("--scfi=experimental"))
}

// withoutCFI drops every .cfi_* directive from src, and the .type of the
// function stub.
func withoutCFI(src, stub string) string {
	var sb strings.Builder
	for _, line := range strings.SplitAfter(src, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, ".cfi_") || strings.HasPrefix(l, ".type "+stub+",") {
			continue
		}
		sb.WriteString(line)
	}
	return sb.String()
}

// gasSFrame assembles src with tc and --gsframe plus asFlags, links it at
// p's layout address and returns the linked .sframe section.
func gasSFrame(t *testing.T, tc toolchain.Toolchain, dir string, p *Program, src string, asFlags ...string) *sframe.Table {
	t.Helper()
	_, obj := assemble(t, append([]string{tc.AS}, tc.ASFlags...), dir, src, append([]string{"--gsframe"}, asFlags...)...)
	exe := filepath.Join(dir, "p")
	args := append(append([]string(nil), tc.LDFlags...), fmt.Sprintf("-Ttext=0x%x", p.Base), "-e", "_start", "-o", exe, obj)
	if out, err := exec.Command(tc.LD, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tc.LD, strings.Join(args, " "), err, out)
	}
	tab, err := sframe.ReadELF(exe)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// compareFDEs requires the FDEs of p (bar the stub's unless withStub) in
// tab, with the same rows. Messages name both sides: producer's, and gen's.
func compareFDEs(t *testing.T, producer string, p *Program, tab *sframe.Table, withStub bool) {
	t.Helper()
	for i, want := range p.FDEs() {
		if i == 0 && !withStub {
			continue
		}
		got, err := tab.FindFDE(want.Start)
		if err != nil {
			t.Fatalf("%s seed %d: no FDE for 0x%x: %v", producer, p.Seed, want.Start, err)
		}
		name := p.Funcs[slices.IndexFunc(p.Funcs, func(f *Func) bool { return f.Addr == want.Start })].Name
		if got.Start != want.Start || got.Size != want.Size {
			t.Fatalf("%s seed %d %s: FDE [0x%x,+%d), gen [0x%x,+%d)", producer, p.Seed, name, got.Start, got.Size, want.Start, want.Size)
		}
		rows, err := got.Rows()
		if err != nil {
			t.Fatalf("%s seed %d %s: %v", producer, p.Seed, name, err)
		}
		if len(rows) != len(want.Rows) {
			t.Fatalf("%s seed %d %s: %d rows, gen %d\n%s %+v\ngen %+v", producer, p.Seed, name, len(rows), len(want.Rows), producer, rows, want.Rows)
		}
		for i := range want.Rows {
			g, w := rows[i], want.Rows[i]
			if g.Start != w.Start || g.CFA != w.CFA || g.RA != w.RA || g.FP != w.FP {
				t.Fatalf("%s seed %d %s row %d:\n%s %+v\ngen %+v", producer, p.Seed, name, i, producer, g, w)
			}
		}
	}
}
