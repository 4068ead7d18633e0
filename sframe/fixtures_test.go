package sframe

// Golden fixtures (see testdata/README.md and testdata/regen.sh): sections
// made by real GNU as and ld (testdata/gas-*/<target>/), with the matching
// objdump --sframe text, and sections written by hand from the
// specification (testdata/handmade/*.hex) with objdump 2.47.50's reading
// of them. They check the decoder, Dump, DumpJSON, Encode, SwapByteOrder,
// Check and the unwinder against an independent producer and printer.
//
// Every test over them goes through forEachFixture, and every reading of
// objdump's text through parseObjdump.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// The fixture globs.
const (
	gasFixtures      = "testdata/gas-*/*/*.sframe" // linked and object (.o.sframe) sections
	handmadeFixtures = "testdata/handmade/*.hex"
)

// allFixtures is every fixture.
var allFixtures = []string{gasFixtures, handmadeFixtures}

// fixture is one section with what is known about it.
type fixture struct {
	path      string // the section's file
	name      string // path under testdata without the suffixes: gas-2.40/x86-64/prologues.o
	toolchain string // gas-2.40, or handmade
	abi       ABI    // the directory's target (gas), or the header's (handmade)
	order     binary.ByteOrder
	object    bool // a relocatable object's section: its function starts await relocation
	raw       []byte
	base      uint64 // the section's address: from .sframe.addr, 0 for objects and handmade
	objdump   string // objdump --sframe text from "Contents of the SFrame section" on; "" when none
	refused   string // objdump's message when it refused the section (.objdump.txt.err)
}

func (f *fixture) String() string { return f.name }

// fixtureFiles returns the files matching pattern and fails the test when
// there are none, so that a broken glob or a missing testdata cannot pass.
func fixtureFiles(tb testing.TB, pattern string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.FromSlash(pattern))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no fixture matches %s (testdata/regen.sh makes them)", pattern)
	}
	sort.Strings(files)
	return files
}

// forEachFixture runs fn in a parallel subtest for every fixture file that
// matches one of the patterns (each must match at least one).
func forEachFixture(t *testing.T, patterns []string, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	for _, p := range patterns {
		for _, file := range fixtureFiles(t, p) {
			f := loadFixture(t, file)
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				fn(t, f)
			})
		}
	}
}

// loadFixture reads a fixture and the files that go with it.
func loadFixture(tb testing.TB, file string) *fixture {
	tb.Helper()
	slash := filepath.ToSlash(file)
	f := &fixture{path: file}
	var stem string // file name without .sframe or .hex
	if hex, ok := strings.CutSuffix(slash, ".hex"); ok {
		f.toolchain, f.raw, stem = "handmade", readHexFile(tb, file), hex
		if len(f.raw) < 5 {
			tb.Fatalf("%s: %d bytes, no header", file, len(f.raw))
		}
		f.abi = ABI(f.raw[4])
		f.order = binary.ByteOrder(binary.LittleEndian)
		if binary.BigEndian.Uint16(f.raw) == Magic {
			f.order = binary.BigEndian
		}
	} else {
		stem = strings.TrimSuffix(slash, ".sframe")
		dir := filepath.Dir(file)
		abi, err := ParseTarget(filepath.Base(dir))
		if err != nil {
			tb.Fatalf("%s: directory does not name a target: %v", file, err)
		}
		f.toolchain, f.abi, f.order = filepath.Base(filepath.Dir(dir)), abi, abi.ByteOrder()
		f.raw = readFixtureFile(tb, file)
		f.object = strings.HasSuffix(stem, ".o")
		if !f.object {
			addr := strings.TrimSpace(string(readFixtureFile(tb, file+".addr")))
			if f.base, err = strconv.ParseUint(addr, 0, 64); err != nil {
				tb.Fatalf("%s.addr: %v", file, err)
			}
		}
	}
	f.name = strings.TrimPrefix(stem, "testdata/")
	if b, err := os.ReadFile(filepath.FromSlash(stem + ".objdump.txt")); err == nil {
		f.objdump = string(b)
	} else if b, err := os.ReadFile(filepath.FromSlash(stem + ".objdump.txt.err")); err == nil {
		f.refused = strings.TrimSpace(string(b))
	} else {
		tb.Fatalf("%s: neither objdump's text nor its refusal: %v", file, err)
	}
	return f
}

func readFixtureFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("fixture piece missing: %v", err)
	}
	return b
}

// needObjdump skips a test that compares with objdump on a section
// objdump refused, and returns objdump's reading otherwise.
func (f *fixture) needObjdump(t *testing.T) *objdumpSFrame {
	t.Helper()
	if f.objdump == "" {
		t.Skipf("objdump refused the section: %s", f.refused)
	}
	d, err := parseObjdump(f.objdump)
	if err != nil {
		t.Fatalf("objdump text: %v", err)
	}
	return d
}

// needLinked skips a test that needs the real function addresses.
func (f *fixture) needLinked(t *testing.T) {
	t.Helper()
	if f.object {
		t.Skip("an object's function starts await relocation")
	}
}

// decode decodes the fixture into a table with exactly one section.
func (f *fixture) decode(t *testing.T) *Table {
	t.Helper()
	tab, err := Decode(f.raw, f.base)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(tab.Sections) != 1 {
		t.Fatalf("Decode found %d sections, the toolchain wrote one", len(tab.Sections))
	}
	return tab
}

// sectionBytes is the fixture without the zero bytes gas 2.47 pads an
// s390x object's .sframe with up to a multiple of 8 bytes, when that is
// all that follows the decoded section; it fails the test on anything
// else after the section.
func (f *fixture) sectionBytes(t *testing.T, s *Section) []byte {
	t.Helper()
	if s.Offset != 0 || s.Size > len(f.raw) {
		t.Fatalf("section decoded at [%d, %d) of %d bytes", s.Offset, s.Offset+s.Size, len(f.raw))
	}
	if len(f.raw)-s.Size >= 8 {
		t.Fatalf("%d bytes after the section's %d", len(f.raw)-s.Size, s.Size)
	}
	for i, b := range f.raw[s.Size:] {
		if b != 0 {
			t.Fatalf("non-zero byte %#x at %d after the section's %d bytes", b, s.Size+i, s.Size)
		}
	}
	return f.raw[:s.Size]
}

