package mutation_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/target"
)

// The reader is checked against what GNU objdump --sframe printed for the
// sections GNU as and ld wrote (sframe/testdata/gas-*/<target>/, linked
// executables only: objects' function starts are unrelocated).
var _ = Describe("the suite's own SFrame reader", Label("reader"), func() {
	It("reads every golden section as GNU objdump printed it, row by row", func() {
		paths, err := filepath.Glob("../../sframe/testdata/gas-*/*/*.objdump.txt")
		Expect(err).NotTo(HaveOccurred())
		var diffs []string
		fixtures, rows, v1 := 0, 0, 0
		seen := map[string]bool{} // "v<version> <target>"
		for _, p := range paths {
			if strings.HasSuffix(p, ".o.objdump.txt") {
				continue
			}
			base := strings.TrimSuffix(p, ".objdump.txt")
			text, err := os.ReadFile(p)
			Expect(err).NotTo(HaveOccurred())
			sec, err := os.ReadFile(base + ".sframe")
			Expect(err).NotTo(HaveOccurred())
			addrText, err := os.ReadFile(base + ".sframe.addr")
			Expect(err).NotTo(HaveOccurred())
			addr, err := strconv.ParseUint(strings.TrimSpace(string(addrText)), 0, 64)
			Expect(err).NotTo(HaveOccurred(), base+".sframe.addr")
			want, err := parseObjdump(string(text))
			Expect(err).NotTo(HaveOccurred(), p)
			if want.version == 1 {
				v1++ // objdump 2.40's version 1: the reader reads 2 and 3 only
				continue
			}
			t, err := readSFrame(sec, addr)
			Expect(err).NotTo(HaveOccurred(), base+".sframe")
			fixtures++
			seen[fmt.Sprintf("v%d %s", t.version, t.abi.Name())] = true
			n, d := compareWithObjdump(t, want)
			rows += n
			for _, s := range d {
				diffs = append(diffs, base+": "+s)
			}
		}
		AddReportEntry("reader vs objdump", fmt.Sprintf("%d sections, %d rows compared; %d version 1 sections skipped", fixtures, rows, v1))
		if len(diffs) > 0 {
			shown := diffs[:min(len(diffs), 12)]
			Fail(fmt.Sprintf("%d differences from objdump; the first %d:\n%s", len(diffs), len(shown), strings.Join(shown, "\n")))
		}
		// A glob that finds nothing, or half of it, must not pass quietly.
		for _, v := range []string{"v2 x86-64", "v2 aarch64", "v2 aarch64_be", "v3 x86-64", "v3 aarch64", "v3 aarch64_be", "v3 s390x"} {
			Expect(seen).To(HaveKey(v), "no golden section of %s under sframe/testdata", v)
		}
	})
})

