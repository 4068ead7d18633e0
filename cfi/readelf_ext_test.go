package cfi_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// fixture is one object file whose CFI is compared with readelf's.
type fixture struct {
	name    string
	tc      toolchain.Toolchain
	obj     string
	readelf string
}

// fixtures assembles every golden source of the sframe package (and
// check/testdata/frames.c compiled by the host's and the cross gccs) with the
// newest provisioned gas of each target: one fixture iterator, a subtest
// per file.
func fixtures(t *testing.T) []fixture {
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no GNU toolchain: %v", err)
	}
	newest := map[target.Target]toolchain.Toolchain{}
	for _, tc := range all {
		if tc.Readelf != "" {
			newest[tc.Target] = tc // All lists versions in increasing order
		}
	}
	dir := t.TempDir()
	var out []fixture
	for _, tg := range target.All {
		tc, ok := newest[tg]
		if !ok {
			testenv.Missing(t, testenv.Binutils, "no toolchain for %s", tg)
			continue
		}
		srcTarget := tg.Name()
		if tg == target.AArch64BE {
			srcTarget = "aarch64"
		}
		srcs, _ := filepath.Glob(filepath.Join("..", "sframe", "testdata", "src", srcTarget, "*.s"))
		if s := compileC(t, tg, dir); s != "" {
			srcs = append(srcs, s)
		}
		for _, src := range srcs {
			base := strings.TrimSuffix(filepath.Base(src), ".s")
			obj := filepath.Join(dir, tg.Name()+"-"+base+".o")
			in, _, err := tc.ForAssembler(src) // a newer gcc's build attributes, for an older gas
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tc.Assemble(in, obj); err != nil {
				continue // sources meant to fail (the SUMMARY of the fixtures says which)
			}
			out = append(out, fixture{name: tg.Name() + "/" + base, tc: tc, obj: obj, readelf: tc.Readelf})
		}
	}
	return out
}

// compileC compiles check/testdata/frames.c (the C file check's tests
// compile too) to assembly with the gcc for tg.
func compileC(t *testing.T, tg target.Target, dir string) string {
	var cc []string
	switch tg {
	case target.X86_64:
		cc = []string{"gcc"}
	case target.AArch64:
		cc = []string{"aarch64-linux-gnu-gcc", "-mbranch-protection=pac-ret+leaf"}
	case target.AArch64BE:
		cc = []string{"aarch64-linux-gnu-gcc", "-mbig-endian"}
	case target.S390X:
		cc = []string{"s390x-linux-gnu-gcc"}
	}
	path := testenv.LookPath(t, cc[0], testenv.HostPackages)
	if path == "" {
		return ""
	}
	out := filepath.Join(dir, tg.Name()+"-frames.s")
	args := append(cc[1:], "-O2", "-fasynchronous-unwind-tables", "-S", "-o", out, filepath.Join("..", "check", "testdata", "frames.c"))
	if b, err := exec.Command(path, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", path, args, err, b)
	}
	return out
}

func TestAgainstReadelf(t *testing.T) {
	for _, fx := range fixtures(t) {
		fx := fx
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			compareReadelf(t, fx)
		})
	}
}