// objdumpSFrame is what objdump --sframe prints for one section.
type objdumpSFrame struct {
	version          Version
	flags            []string // flag names, in order; nil for "NONE"
	fixedFP, fixedRA int
	numFDEs, numFREs int
	funcs            []objdumpFunc
}

type objdumpFunc struct {
	pc, size uint64
	attrs    string // v3 "attr" letters
	keyB     bool
	mask     bool
	rows     []objdumpRow
}

type objdumpRow struct {
	startPC     uint64 // the STARTPC column: absolute, or the offset in a [m] function
	cfa, fp, ra string // column text without the [s] marker
	mangled     bool
	raUndefined bool
}

// offset is a row's start from its function's start.
func (fn *objdumpFunc) offset(r *objdumpRow) uint64 {
	if fn.mask {
		return r.startPC
	}
	return r.startPC - fn.pc
}

var (
	reFuncLine = regexp.MustCompile(`^    func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes(.*)$`)
	reRowLine  = regexp.MustCompile(`^    ([0-9a-f]{16})  (.*)$`)
	reFlagName = regexp.MustCompile(`^(SFRAME_F_[A-Z_]+|\d+),?$`)
	// A column value; columns may run together when a value is wider
	// than its column ("sp+1048584u").
	reColumn = regexp.MustCompile(`\(?(?:sp|fp|c|r\d+)[+-]\d+\)?|r\d+|[uUf]`)
)

// parseObjdump reads the text objdump --sframe prints for one section, in
// the layouts of binutils 2.40 through 2.47, and checks it against its
// own header counts.
func parseObjdump(text string) (*objdumpSFrame, error) {
	out := &objdumpSFrame{}
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	var cur *objdumpFunc
	inFlags := false
	for sc.Scan() {
		line++
		l := sc.Text()
		bad := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", line, l, fmt.Sprintf(format, args...))
		}
		trimmed := strings.TrimSpace(l)
		if inFlags {
			if m := reFlagName.FindStringSubmatch(trimmed); m != nil && strings.HasPrefix(l, "           ") {
				out.flags = append(out.flags, m[1])
				continue
			}
			inFlags = false
		}
		scan := func(format string, v *int) error {
			if _, err := fmt.Sscanf(trimmed, format, v); err != nil {
				return bad("%v", err)
			}
			return nil
		}
		var err error
		switch {
		case strings.HasPrefix(trimmed, "Version: SFRAME_VERSION_"):
			v, aerr := strconv.Atoi(strings.TrimPrefix(trimmed, "Version: SFRAME_VERSION_"))
			if aerr != nil {
				return nil, bad("version: %v", aerr)
			}
			out.version = Version(v)
		case strings.HasPrefix(trimmed, "Flags: "):
			name := strings.TrimPrefix(trimmed, "Flags: ")
			if name != "NONE" {
				m := reFlagName.FindStringSubmatch(name)
				if m == nil {
					return nil, bad("unknown flag")
				}
				out.flags = append(out.flags, m[1])
				inFlags = true
			}
		case strings.HasPrefix(trimmed, "CFA fixed FP offset:"):
			err = scan("CFA fixed FP offset: %d", &out.fixedFP)
		case strings.HasPrefix(trimmed, "CFA fixed RA offset:"):
			err = scan("CFA fixed RA offset: %d", &out.fixedRA)
		case strings.HasPrefix(trimmed, "Num FDEs:"):
			err = scan("Num FDEs: %d", &out.numFDEs)
		case strings.HasPrefix(trimmed, "Num FREs:"):
			err = scan("Num FREs: %d", &out.numFREs)
		case reFuncLine.MatchString(l):
			m := reFuncLine.FindStringSubmatch(l)
			if idx, _ := strconv.Atoi(m[1]); idx != len(out.funcs) {
				return nil, bad("function index %d out of sequence", idx)
			}
			pc, perr := strconv.ParseUint(m[2], 0, 64)
			if perr != nil {
				return nil, bad("pc: %v", perr)
			}
			size, _ := strconv.ParseUint(m[3], 10, 64)
			fn := objdumpFunc{pc: pc, size: size}
			for _, part := range strings.Split(m[4], ",") {
				part = strings.TrimSpace(part)
				switch {
				case part == "":
				case part == "pauth = B key":
					fn.keyB = true
				case strings.HasPrefix(part, "attr = "):
					fn.attrs = strings.Trim(strings.TrimPrefix(part, "attr = "), `"`)
				default:
					return nil, bad("unknown function attribute %q", part)
				}
			}
			out.funcs = append(out.funcs, fn)
			cur = &out.funcs[len(out.funcs)-1]
		case strings.HasPrefix(trimmed, "STARTPC"):
			if cur == nil {
				return nil, bad("column header before any function")
			}
			cur.mask = strings.HasPrefix(trimmed, "STARTPC[m]")
		case reRowLine.MatchString(l):
			if cur == nil {
				return nil, bad("row before any function")
			}
			m := reRowLine.FindStringSubmatch(l)
			pc, perr := strconv.ParseUint(m[1], 16, 64)
			if perr != nil {
				return nil, bad("STARTPC: %v", perr)
			}
			row := objdumpRow{startPC: pc}
			rest := strings.TrimSpace(m[2])
			if rest == "RA undefined" {
				row.raUndefined = true
			} else {
				if strings.HasSuffix(rest, "[s]") {
					row.mangled = true
					rest = strings.TrimSuffix(rest, "[s]")
				}
				cols := reColumn.FindAllString(rest, -1)
				if len(cols) != 3 || strings.Join(cols, "") != strings.Join(strings.Fields(rest), "") {
					return nil, bad("want three columns CFA FP RA, read %q", cols)
				}
				row.cfa, row.fp, row.ra = cols[0], cols[1], cols[2]
			}
			cur.rows = append(cur.rows, row)
		}
		if err != nil {
			return nil, err
		}
	}
	if out.version == 0 {
		return nil, fmt.Errorf("no Version line")
	}
	if len(out.funcs) != out.numFDEs {
		return nil, fmt.Errorf("header says %d FDEs, %d listed", out.numFDEs, len(out.funcs))
	}
	n := 0
	for _, fn := range out.funcs {
		n += len(fn.rows)
	}
	if n != out.numFREs {
		return nil, fmt.Errorf("header says %d FREs, %d listed", out.numFREs, n)
	}
	return out, nil
}