// compareWithObjdump returns how many rows it compared and every
// difference: function starts, sizes, PC and FDE types, each row's start,
// its CFA, FP and RA rules and its signed-RA mark, and that find returns
// the row at its first byte and at its last.
func compareWithObjdump(t *frameTable, want *objdumpText) (int, []string) {
	var diffs []string
	bad := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if len(t.fns) != len(want.funcs) {
		bad("%d functions, objdump lists %d", len(t.fns), len(want.funcs))
		return 0, diffs
	}
	n := 0
	for i, wf := range want.funcs {
		f := &t.fns[i]
		at := fmt.Sprintf("func idx [%d]", i)
		if f.start != wf.pc || uint64(f.size) != wf.size || f.mask != wf.mask || f.flex != wf.flex {
			bad("%s: pc %#x size %d mask %v flex %v; objdump: pc %#x size %d mask %v flex %v",
				at, f.start, f.size, f.mask, f.flex, wf.pc, wf.size, wf.mask, wf.flex)
			continue
		}
		if len(f.rows) != len(wf.rows) {
			bad("%s: %d rows, objdump %d", at, len(f.rows), len(wf.rows))
			continue
		}
		for j, wr := range wf.rows {
			n++
			r := &f.rows[j]
			at := fmt.Sprintf("%s row %d (STARTPC %016x)", at, j, wr.startPC)
			first, wantFirst := f.start+uint64(r.start), wr.startPC // objdump prints absolute starts,
			if f.mask {
				wantFirst += f.start // and the offset in the block for MASK
			}
			if first != wantFirst {
				bad("%s: start +%#x", at, r.start)
			}
			if r.outermost != wr.undefined || r.mangled != wr.mangled {
				bad("%s: outermost %v signed RA %v; objdump: RA undefined %v [s] %v", at, r.outermost, r.mangled, wr.undefined, wr.mangled)
			}
			if !wr.undefined {
				for _, c := range []struct {
					name string
					got  rule
					text string
				}{{"CFA", r.cfa, wr.cfa}, {"FP", r.fp, wr.fp}, {"RA", r.ra, wr.ra}} {
					w, err := notation(c.text, c.name, t.abi, want.fixedRA)
					if err != nil {
						bad("%s: %s column: %v", at, c.name, err)
					} else if c.got != w {
						bad("%s: %s %v; objdump %q means %v", at, c.name, c.got, c.text, w)
					}
				}
			}
			// find: the row covers its first byte and the byte before
			// the next row (MASK: in the first and the second block). A
			// row starting at the function's end (GNU as writes one for an
			// empty function or CFI after the last instruction) covers no
			// byte at all.
			if !f.mask && uint64(r.start) >= uint64(f.size) {
				continue
			}
			end := uint64(f.size)
			if f.mask {
				end = uint64(f.rep)
			}
			if j+1 < len(f.rows) {
				end = uint64(f.rows[j+1].start)
			}
			pcs := []uint64{first, f.start + end - 1}
			if f.mask && 2*uint64(f.rep) <= uint64(f.size) {
				pcs = append(pcs, first+uint64(f.rep))
			}
			for _, pc := range pcs {
				if got, ok := t.find(pc); !ok || got != r {
					bad("%s: find(%#x) does not give this row", at, pc)
				}
			}
		}
	}
	return n, diffs
}

// notation maps one column of objdump's row text to the rule it means by
// the specification:
//
//	u U     not saved: still in its register (the AMD64 RA: at the fixed
//	        offset, which is where it always is; U is RA padding)
//	f       at the header's fixed RA offset from the CFA
//	c±N     saved at CFA±N
//	sp±N fp±N rN±N   that register plus N; in parentheses, loaded from there
//	rN      held in DWARF register N (s390x version 2)
func notation(text, column string, abi target.Target, fixedRA int64) (rule, error) {
	atFixed := rule{kind: atAddr, reg: atCFA, off: fixedRA, deref: true}
	switch {
	case text == "f":
		return atFixed, nil
	case (text == "u" || text == "U") && column == "RA" && abi == target.X86_64:
		return atFixed, nil
	case text == "u" || text == "U":
		return rule{kind: sameReg}, nil
	}
	if m := reRegOnly.FindStringSubmatch(text); m != nil {
		r, _ := strconv.Atoi(m[1])
		return rule{kind: atAddr, reg: r}, nil
	}
	m := reRuleText.FindStringSubmatch(text)
	if m == nil || (m[1] == "") != (m[4] == "") {
		return rule{}, fmt.Errorf("notation %q", text)
	}
	off, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return rule{}, err
	}
	r := rule{kind: atAddr, off: off, deref: m[1] == "("}
	switch m[2] {
	case "sp":
		r.reg = abi.SP()
	case "fp":
		r.reg = abi.FP()
	case "c":
		r.reg, r.deref = atCFA, true
	default:
		r.reg, _ = strconv.Atoi(m[2][1:])
	}
	return r, nil
}

var (
	reRegOnly  = regexp.MustCompile(`^r(\d+)$`)
	reRuleText = regexp.MustCompile(`^(\()?(sp|fp|c|r\d+)([+-]\d+)(\))?$`)
)

// objdumpText is what objdump --sframe printed for one section (binutils
// 2.40-2.47 layouts).
type objdumpText struct {
	version          int
	numFDEs, numFREs int
	fixedRA          int64 // 0 when objdump prints no "CFA fixed RA offset" line
	funcs            []objdumpFunc
}