var (
	fdeLine = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)$`)
	rowLine = regexp.MustCompile(`^([0-9a-f]{16}) (.*)$`)
	cieLine = regexp.MustCompile(`^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ CIE`)
	// readelf prints a register rule as "r3 (rbx)": keep the number.
	regRule = regexp.MustCompile(`\b(r[0-9]+) \([a-z0-9]+\)`)
)

// compareReadelf checks every row readelf --debug-dump=frames-interp
// prints against ours: CFA, FP and RA columns, at the same locations
// relative to each FDE's start.
func compareReadelf(t *testing.T, fx fixture) {
	f, err := elf.Open(fx.obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	if sec == nil {
		t.Skip("no .eh_frame (a source without CFI)")
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := cfi.Parse(data, 0, f.ByteOrder, true)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	byOff := map[int]*cfi.FDE{}
	for _, fde := range tab.FDEs {
		byOff[fde.Offset] = fde
	}
	args := []string{"--debug-dump=frames-interp", fx.obj}
	outb, err := exec.Command(fx.readelf, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", fx.readelf, args, err)
	}
	tg := fx.tc.Target
	fpName, raName := regName(tg, tg.FP()), "ra"
	aarch64 := tg.IsAArch64()
	var (
		fde     *cfi.FDE
		rows    []cfi.Row
		cols    []string
		pcStart uint64
		checked int
		fdes    int
	)
	for _, line := range strings.Split(string(outb), "\n") {
		line = strings.TrimRight(line, " ")
		if m := fdeLine.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			pcStart, _ = strconv.ParseUint(m[2], 16, 64)
			fde = byOff[int(off)]
			if fde == nil {
				t.Errorf("readelf has an FDE at offset 0x%x, Parse does not", off)
				continue
			}
			fdes++
			if rows, err = fde.Rows([]uint64{uint64(tg.FP()), uint64(tg.RA())}, aarch64, f.ByteOrder); err != nil {
				t.Errorf("FDE at 0x%x: Rows: %v", off, err)
			}
			cols = nil
			continue
		}
		if cieLine.MatchString(line) {
			fde, cols = nil, nil
			continue
		}
		line = regRule.ReplaceAllString(line, "$1")
		if strings.HasPrefix(strings.TrimSpace(line), "LOC") {
			cols = strings.Fields(line)
			continue
		}
		m := rowLine.FindStringSubmatch(line)
		if m == nil || fde == nil || cols == nil {
			continue
		}
		loc, _ := strconv.ParseUint(m[1], 16, 64)
		vals := strings.Fields(m[2])
		row, ok := cfi.At(rows, fde.Start+(loc-pcStart))
		if !ok {
			t.Errorf("FDE 0x%x +%d: readelf has a row, Rows none", fde.Offset, loc-pcStart)
			continue
		}
		want := map[string]string{}
		for i, v := range vals {
			if i+1 < len(cols) {
				want[cols[i+1]] = v
			}
		}
		got := map[string]string{"CFA": cfaText(tg, row.CFA), fpName: ruleText(tg, row.Regs[0]), raName: ruleText(tg, row.Regs[1])}
		for col, g := range got {
			w, ok := want[col]
			if !ok {
				w = "u" // readelf prints no column for a register never mentioned
			}
			if w != g {
				t.Errorf("FDE 0x%x +%d %s: readelf %q, ours %q\n%s", fde.Offset, loc-pcStart, col, w, g, line)
			}
		}
		checked++
	}
	if fdes != len(tab.FDEs) {
		t.Errorf("readelf printed %d FDEs, Parse found %d", fdes, len(tab.FDEs))
	}
	if checked == 0 && len(tab.FDEs) > 0 && bytes.Contains(outb, []byte("FDE")) && rowsPrinted(outb) {
		t.Errorf("no row compared: readelf printed\n%s", bytes.TrimSpace(outb))
	}
	t.Logf("%d FDEs, %d rows compared with %s", fdes, checked, fx.readelf)
}

// regName is readelf's name of a DWARF register.
func regName(tg target.Target, r int) string {
	switch tg {
	case target.X86_64:
		names := []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"}
		if r < len(names) {
			return names[r]
		}
		if r == 16 {
			return "rip"
		}
		return fmt.Sprintf("r%d", r)
	case target.AArch64, target.AArch64BE:
		if r == 31 {
			return "sp"
		}
		return fmt.Sprintf("x%d", r)
	}
	return fmt.Sprintf("r%d", r)
}

func cfaText(tg target.Target, r cfi.Rule) string {
	switch r.Kind {
	case cfi.RegOffset:
		return fmt.Sprintf("%s%+d", regName(tg, int(r.Reg)), r.Offset)
	case cfi.CFAExpression:
		return "exp"
	}
	return "?"
}

// ruleText is readelf's notation of a register rule.
func ruleText(tg target.Target, r cfi.Rule) string {
	switch r.Kind {
	case cfi.Unspecified, cfi.Undefined:
		return "u"
	case cfi.SameValue:
		return "s"
	case cfi.Offset:
		return fmt.Sprintf("c%+d", r.Offset)
	case cfi.ValOffset:
		return fmt.Sprintf("v%+d", r.Offset)
	case cfi.Register:
		return fmt.Sprintf("r%d", r.Reg)
	case cfi.Expression:
		return "exp"
	case cfi.ValExpression:
		return "vexp"
	}
	return "?"
}

// rowsPrinted says readelf printed a row under some FDE (an FDE without
// instructions gets none).
func rowsPrinted(out []byte) bool {
	inFDE := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case fdeLine.MatchString(strings.TrimRight(line, " ")):
			inFDE = true
		case cieLine.MatchString(line):
			inFDE = false
		case inFDE && rowLine.MatchString(line):
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