// raFixed is the fixed RA offset the section has: objdump 2.40 prints no
// header line for it, and GNU as 2.40 writes -8 on AMD64.
func (d *objdumpSFrame) raFixed(abi ABI) int64 {
	if d.fixedRA == 0 && d.version == Version1 && abi == ABIAMD64LE {
		return -8
	}
	return int64(d.fixedRA)
}

var reRuleText = regexp.MustCompile(`^(\()?(sp|fp|c|r\d+)([+-]\d+)(\))?$`)

// columnRule maps one column of objdump's notation to the Rule it means,
// following the SFrame specification rather than the package's dumper:
//
//	u, U      not saved: still where it was (RA: in the link register),
//	          or for the RA at the header's fixed offset if there is one
//	f         at the header's fixed RA offset from the CFA
//	c±N       saved at CFA±N
//	rN        held in DWARF register N (s390x version 2)
//	sp±N fp±N rN±N  a base register plus N (flexible: also c±N)
//	(…)       the same, loaded from that address
func columnRule(text string, abi ABI, fixed int64) (Rule, error) {
	switch text {
	case "u", "U":
		if fixed != 0 {
			return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: fixed, Deref: true}, nil
		}
		return Rule{Kind: RuleSame}, nil
	case "f":
		return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: fixed, Deref: true}, nil
	}
	if n, ok := strings.CutPrefix(text, "r"); ok && !strings.ContainsAny(n, "+-") {
		reg, err := strconv.Atoi(n)
		if err != nil {
			return Rule{}, fmt.Errorf("register %q: %v", text, err)
		}
		return Rule{Kind: RuleExpr, Reg: reg}, nil
	}
	m := reRuleText.FindStringSubmatch(text)
	if m == nil || (m[1] == "") != (m[4] == "") {
		return Rule{}, fmt.Errorf("unknown notation %q", text)
	}
	off, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return Rule{}, fmt.Errorf("offset in %q: %v", text, err)
	}
	r := Rule{Kind: RuleExpr, Offset: off, Deref: m[1] != ""}
	switch m[2] {
	case "sp":
		r.Reg = abi.SPRegister()
	case "fp":
		r.Reg = abi.FPRegister()
	case "c":
		// Outside the flexible notation "c±N" is always a saved slot;
		// objdump prints CFA-based flexible rules without parentheses too.
		r.Reg, r.Deref = RegCFA, true
	default:
		r.Reg, _ = strconv.Atoi(m[2][1:])
	}
	return r, nil
}

// rules maps a row's columns to the rules they mean (see columnRule).
func (d *objdumpSFrame) rules(abi ABI, r *objdumpRow) (cfa, fp, ra Rule, err error) {
	if r.raUndefined {
		return Rule{Kind: RuleUndefined}, Rule{Kind: RuleSame}, Rule{Kind: RuleUndefined}, nil
	}
	if cfa, err = columnRule(r.cfa, abi, 0); err != nil {
		return cfa, fp, ra, fmt.Errorf("CFA column: %v", err)
	}
	if fp, err = columnRule(r.fp, abi, int64(d.fixedFP)); err != nil {
		return cfa, fp, ra, fmt.Errorf("FP column: %v", err)
	}
	if ra, err = columnRule(r.ra, abi, d.raFixed(abi)); err != nil {
		return cfa, fp, ra, fmt.Errorf("RA column: %v", err)
	}
	return cfa, fp, ra, nil
}

// TestFixturesDecode checks the header against the fixture's directory
// and objdump's header lines, and that the section spans the whole buffer.
func TestFixturesDecode(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		tab := f.decode(t)
		s := tab.Sections[0]
		if s.Header.ABI != f.abi || tab.ABI != f.abi {
			t.Errorf("ABI %v (table %v), want %v", s.Header.ABI, tab.ABI, f.abi)
		}
		if s.Order != f.order {
			t.Errorf("byte order %v, want %v", s.Order, f.order)
		}
		f.sectionBytes(t, s)
		if f.toolchain != "handmade" {
			sorted := s.Header.Flags&FlagFDESorted != 0
			if sorted == f.object {
				t.Errorf("sorted flag %v in a %s", sorted, map[bool]string{true: "relocatable object (gas leaves it clear)", false: "linked executable (ld sets it)"}[f.object])
			}
		}
		want := f.needObjdump(t)
		if s.Header.Version != want.version {
			t.Errorf("version %d, objdump says %d", s.Header.Version, want.version)
		}
		if int(s.Header.NumFDEs) != want.numFDEs {
			t.Errorf("%d FDEs, objdump says %d", s.Header.NumFDEs, want.numFDEs)
		}
		if int(s.Header.NumFREs) != want.numFREs {
			t.Errorf("header counts %d FREs, objdump says %d", s.Header.NumFREs, want.numFREs)
		}
		if s.Header.Version >= Version2 && (int(s.Header.CFAFixedFP) != want.fixedFP || int(s.Header.CFAFixedRA) != want.fixedRA) {
			t.Errorf("fixed offsets FP %d RA %d, objdump says %d %d", s.Header.CFAFixedFP, s.Header.CFAFixedRA, want.fixedFP, want.fixedRA)
		}
	})
}

// TestFixturesDump compares Dump with objdump --sframe, byte for byte.
// An object's function starts are unrelocated in the raw bytes while
// objdump may print them relocated, so for objects only the lines that do
// not carry addresses are compared.
func TestFixturesDump(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		f.needObjdump(t)
		var buf bytes.Buffer
		if err := Dump(&buf, f.decode(t), ".sframe"); err != nil {
			t.Fatalf("Dump: %v", err)
		}
		got, want := buf.String(), f.objdump
		if f.object {
			got, want = withoutAddresses(got), withoutAddresses(want)
		}
		if got != want {
			t.Errorf("Dump differs from objdump --sframe:\n%s", firstDifference(want, got))
		}
	})
}

// addressLine matches the address fields of a dump: the pc of a function
// and the STARTPC column.
var addressLine = regexp.MustCompile(`(?m)(pc = 0x[0-9a-f]+|^    [0-9a-f]{16})`)