type objdumpFunc struct {
	pc, size   uint64
	mask, flex bool // STARTPC[m]; attr letter F
	rows       []objdumpRow
}

type objdumpRow struct {
	startPC     uint64 // absolute; the offset in the block for MASK
	undefined   bool   // "RA undefined"
	mangled     bool   // [s] after the RA column
	cfa, fp, ra string
}

var (
	reFunc = regexp.MustCompile(`^\s+func idx \[(\d+)\]: pc = 0x([0-9a-f]+), size = (\d+) bytes(.*)$`)
	reRow  = regexp.MustCompile(`^\s+([0-9a-f]{16})\s+(.*?)\s*$`)
	// One column; a value wider than its column runs into the next one
	// ("sp+1048584u"), so columns are read as tokens, not by position.
	reColumn = regexp.MustCompile(`(\(?(?:sp|fp|c|r\d+)[+-]\d+\)?|r\d+|[uUf])(\[s\])?`)
)

func parseObjdump(text string) (*objdumpText, error) {
	out := &objdumpText{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		t := strings.TrimSpace(l)
		var err error
		switch {
		case strings.HasPrefix(t, "Version: SFRAME_VERSION_"):
			out.version, err = strconv.Atoi(strings.TrimPrefix(t, "Version: SFRAME_VERSION_"))
		case strings.HasPrefix(t, "Num FDEs:"):
			out.numFDEs, err = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(t, "Num FDEs:")))
		case strings.HasPrefix(t, "Num FREs:"):
			out.numFREs, err = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(t, "Num FREs:")))
		case strings.HasPrefix(t, "CFA fixed RA offset:"):
			out.fixedRA, err = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(t, "CFA fixed RA offset:")), 10, 64)
		case reFunc.MatchString(l):
			m := reFunc.FindStringSubmatch(l)
			f := objdumpFunc{flex: regexp.MustCompile(`attr = "[A-Z]*F`).MatchString(m[4])}
			f.pc, _ = strconv.ParseUint(m[2], 16, 64)
			f.size, _ = strconv.ParseUint(m[3], 10, 64)
			if idx, _ := strconv.Atoi(m[1]); idx != len(out.funcs) {
				err = fmt.Errorf("func idx %d out of order", idx)
			}
			out.funcs = append(out.funcs, f)
		case strings.HasPrefix(t, "STARTPC") && len(out.funcs) > 0:
			out.funcs[len(out.funcs)-1].mask = strings.HasPrefix(t, "STARTPC[m]")
		case reRow.MatchString(l) && len(out.funcs) > 0:
			m := reRow.FindStringSubmatch(l)
			r := objdumpRow{}
			r.startPC, _ = strconv.ParseUint(m[1], 16, 64)
			if m[2] == "RA undefined" {
				r.undefined = true
			} else {
				cols := reColumn.FindAllStringSubmatch(m[2], -1)
				var joined string
				for _, c := range cols {
					joined += c[0]
				}
				if len(cols) != 3 || joined != strings.Join(strings.Fields(m[2]), "") || cols[0][2] != "" || cols[1][2] != "" {
					err = fmt.Errorf("want three columns CFA FP RA in %q", m[2])
					break
				}
				r.cfa, r.fp, r.ra, r.mangled = cols[0][1], cols[1][1], cols[2][1], cols[2][2] != ""
			}
			f := &out.funcs[len(out.funcs)-1]
			f.rows = append(f.rows, r)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %v", line, l, err)
		}
	}
	if out.version == 0 {
		return nil, fmt.Errorf("no Version line")
	}
	// Every function and row objdump counted must have been parsed.
	rows := 0
	for _, f := range out.funcs {
		rows += len(f.rows)
	}
	if len(out.funcs) != out.numFDEs || rows != out.numFREs {
		return nil, fmt.Errorf("parsed %d functions and %d rows; objdump counts %d and %d", len(out.funcs), rows, out.numFDEs, out.numFREs)
	}
	return out, nil
}
