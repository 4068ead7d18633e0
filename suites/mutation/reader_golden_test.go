package mutation_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/sframe"
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
			abi, err := target.Parse(filepath.Base(filepath.Dir(p)))
			Expect(err).NotTo(HaveOccurred(), p)
			// The production parser gives the text's structure; the
			// suite reads each column's notation itself (notation).
			want, err := dumper.ParseGNU(string(text), sframe.ABI(abi))
			Expect(err).NotTo(HaveOccurred(), p)
			if want.Version == 1 {
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
func compareWithObjdump(t *frameTable, want *dumper.Listing) (int, []string) {
	var diffs []string
	bad := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if len(t.fns) != len(want.Funcs) {
		bad("%d functions, objdump lists %d", len(t.fns), len(want.Funcs))
		return 0, diffs
	}
	n := 0
	for i, wf := range want.Funcs {
		f := &t.fns[i]
		at := fmt.Sprintf("func idx [%d]", i)
		wmask, wflex := wf.PCType == sframe.PCMask, strings.Contains(wf.Attrs, "F")
		if f.start != wf.Start || f.size != wf.Size || f.mask != wmask || f.flex != wflex {
			bad("%s: pc %#x size %d mask %v flex %v; objdump: pc %#x size %d mask %v flex %v",
				at, f.start, f.size, f.mask, f.flex, wf.Start, wf.Size, wmask, wflex)
			continue
		}
		if len(f.rows) != len(wf.Rows) {
			bad("%s: %d rows, objdump %d", at, len(f.rows), len(wf.Rows))
			continue
		}
		for j, wr := range wf.Rows {
			n++
			r := &f.rows[j]
			at := fmt.Sprintf("%s row %d (STARTPC %016x)", at, j, wr.StartPC)
			first, wantFirst := f.start+uint64(r.start), wr.StartPC // objdump prints absolute starts,
			if f.mask {
				wantFirst += f.start // and the offset in the block for MASK
			}
			if first != wantFirst {
				bad("%s: start +%#x", at, r.start)
			}
			if r.outermost != wr.Outermost || r.mangled != wr.Mangled {
				bad("%s: outermost %v signed RA %v; objdump: RA undefined %v [s] %v", at, r.outermost, r.mangled, wr.Outermost, wr.Mangled)
			}
			if !wr.Outermost {
				for _, c := range []struct {
					name string
					got  rule
					text string
				}{{"CFA", r.cfa, wr.Text[0]}, {"FP", r.fp, wr.Text[1]}, {"RA", r.ra, wr.Text[2]}} {
					w, err := notation(c.text, c.name, t.abi, int64(want.CFAFixedRA))
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
	off, err := strconv.ParseInt(strings.Replace(m[3], "+-", "-", 1), 10, 64)
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
	reRuleText = regexp.MustCompile(`^(\()?(sp|fp|c|r\d+)(\+-?\d+|-\d+)(\))?$`)
)