func withoutAddresses(s string) string { return addressLine.ReplaceAllString(s, "<addr>") }

// firstDifference shows the first line where two texts differ.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  objdump: %q\n  ours:    %q", i+1, w, g)
		}
	}
	return "(texts differ only in line endings)"
}

// TestFixturesRowsMatchObjdumpText reads objdump's rows with the tests'
// parser and compares them with the decoded rules, so that a decoder and
// a dumper that agree on the same mistake are still caught. Lazy lookups
// must return the same rows.
func TestFixturesRowsMatchObjdumpText(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		want := f.needObjdump(t)
		s := f.decode(t).Sections[0]
		fdes := fdesOf(t, s)
		if len(want.funcs) != len(fdes) {
			t.Fatalf("%d FDEs decoded, objdump lists %d", len(fdes), len(want.funcs))
		}
		for i := range want.funcs {
			wf, fde := &want.funcs[i], &fdes[i]
			where := fmt.Sprintf("func idx [%d]", i)
			checkFunctionAttrs(t, where, f, wf, fde)
			if len(wf.rows) != len(fde.Rows) {
				t.Errorf("%s: %d rows decoded, objdump lists %d", where, len(fde.Rows), len(wf.rows))
				continue
			}
			for j := range wf.rows {
				checkRow(t, fmt.Sprintf("%s row %d", where, j), f.abi, want, wf, &wf.rows[j], fde, &fde.Rows[j])
			}
		}
	})
}

func checkFunctionAttrs(t *testing.T, where string, f *fixture, wf *objdumpFunc, fde *FDE) {
	t.Helper()
	if !f.object && fde.Start != wf.pc {
		t.Errorf("%s: start %#x, objdump says %#x", where, fde.Start, wf.pc)
	}
	if uint64(fde.Size) != wf.size {
		t.Errorf("%s: size %d, objdump says %d", where, fde.Size, wf.size)
	}
	if (fde.PCType == PCMask) != wf.mask {
		t.Errorf("%s: PC type %d, objdump's [m] marker says mask=%v", where, fde.PCType, wf.mask)
	}
	if (fde.PAuthKey == PAuthKeyB) != wf.keyB {
		t.Errorf("%s: pauth key %d, objdump says B key=%v", where, fde.PAuthKey, wf.keyB)
	}
	if fde.Signal != strings.Contains(wf.attrs, "S") {
		t.Errorf("%s: signal %v, objdump attributes %q", where, fde.Signal, wf.attrs)
	}
	if (fde.Type == FDETypeFlex) != strings.Contains(wf.attrs, "F") {
		t.Errorf("%s: FDE type %d, objdump attributes %q", where, fde.Type, wf.attrs)
	}
}

func checkRow(t *testing.T, where string, abi ABI, d *objdumpSFrame, wf *objdumpFunc, wr *objdumpRow, fde *FDE, r *Row) {
	t.Helper()
	if uint64(r.Start) != wf.offset(wr) {
		t.Errorf("%s: start +%#x, objdump says +%#x", where, r.Start, wf.offset(wr))
	}
	if r.MangledRA != wr.mangled {
		t.Errorf("%s: mangled RA %v, objdump says %v", where, r.MangledRA, wr.mangled)
	}
	if r.PAuthKey != fde.PAuthKey || r.Signal != fde.Signal {
		t.Errorf("%s: row copies key %d signal %v, FDE has %d %v", where, r.PAuthKey, r.Signal, fde.PAuthKey, fde.Signal)
	}
	cfa, fp, ra, err := d.rules(abi, wr)
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	if r.RA != ra || (!wr.raUndefined && (r.CFA != cfa || r.FP != fp)) {
		t.Errorf("%s: CFA %+v FP %+v RA %+v; objdump's %q %q %q mean %+v %+v %+v", where, r.CFA, r.FP, r.RA, wr.cfa, wr.fp, wr.ra, cfa, fp, ra)
	}
}

// TestFixturesReencode decodes and encodes again: versions 2 and 3 must
// give back the very bytes GNU as (objects) or GNU ld (executables)
// wrote, which checks Encode's encoding choices against theirs (FRE and
// data word sizes, word layouts, FDE and FRE order), and the hand-written
// ones. Version 1 is not written by Encode (TestFixturesRowsSurvive covers
// it).
func TestFixturesReencode(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		s := f.decode(t).Sections[0]
		if s.Header.Version == Version1 {
			t.Skip("version 1, which Encode does not write")
		}
		got, err := Encode(inFREOrder(t, f.raw, s), optionsOf(s))
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		diffBytes(t, got, f.sectionBytes(t, s))
	})
}

// optionsOf returns the options that describe a decoded section.
func optionsOf(s *Section) EncodeOptions {
	return EncodeOptions{
		Version:    s.Header.Version,
		ABI:        s.Header.ABI,
		Order:      s.Order,
		Base:       s.Base,
		PCRel:      s.Header.Flags&FlagFuncStartPCRel != 0,
		CFAFixedFP: s.Header.CFAFixedFP,
		CFAFixedRA: s.Header.CFAFixedRA,
		AuxHeader:  s.Header.AuxHeader,
		Unsorted:   s.Header.Flags&FlagFDESorted == 0,
	}
}

// inFREOrder returns a section's FDEs in the order their FRE data is
// stored, which is the order ld and gas added the functions in: ld sorts
// only the index, and lays the FREs of the PLT functions it makes after
// those of the input objects. Encode lays FRE data out in the order it is
// given the functions, so this order makes it write the same bytes. It
// reads each FDE's FRE offset from the raw index entry at FDE.Offset; a
// function without FREs (possible before version 3) goes before a
// function whose FREs start at the same offset.
func inFREOrder(t *testing.T, raw []byte, s *Section) []FDE {
	t.Helper()
	field := 8 // versions 1 and 2: s32 start, u32 size, u32 FRE offset
	if s.Header.Version == Version3 {
		field = 12 // version 3: s64 start, u32 size, u32 FRE offset
	}
	fdes := fdesOf(t, s)
	key := make(map[int]uint32, len(fdes))
	for _, f := range fdes {
		at := f.Offset + field
		if at < 0 || at+4 > len(raw) {
			t.Fatalf("FDE offset %d lies outside the %d-byte buffer", f.Offset, len(raw))
		}
		key[f.Offset] = s.Order.Uint32(raw[at:])
	}
	sort.SliceStable(fdes, func(i, j int) bool {
		ki, kj := key[fdes[i].Offset], key[fdes[j].Offset]
		if ki != kj {
			return ki < kj
		}
		return len(fdes[i].Rows) == 0 && len(fdes[j].Rows) > 0
	})
	return fdes
}

