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
func gasCommand(t *testing.T, abi target.Target) toolchain.Toolchain {
	t.Helper()
	tc, err := toolchain.Find("gas-2.40", abi)
	if err == nil {
		return tc
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
	host := toolchain.Toolchain{Name: "host " + name, Target: abi, AS: path}
	if abi == target.AArch64BE {
		host.ASFlags = []string{"-EB"}
	}
	return host
}

// assemble runs tc's assembler over src (with the flags extra) and returns
// the object's .text bytes.
func assemble(t *testing.T, tc toolchain.Toolchain, dir, src string, extra ...string) (text []byte, obj string) {
	t.Helper()
	s := filepath.Join(dir, "p.s")
	obj = filepath.Join(dir, "p.o")
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.Assemble(s, obj, extra...); err != nil {
		t.Fatalf("%v\n--- source ---\n%s", err, numbered(src))
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
		if rs.Type == elf.SHT_RELA && rs.Info < uint32(len(f.Sections)) && rs.Size > 0 &&
			(f.Sections[rs.Info] == sec || f.Sections[rs.Info].Name == FarSection) {
			t.Fatalf("%s: %s has relocations (%s, %d bytes): gen's branches should all resolve inside the section", obj, f.Sections[rs.Info].Name, rs.Name, rs.Size)
		}
	}
	return text, obj
}

// farText returns the bytes of the far section of an object GNU as made,
// or nil when it has none.
func farText(t *testing.T, obj string) []byte {
	t.Helper()
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(FarSection)
	if sec == nil {
		return nil
	}
	b, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
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
func checkSameCode(t *testing.T, p *Program, text, far []byte) {
	t.Helper()
	if len(text) < len(p.Code) || len(far) < len(p.FarCode) {
		t.Fatalf("GNU as made %d bytes of .text and %d of %s, gen %d and %d", len(text), len(far), FarSection, len(p.Code), len(p.FarCode))
	}
	for _, f := range p.Funcs {
		sec, base := text, p.Base
		if f.Far {
			sec, base = far, p.FarBase
		}
		for _, in := range f.Insns {
			at := f.Addr - base + uint64(in.Off)
			if got := sec[at : at+uint64(len(in.Bytes))]; !bytes.Equal(got, in.Bytes) {
				t.Fatalf("%s seed %d: %s+0x%x %q: gen % x, GNU as % x", p.Target.Name(), p.Seed, f.Name, in.Off, in.Text, in.Bytes, got)
			}
		}
	}
	for _, pad := range [][]byte{text[len(p.Code):], far[len(p.FarCode):]} {
		if len(pad) >= 8 || !(allBytes(pad, 0) || (p.Target == target.S390X && allPairs(pad, 0x07, 0x07))) {
			t.Fatalf("unexpected bytes after the code: % x", pad)
		}
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
					text, obj := assemble(t, as, dir, p.Assembly())
					checkSameCode(t, p, text, farText(t, obj))
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
		text, obj := assemble(t, as, dir, p.Assembly())
		checkSameCode(t, p, text, farText(t, obj))
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
			v := max(tc.SFrameVersion, 2)
			checked := map[string]bool{}
			for seed := int64(1); seed <= seeds; seed++ {
				for _, opt := range []Options{{Patterns: pats, SFrameVersion: v}, {Funcs: 14, MaxDepth: 6, Patterns: pats, SFrameVersion: v}} {
					p, err := Generate(tc.Target, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range p.Funcs[1:] {
						checked[f.Pattern] = true
					}
					tab := gasSFrame(t, tc, dir, p, p.Assembly())
					if n := fdeCount(tab); n != len(p.Funcs) {
						t.Fatalf("%s seed %d %+v: %d FDEs for %d functions", tc.Name, seed, opt, n, len(p.Funcs))
					}
					// Before SFrame v3 GNU as has no outermost-frame FRE: it
					// ignores .cfi_undefined of the RA column and describes
					// the entry stub with the CIE's rule, so only later
					// versions can agree on the stub.
					compareFDEs(t, tc.Name, p, tab, compareOpts{withStub: tc.SFrameVersion >= 3, withParts: true, pauth: true})
				}
			}
			for _, name := range pats {
				if !checked[name] && name != "empty-fde" { // empty-fde changes the stub only
					t.Errorf("no program had a %s function: pattern not compared", name)
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
// Pointer authentication is not compared: SCFI takes paciasp and autiasp
// for no-ops (it never marks the RA signed).
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
				v := max(tc.SFrameVersion, 2)
				for _, opt := range []Options{{Patterns: pats, SFrameVersion: v}, {Funcs: 16, MaxDepth: 6, Patterns: pats, SFrameVersion: v}} {
					p, err := Generate(tc.Target, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range p.Funcs[1:] {
						checked[f.Pattern] = true
					}
					// SCFI takes every function to start in the ABI's entry
					// state; a cold part starts with its owner's frame live.
					// Measured with 2.44 and 2.47.50 (x86-64, AArch64): a
					// cold part that pops what its hot part pushed stops GNU
					// as with "Internal error in
					// verify_heuristic_symmetrical_restore_reg at
					// ../../gas/scfi.c:694". Without their .type directives
					// the parts are no functions to SCFI, like the stub.
					notFuncs := []string{p.Funcs[0].Name}
					for _, f := range p.Funcs {
						if f.PartOf != "" {
							notFuncs = append(notFuncs, f.Name)
						}
					}
					src := withoutCFI(p.Assembly(), notFuncs...)
					tab := gasSFrame(t, tc, dir, p, src, "--scfi=experimental")
					if n := fdeCount(tab); n != len(p.Funcs)-len(notFuncs) {
						t.Fatalf("%s seed %d %+v: SCFI made %d FDEs for %d functions besides the stub and parts", tc.Name, seed, opt, n, len(p.Funcs)-len(notFuncs))
					}
					compareFDEs(t, tc.Name+" --scfi", p, tab, compareOpts{})
				}
			}
			for _, name := range pats {
				if !checked[name] && name != "empty-fde" { // empty-fde changes the stub only
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

// gasPatterns returns the patterns of tc's target that tc can do and its
// SFrame version can express.
func gasPatterns(t *testing.T, tc toolchain.Toolchain, scfi bool) []string {
	t.Helper()
	v := max(tc.SFrameVersion, 2) // version 1 toolchains get version 2's patterns
	var out []string
	for _, name := range Patterns(tc.Target) {
		if why, ok := gasCannot[gasCase{tc.Name, tc.Target, name, scfi}]; ok {
			t.Logf("pattern %s left out: %s", name, why)
			continue
		}
		if !isaFor(tc.Target).pattern(name).expresses(v) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// withoutPAuth returns rows with the signed-RA bits and keys cleared and
// the rows that then say the same as their predecessor dropped.
func withoutPAuth(rows []sframe.Row) []sframe.Row {
	var out []sframe.Row
	for _, r := range rows {
		r.MangledRA, r.PAuthKey = false, 0
		if n := len(out); n > 0 && sameRule(out[n-1], r) {
			continue
		}
		out = append(out, r)
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
// functions named.
func withoutCFI(src string, notFuncs ...string) string {
	var sb strings.Builder
	for _, line := range strings.SplitAfter(src, "\n") {
		l := strings.TrimSpace(line)
		if (strings.HasPrefix(l, ".cfi_") && !strings.HasPrefix(l, ".cfi_sections ")) || slices.ContainsFunc(notFuncs, func(n string) bool { return strings.HasPrefix(l, ".type "+n+",") }) {
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
	_, obj := assemble(t, tc, dir, src, append([]string{"--gsframe"}, asFlags...)...)
	l := toolchain.Link{Output: filepath.Join(dir, "p"), Objects: []string{obj}, Text: p.Base, Entry: p.Entry}
	if len(p.FarCode) > 0 {
		l.Sections = map[string]uint64{FarSection: p.FarBase}
	}
	if _, err := tc.Link(l); err != nil {
		t.Fatal(err)
	}
	tab, err := sframe.ReadELF(l.Output)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// gasRestoresFirstRow returns the rows GNU as writes for a cold part whose
// rows are rows. A cold part starts with its owner's frame live, and its
// epilogue's .cfi_restore of the FP or RA column must bring back the CIE's
// rule (DWARF 5, 6.4.2.3: "the rule assigned it by the initial_instructions
// in the CIE"). Every GNU as with --gsframe (2.40, 2.44, 2.47.50; x86-64,
// AArch64, s390x) restores the rule of the FDE's first FRE instead: its
// gas/gen-sframe.c sframe_xlate_do_restore takes xlate_ctx->first_fre as
// the CIE's state, which it is only for a function that starts in the
// entry state. Measured, x86-64, gas 2.47.50, after "pop %rbp" with
// ".cfi_def_cfa %rsp, 8; .cfi_restore %rbp" in f.cold:
//
//	gas {Start:7 CFA:rsp+8 RA:cfa-8 FP:cfa-16 (saved)}
//	gen {Start:7 CFA:rsp+8 RA:cfa-8 FP:same}
//
// The .eh_frame GNU as writes from the same directives is right; the
// SFrame FRE tells an unwinder to load the caller's FP from a slot the
// pop has released. Where that leaves the row as it was, GNU as still
// starts a new FRE at the .cfi_restore (AArch64: "ldp x29, x30, [sp, #32];
// .cfi_restore x30; .cfi_restore x29" gives a second FRE equal to the
// first). This models exactly that deviation, and nothing else, so the
// rest of the cold part's rows are still compared.
func gasRestoresFirstRow(t *isa, rows []sframe.Row) []sframe.Row {
	init := t.initialRow()
	out := slices.Clone(rows)
	for i := range out[1:] {
		r := &out[1+i]
		if r.FP == init.FP && rows[0].FP != init.FP {
			r.FP = rows[0].FP
		}
		if r.RA == init.RA && rows[0].RA != init.RA {
			r.RA = rows[0].RA
		}
	}
	return out
}

// compareOpts say which of a program's functions a toolchain's section
// describes: the entry stub, the parts (cold parts).
type compareOpts struct {
	withStub, withParts bool
	// pauth: compare the signed-RA bits and the FDE key too (SCFI takes
	// paciasp and autiasp for no-ops and never marks the RA signed).
	pauth bool
}

// compareFDEs requires the FDEs of p's functions (bar the stub's and the
// parts' unless asked for) in tab, with the same rows; every PLT stub is a
// function of its own there. Messages name both sides: producer's, and
// gen's.
func compareFDEs(t *testing.T, producer string, p *Program, tab *sframe.Table, opt compareOpts) {
	t.Helper()
	for i, want := range p.funcFDEs() {
		f := p.Funcs[i]
		if (i == 0 && !opt.withStub) || (f.PartOf != "" && !opt.withParts) {
			continue
		}
		if f.PartOf != "" {
			want.Rows = gasRestoresFirstRow(p.t, want.Rows)
		}
		got, err := tab.FindFDE(want.Start)
		if err != nil {
			t.Fatalf("%s seed %d: no FDE for 0x%x: %v", producer, p.Seed, want.Start, err)
		}
		name := f.Name
		if got.Start != want.Start || got.Size != want.Size {
			t.Fatalf("%s seed %d %s: FDE [0x%x,+%d), gen [0x%x,+%d)", producer, p.Seed, name, got.Start, got.Size, want.Start, want.Size)
		}
		if opt.pauth && got.PAuthKey != want.PAuthKey {
			t.Fatalf("%s seed %d %s: FDE pauth key %d, gen %d", producer, p.Seed, name, got.PAuthKey, want.PAuthKey)
		}
		if !opt.pauth {
			want.Rows = withoutPAuth(want.Rows)
		}
		if len(want.Rows) == 0 && got.Type != sframe.FDETypeDefault {
			// Only a DEFAULT FDE without rows says "outermost".
			t.Fatalf("%s seed %d %s: FDE without rows of type %v", producer, p.Seed, name, got.Type)
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
			if g.Start != w.Start || g.CFA != w.CFA || g.RA != w.RA || g.FP != w.FP || opt.pauth && g.MangledRA != w.MangledRA {
				t.Fatalf("%s seed %d %s row %d:\n%s %+v\ngen %+v", producer, p.Seed, name, i, producer, g, w)
			}
		}
	}
}