// TestFixturesRowsSurvive re-encodes every fixture (also version 1 ones
// and objects) as version 2 and 3 in both byte orders and checks that
// decoding gives back the same functions and rows.
func TestFixturesRowsSurvive(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		s := f.decode(t).Sections[0]
		var fdes []FDE
		for _, fde := range fdesOf(t, s) {
			if s.Header.Version == Version1 && fde.PCType == PCMask {
				// Version 1 matches mask rows differently; carrying them
				// over would change their meaning.
				t.Logf("leaving out the version 1 PCMASK function at %#x", fde.Start)
				continue
			}
			fdes = append(fdes, fde)
		}
		v3Only := slices.ContainsFunc(fdes, func(f FDE) bool { return f.Type == FDETypeFlex || f.Signal })
		for _, v := range []Version{Version2, Version3} {
			if v == Version2 && v3Only {
				continue // FLEX FDEs and signal frames exist in version 3 only
			}
			for _, order := range bothOrders {
				opt := optionsOf(s)
				opt.Version, opt.Order = v, order
				where := fmt.Sprintf("v%d %v", v, order)
				out, err := Encode(fdes, opt)
				if err != nil {
					t.Fatalf("%s: Encode: %v", where, err)
				}
				back, err := Decode(out, opt.Base)
				if err != nil {
					t.Fatalf("%s: Decode of the re-encoded section: %v", where, err)
				}
				if back.Sections[0].Order != order {
					t.Errorf("%s: decoded as %v", where, back.Sections[0].Order)
				}
				want := fdes
				if !opt.Unsorted {
					want = append([]FDE(nil), fdes...)
					sort.SliceStable(want, func(i, j int) bool { return want[i].Start < want[j].Start })
				}
				compareFDEs(t, where, fdesOf(t, back.Sections[0]), want)
			}
		}
	})
}

// TestFixturesSwapByteOrder swaps every fixture into the other byte order:
// the swapped bytes decode to the same header, functions (at the same
// offsets) and rows, and swapping back gives the original bytes.
func TestFixturesSwapByteOrder(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		a := f.decode(t).Sections[0]
		swapped, err := SwapByteOrder(f.raw)
		if err != nil {
			t.Fatalf("SwapByteOrder: %v", err)
		}
		if bytes.Equal(swapped, f.raw) {
			t.Fatal("SwapByteOrder returned the input unchanged")
		}
		other := binary.ByteOrder(binary.BigEndian)
		if f.order == binary.BigEndian {
			other = binary.LittleEndian
		}
		st, err := Decode(swapped, f.base)
		if err != nil {
			t.Fatalf("Decode of the swapped bytes: %v", err)
		}
		if len(st.Sections) != 1 || st.Sections[0].Order != other {
			t.Fatalf("swapped bytes decode to %d sections, order %v", len(st.Sections), st.Sections[0].Order)
		}
		b := st.Sections[0]
		if !headersEqual(&a.Header, &b.Header) {
			t.Errorf("swapped header %+v, original %+v", b.Header, a.Header)
		}
		fa, fb := fdesOf(t, a), fdesOf(t, b)
		compareFDEs(t, "swapped", fb, fa)
		for j := range fa {
			if j < len(fb) && fa[j].Offset != fb[j].Offset {
				t.Errorf("FDE %d at offset %d, swapped at %d", j, fa[j].Offset, fb[j].Offset)
			}
		}
		back, err := SwapByteOrder(swapped)
		if err != nil {
			t.Fatalf("SwapByteOrder back: %v", err)
		}
		if !bytes.Equal(back, f.raw) {
			t.Errorf("swapping twice: %s", byteDifference(f.raw, back))
		}
	})
}

func headersEqual(a, b *Header) bool {
	return a.Version == b.Version && a.Flags == b.Flags && a.ABI == b.ABI &&
		a.CFAFixedFP == b.CFAFixedFP && a.CFAFixedRA == b.CFAFixedRA &&
		bytes.Equal(a.AuxHeader, b.AuxHeader) && a.NumFDEs == b.NumFDEs &&
		a.NumFREs == b.NumFREs && a.FRELen == b.FRELen && a.FDEOff == b.FDEOff && a.FREOff == b.FREOff
}

// byteDifference names the first differing byte offset.
func byteDifference(want, got []byte) string {
	for i := 0; i < len(want) && i < len(got); i++ {
		if want[i] != got[i] {
			lo, hi := max(0, i-4), min(len(want), i+8)
			ghi := min(len(got), i+8)
			return fmt.Sprintf("first difference at byte offset %d (0x%x): want % x, got % x (from offset %d); lengths %d vs %d",
				i, i, want[lo:hi], got[lo:ghi], lo, len(want), len(got))
		}
	}
	return fmt.Sprintf("lengths differ: want %d bytes, got %d", len(want), len(got))
}

// TestFixturesAArch64TwinsSwap checks SwapByteOrder against GNU as itself:
// the AArch64 sources are assembled and linked both little- and
// big-endian at the same addresses, so swapping the little-endian section
// must give the big-endian one byte for byte, except the ABI byte of the
// header (AArch64 LE and BE have their own identifiers).
func TestFixturesAArch64TwinsSwap(t *testing.T) {
	t.Parallel()
	forEachFixture(t, []string{"testdata/gas-*/aarch64/*.sframe"}, func(t *testing.T, f *fixture) {
		be := readFixtureFile(t, filepath.Join(filepath.Dir(filepath.Dir(f.path)), ABIAArch64BE.Name(), filepath.Base(f.path)))
		swapped, err := SwapByteOrder(f.raw)
		if err != nil {
			t.Fatalf("SwapByteOrder: %v", err)
		}
		if len(swapped) < HeaderSize || ABI(swapped[4]) != ABIAArch64LE {
			t.Fatal("swapped header lost its ABI byte")
		}
		swapped[4] = byte(ABIAArch64BE)
		if !bytes.Equal(swapped, be) {
			t.Errorf("swapped little-endian section differs from the big-endian twin: %s", byteDifference(be, swapped))
		}
	})
}

// TestFixturesCheck runs Table.Check over the linked and hand-written
// sections. The linked ones are what ld really writes, so they pass, with
// known exceptions: ld 2.40 with -z ibtplt describes .plt.sec with the
// lazy .plt template and its second FDE runs 16 bytes into .text (see
// testdata/README.md); an FRE at a function's end (atend) is a warning,
// one per row objdump lists there. Version 3 sections also pass the strict
// checks of the Linux unwinder. The big-endian AMD64 hand-written section
// is in the wrong byte order.
func TestFixturesCheck(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		f.needLinked(t)
		tab := f.decode(t)
		want := f.needObjdump(t)
		expect := append(functionFindings(&tab.Sections[0].Header, want), foreignOrder(f.abi, f.order, 0)...)
		if f.name == "gas-2.40/x86-64/plt_ibt" && len(expect) != 1 {
			t.Errorf("objdump's listing should show ld 2.40's overlapping .plt.sec FDE, expect %v", expect)
		}
		checkFindings(t, "Check(false)", atEndFindings(t, f, want, tab.Check(false)), expect...)
		if tab.Sections[0].Header.Version == Version3 {
			checkFindings(t, "Check(true)", atEndFindings(t, f, want, tab.Check(true)), expect...)
		}
		fdes := fdesOf(t, tab.Sections[0])
		for i := range fdes {
			fde := &fdes[i]
			// Version 1 FDEs have no repetition size field.
			if tab.Sections[0].Header.Version != Version1 && fde.PCType == PCMask && (fde.RepSize == 0 || fde.Size%uint32(fde.RepSize) != 0) {
				t.Errorf("func idx [%d]: PCMASK over %d bytes with repetition size %d", i, fde.Size, fde.RepSize)
			}
		}
	})
}

// functionFindings lists the findings about function ranges that
// objdump's listing of a sorted section calls for: an FDE with the start of
// the one before it (ErrDuplicateFDE), a function of non-zero size that
// starts before an earlier one ends (ErrOverlappingFDEs), each at the FDE's
// offset, which h's FDE table gives.
func functionFindings(h *Header, d *objdumpSFrame) []finding {
	size := map[Version]int{Version1: fdeSizeV1, Version2: fdeSizeV2, Version3: fdeSizeV3}[h.Version]
	at := func(i int) int { return HeaderSize + len(h.AuxHeader) + int(h.FDEOff) + i*size }
	var out []finding
	var end uint64 // the furthest end so far
	for i, fn := range d.funcs {
		if i > 0 && fn.pc == d.funcs[i-1].pc {
			out = append(out, finding{ErrDuplicateFDE, at(i)})
		}
		if fn.size == 0 {
			continue
		}
		if fn.pc < end {
			out = append(out, finding{ErrOverlappingFDEs, at(i)})
		}
		end = max(end, fn.pc+fn.size)
	}
	return out
}

// atEndFindings takes out of errs the ErrFREStartAtEnd findings that
// objdump's rows call for, one per row whose start is its function's end,
// and returns the rest. Each finding's offset must hold, in the section's
// byte order, an FRE start field equal to the function's size, of the
// width GNU as picks for that size.
func atEndFindings(t *testing.T, f *fixture, want *objdumpSFrame, errs []error) []error {
	t.Helper()
	var sizes []uint64 // of the functions with a row at the end, in order
	for _, fn := range want.funcs {
		for _, r := range fn.rows {
			if !fn.mask && r.startPC == fn.pc+fn.size {
				sizes = append(sizes, fn.size)
			}
		}
	}
	var rest []error
	k := 0
	for _, e := range errs {
		var fe *FormatError
		if !errors.As(e, &fe) || fe.Err != ErrFREStartAtEnd {
			rest = append(rest, e)
			continue
		}
		if k == len(sizes) {
			t.Errorf("%v, but objdump lists no more rows at a function's end", e)
			continue
		}
		size := sizes[k]
		k++
		var got uint64
		switch {
		case size < 0x100:
			got = uint64(f.raw[fe.Off])
		case size < 0x10000:
			got = uint64(f.order.Uint16(f.raw[fe.Off:]))
		default:
			got = uint64(f.order.Uint32(f.raw[fe.Off:]))
		}
		if got != size {
			t.Errorf("%v: the start field there holds %#x, not the function size %#x", e, got, size)
		}
	}
	if k != len(sizes) {
		t.Errorf("objdump lists %d rows at a function's end, Check reports %d", len(sizes), k)
	}
	return rest
}

// TestFixturesFindRow looks up every row objdump lists in a linked
// section, at its first byte and at the byte before the next row (or the
// function's end), and expects that row back, from Table.FindRow and from
// the Func's own FindRow. PCMASK rows are also looked up one repetition
// further on. A row at the function's end covers no PC.
func TestFixturesFindRow(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		f.needLinked(t)
		if f.name == "gas-2.40/x86-64/plt_ibt" {
			t.Skip("overlapping functions (see TestFixturesCheck)")
		}
		want := f.needObjdump(t)
		tab := f.decode(t)
		fdes := fdesOf(t, tab.Sections[0])
		for i := range want.funcs {
			wf, fde := &want.funcs[i], &fdes[i]
			for j := range wf.rows {
				first := wf.pc + wf.offset(&wf.rows[j])
				if first == wf.pc+wf.size {
					if gf, row, err := tab.FindRow(first); err == nil && gf.Start == wf.pc && gf.Size == uint32(wf.size) {
						t.Errorf("FindRow(%#x), the end of func idx [%d], = %+v in that function", first, i, row)
					}
					continue
				}
				last := wf.pc + wf.size - 1
				if j+1 < len(wf.rows) {
					last = min(last, wf.pc+wf.offset(&wf.rows[j+1])-1)
				}
				pcs := []uint64{first, last}
				if wf.mask && fde.RepSize != 0 && first+uint64(fde.RepSize) < wf.pc+wf.size {
					pcs = append(pcs, first+uint64(fde.RepSize))
				}
				for _, pc := range pcs {
					gf, row, err := tab.FindRow(pc)
					if err != nil {
						t.Errorf("FindRow(%#x) (func idx [%d] row %d): %v", pc, i, j, err)
						continue
					}
					if gf.Start != wf.pc || row != fde.Rows[j] {
						t.Errorf("FindRow(%#x) = function %#x row %+v, want function %#x row %d %+v", pc, gf.Start, row, wf.pc, j, fde.Rows[j])
					}
					if frow, err := gf.FindRow(pc); err != nil || frow != row {
						t.Errorf("Func.FindRow(%#x) = %+v, %v; Table.FindRow gave %+v", pc, frow, err, row)
					}
				}
			}
		}
	})
}

// TestFixturesAtEnd checks the atend objects of every toolchain, also
// those objdump 2.40 and 2.44 abort on (atend.o.objdump.txt.err): the
// source (testdata/src/x86-64/atend.s) has tail, 3 bytes with CFI changes
// after its first byte and after its last (the ret), and empty, 0 bytes.
// Both functions get an FRE at their end, which decodes, is never the
// row a lookup returns, and is reported by Check.
func TestFixturesAtEnd(t *testing.T) {
	t.Parallel()
	forEachFixture(t, []string{"testdata/gas-*/x86-64/atend.o.sframe"}, func(t *testing.T, f *fixture) {
		tab := f.decode(t)
		fdes := fdesOf(t, tab.Sections[0])
		if len(fdes) != 2 {
			t.Fatalf("%d FDEs, want tail and empty", len(fdes))
		}
		for i, w := range []struct {
			size   uint32
			starts []uint32
		}{{3, []uint32{0, 1, 3}}, {0, []uint32{0}}} {
			var starts []uint32
			for _, r := range fdes[i].Rows {
				starts = append(starts, r.Start)
			}
			if fdes[i].Size != w.size || !slices.Equal(starts, w.starts) {
				t.Errorf("FDE %d: size %d, rows at %v; want %d, %v", i, fdes[i].Size, starts, w.size, w.starts)
			}
		}
		tail := tab.Sections[0].Func(0)
		if row, err := tail.FindRow(tail.Start + 2); err != nil || row.Start != 1 {
			t.Errorf("tail's last byte: row %+v, %v; want the row at 1", row, err)
		}
		n := 0
		for _, e := range tab.Check(false) {
			if errors.Is(e, ErrFREStartAtEnd) {
				n++
			}
		}
		if n != 2 {
			t.Errorf("Check(false) = %v; want two ErrFREStartAtEnd", tab.Check(false))
		}
	})
}

// TestFixturesDumpJSONMatchesObjdump reads DumpJSON's output back and
// objdump's text with the tests' parser, and compares the two structures
// field by field and row by row: header, flags, functions with their
// attributes, rows in order with every column. The JSON text uses the
// version 3 notation, so version 3 sections only; objects print their
// function addresses unrelocated, so row starts are compared as offsets.
func TestFixturesDumpJSONMatchesObjdump(t *testing.T) {
	t.Parallel()
	var checked atomic.Int32
	t.Cleanup(func() {
		if checked.Load() == 0 {
			t.Error("no version 3 fixture compared")
		}
	})
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		want := f.needObjdump(t)
		if want.version != Version3 {
			t.Skipf("version %d: objdump's notation is not the JSON's", want.version)
		}
		checked.Add(1)
		var b bytes.Buffer
		if err := DumpJSON(&b, f.decode(t)); err != nil {
			t.Fatal(err)
		}
		var doc jsonDump
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Sections) != 1 {
			t.Fatalf("%d sections in the JSON", len(doc.Sections))
		}
		got, err := objdumpOfJSON(&doc.Sections[0])
		if err != nil {
			t.Fatal(err)
		}
		compareObjdump(t, got, want, f.object)
	})
}

// objdumpOfJSON rebuilds from one section of DumpJSON's output what
// objdump would print for it, in the structure parseObjdump returns.
func objdumpOfJSON(s *jsonSection) (*objdumpSFrame, error) {
	d := &objdumpSFrame{
		version: Version(s.Version),
		fixedFP: s.CFAFixedFP, fixedRA: s.CFAFixedRA,
		numFDEs: int(s.NumFDEs), numFREs: int(s.NumFREs),
	}
	for _, fl := range s.Flags {
		d.flags = append(d.flags, fl)
	}
	for i, jf := range s.Functions {
		if jf.Index != i {
			return nil, fmt.Errorf("function %d has index %d", i, jf.Index)
		}
		pc, err1 := strconv.ParseUint(jf.Start, 0, 64)
		end, err2 := strconv.ParseUint(jf.End, 0, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("function %d: %v", i, err)
		}
		if end-pc != uint64(jf.Size) {
			return nil, fmt.Errorf("function %d: start %s, end %s, size %d", i, jf.Start, jf.End, jf.Size)
		}
		fn := objdumpFunc{pc: pc, size: uint64(jf.Size), mask: jf.PCType == "mask", keyB: jf.PAuthKey == "B"}
		if jf.Signal {
			fn.attrs += "S"
		}
		if jf.Type == "flex" {
			fn.attrs += "F"
		}
		for _, jr := range jf.Rows {
			start, err := strconv.ParseUint(jr.StartPC, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("function %d: start_pc %q: %v", i, jr.StartPC, err)
			}
			r := objdumpRow{startPC: start, mangled: jr.MangledRA}
			if jr.RA.Rule == "undefined" {
				r.raUndefined, r.mangled = true, false
			} else {
				r.cfa, r.fp, r.ra = jr.CFA.Text, jr.FP.Text, jr.RA.Text
			}
			fn.rows = append(fn.rows, r)
		}
		d.funcs = append(d.funcs, fn)
	}
	return d, nil
}

// compareObjdump compares two readings of a section, reporting every
// difference; with object, function addresses are left out (row starts
// are compared as offsets).
func compareObjdump(t *testing.T, got, want *objdumpSFrame, object bool) {
	t.Helper()
	if got.version != want.version || !slices.Equal(got.flags, want.flags) || got.fixedFP != want.fixedFP ||
		got.fixedRA != want.fixedRA || got.numFDEs != want.numFDEs || got.numFREs != want.numFREs {
		t.Errorf("header: got version %d flags %v fixed %d/%d, %d FDEs %d FREs; objdump: version %d flags %v fixed %d/%d, %d FDEs %d FREs",
			got.version, got.flags, got.fixedFP, got.fixedRA, got.numFDEs, got.numFREs,
			want.version, want.flags, want.fixedFP, want.fixedRA, want.numFDEs, want.numFREs)
	}
	if len(got.funcs) != len(want.funcs) {
		t.Fatalf("%d functions, objdump lists %d", len(got.funcs), len(want.funcs))
	}
	for i := range want.funcs {
		g, w := &got.funcs[i], &want.funcs[i]
		if (!object && g.pc != w.pc) || g.size != w.size || g.attrs != w.attrs || g.keyB != w.keyB || g.mask != w.mask {
			t.Errorf("func idx [%d]: got pc %#x size %d attr %q B key %v mask %v; objdump: %#x %d %q %v %v",
				i, g.pc, g.size, g.attrs, g.keyB, g.mask, w.pc, w.size, w.attrs, w.keyB, w.mask)
		}
		if len(g.rows) != len(w.rows) {
			t.Errorf("func idx [%d]: %d rows, objdump lists %d", i, len(g.rows), len(w.rows))
			continue
		}
		for j := range w.rows {
			gr, wr := g.rows[j], w.rows[j]
			gr.startPC, wr.startPC = g.offset(&gr), w.offset(&wr)
			if gr != wr {
				t.Errorf("func idx [%d] row %d: got %+v; objdump %+v", i, j, gr, wr)
			}
		}
	}
}

// TestFixturesStepMatchesObjdump unwinds one step at the start of every
// row of every linked fixture, from registers and memory of known values,
// and checks the CFA and the caller's PC, SP and FP against what
// objdump's text for that row says they must be: the rules columnRule
// reads from it, applied here.
func TestFixturesStepMatchesObjdump(t *testing.T) {
	t.Parallel()
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		f.needLinked(t)
		want := f.needObjdump(t)
		tab := f.decode(t)
		abi := f.abi
		// Distinct register values; SP low enough, FP and others above it
		// so that every CFA lies above SP.
		const sp = 0x7000_0000
		regs := &RegisterFile{}
		for r := 0; r < 32; r++ {
			regs.Set(r, sp+0x1000*uint64(r+1))
		}
		regs.Set(abi.SPRegister(), sp)
		mem := readableMem{hashMem(0x5eed)}
		read := func(a uint64) uint64 {
			v, _ := mem.ReadWord(a)
			return v
		}
		// eval applies a rule to this frame, as the specification defines
		// it (the test's own evaluator, not the Unwinder's).
		eval := func(r Rule, cfa uint64, same uint64) uint64 {
			if r.Kind != RuleExpr {
				return same
			}
			base := cfa
			if r.Reg != RegCFA {
				base = regs.Regs[r.Reg]
			}
			if r.Deref {
				return read(base + uint64(r.Offset))
			}
			return base + uint64(r.Offset)
		}
		rows := 0
		for i := range want.funcs {
			wf := &want.funcs[i]
			signal := strings.Contains(wf.attrs, "S")
			for j := range wf.rows {
				wr := &wf.rows[j]
				pc := wf.pc + wf.offset(wr)
				if pc == wf.pc+wf.size {
					continue // a row at the function's end covers no PC
				}
				where := fmt.Sprintf("func idx [%d] row %d at %#x", i, j, pc)
				regs.PC = pc
				fr := Frame{PC: pc, SP: sp, FP: regs.Regs[abi.FPRegister()]}
				gotPC, gotSP, gotFP, err := (&Unwinder{Table: tab}).Step(&fr, 0, regs, mem)
				rows++
				switch {
				case signal:
					// The caller is the context in the signal frame at SP:
					// the PC, SP and FP slots of glibc's ucontext_t as the
					// kernel's rt_sigframe places it.
					off := map[ABI][3]uint64{ABIAMD64LE: {168, 160, 120}, ABIAArch64LE: {568, 560, 544},
						ABIAArch64BE: {568, 560, 544}, ABIS390XBE: {344, 472, 440}}[abi]
					if err != nil || !fr.Signal || gotPC != read(sp+off[0]) || gotSP != read(sp+off[1]) || gotFP != read(sp+off[2]) {
						t.Errorf("%s: in a signal trampoline, got pc %#x sp %#x fp %#x signal %v, error %v", where, gotPC, gotSP, gotFP, fr.Signal, err)
					}
					continue
				case wr.raUndefined:
					if err != nil || !fr.Outermost {
						t.Errorf("%s: got outermost %v, err %v", where, fr.Outermost, err)
					}
					continue
				}
				cfaRule, fpRule, raRule, rerr := want.rules(abi, wr)
				if rerr != nil {
					t.Fatalf("%s: %v", where, rerr)
				}
				cfa := eval(cfaRule, 0, 0)
				wantSP := cfa
				if abi == ABIS390XBE {
					wantSP = cfa - 160
				}
				lr := linkRegister(abi)
				switch {
				case wantSP < sp:
					// The caller's stack would lie below this frame's.
					if !errors.Is(err, ErrCFANotAbove) {
						t.Errorf("%s: caller SP %#x below SP %#x, got error %v", where, wantSP, uint64(sp), err)
					}
					continue
				case raRule.Kind == RuleSame && lr < 0:
					// An RA "still where it was" without a link register.
					if !errors.Is(err, ErrBadRule) {
						t.Errorf("%s: RA in no register on %v, got error %v", where, abi, err)
					}
					continue
				}
				wantFP := eval(fpRule, cfa, fr.FP)
				wantPC := eval(raRule, cfa, regs.Regs[max(lr, 0)])
				if wr.mangled {
					wantPC &= 1<<48 - 1
				}
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if fr.CFA != cfa || gotPC != wantPC || gotSP != wantSP || gotFP != wantFP {
					t.Errorf("%s (%q %q %q): got CFA %#x, caller pc %#x sp %#x fp %#x; want %#x, %#x %#x %#x",
						where, wr.cfa, wr.fp, wr.ra, fr.CFA, gotPC, gotSP, gotFP, cfa, wantPC, wantSP, wantFP)
				}
			}
		}
		if rows == 0 {
			t.Error("no rows stepped")
		}
	})
}
