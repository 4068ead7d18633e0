package dumper

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/sframe"
)

// golden is one section of sframe/testdata with the text a real dumper
// printed for it: the GNU as and ld fixtures (objdump of the same
// binutils release) and the hand-written ones (objdump 2.47.50).
type golden struct {
	name   string // path under sframe/testdata without suffixes
	abi    sframe.ABI
	raw    []byte
	base   uint64
	object bool   // a relocatable object's section: starts unrelocated
	text   string // objdump --sframe from "Contents of the SFrame section" on
}

const sframeTestdata = "../sframe/testdata"

// goldenSections loads every fixture objdump printed (not the ones it
// refused, .objdump.txt.err), failing when there are none.
func goldenSections(tb testing.TB) []golden {
	tb.Helper()
	var out []golden
	for _, pattern := range []string{"gas-*/*/*.objdump.txt", "handmade/*.objdump.txt"} {
		files, err := filepath.Glob(filepath.Join(sframeTestdata, pattern))
		if err != nil || len(files) == 0 {
			tb.Fatalf("no fixtures match %s under %s: %v", pattern, sframeTestdata, err)
		}
		sort.Strings(files)
		for _, f := range files {
			out = append(out, loadGolden(tb, f))
		}
	}
	return out
}

func loadGolden(tb testing.TB, file string) golden {
	tb.Helper()
	stem := strings.TrimSuffix(file, ".objdump.txt")
	rel, _ := filepath.Rel(sframeTestdata, stem)
	g := golden{name: filepath.ToSlash(rel)}
	text, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	g.text = string(text)
	if strings.HasPrefix(g.name, "handmade/") {
		g.raw = readHex(tb, stem+".hex")
		g.abi = sframe.ABI(g.raw[4])
		return g
	}
	if g.abi, err = sframe.ParseTarget(filepath.Base(filepath.Dir(file))); err != nil {
		tb.Fatal(err)
	}
	if g.raw, err = os.ReadFile(stem + ".sframe"); err != nil {
		tb.Fatal(err)
	}
	g.object = strings.HasSuffix(stem, ".o")
	if !g.object {
		a, err := os.ReadFile(stem + ".sframe.addr")
		if err != nil {
			tb.Fatal(err)
		}
		if g.base, err = strconv.ParseUint(strings.TrimSpace(string(a)), 0, 64); err != nil {
			tb.Fatal(err)
		}
	}
	return g
}

// readHex reads a hand-written fixture: hex bytes, "#" comments.
func readHex(tb testing.TB, path string) []byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var digits strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil || len(b) < sframe.HeaderSize {
		tb.Fatalf("%s: %d bytes, %v", path, len(b), err)
	}
	return b
}

// decodeFDEs is what the sframe package reads from the section itself.
func (g *golden) decodeFDEs(tb testing.TB) (*sframe.Section, []sframe.FDE) {
	tb.Helper()
	t, err := sframe.Decode(g.raw, g.base)
	if err != nil {
		tb.Fatalf("sframe.Decode: %v", err)
	}
	fdes, err := t.Sections[0].FDEs()
	if err != nil {
		tb.Fatalf("FDEs: %v", err)
	}
	return t.Sections[0], fdes
}

// compareFDEs reports every way the rows a dumper printed differ from
// the rows the sframe package decodes: function attributes, and each
// row's start, signed-RA mark and rules. With object, function starts are
// not compared (an object's are unrelocated in the bytes). It returns the
// number of rows compared.
func compareFDEs(got, want []sframe.FDE, object bool) (rows int, diffs []string) {
	bad := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if len(got) != len(want) {
		bad("%d functions, the section has %d", len(got), len(want))
		return 0, diffs
	}
	for i := range want {
		g, w := &got[i], &want[i]
		if (!object && g.Start != w.Start) || g.Size != w.Size || g.PCType != w.PCType || g.PAuthKey != w.PAuthKey ||
			g.Signal != w.Signal || g.Type != w.Type || (w.PCType == sframe.PCMask && g.RepSize != w.RepSize) {
			bad("func idx [%d]: start %#x size %d pc type %d rep %d key %d signal %v type %d; the section: %#x %d %d %d %d %v %d",
				i, g.Start, g.Size, g.PCType, g.RepSize, g.PAuthKey, g.Signal, g.Type,
				w.Start, w.Size, w.PCType, w.RepSize, w.PAuthKey, w.Signal, w.Type)
		}
		if len(g.Rows) != len(w.Rows) {
			bad("func idx [%d]: %d rows, the section has %d", i, len(g.Rows), len(w.Rows))
			continue
		}
		for j := range w.Rows {
			rows++
			gr, wr := g.Rows[j], w.Rows[j]
			if wr.RA.Kind == sframe.RuleUndefined {
				// The decoder leaves an outermost row's FP as stored; no
				// dumper prints it.
				wr.FP, gr.FP = sframe.Rule{}, sframe.Rule{}
			}
			if gr != wr {
				bad("func idx [%d] row %d: %+v; the section: %+v", i, j, gr, wr)
			}
		}
	}
	return rows, diffs
}

// TestParseGNUGolden reads every fixture's objdump text with ParseGNU and
// compares the rows with the ones the sframe package decodes from the
// same bytes: objdump and the decoder are independent readers of one
// section, so the parser's reading of the notation must make them agree.
func TestParseGNUGolden(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, g := range goldenSections(t) {
		t.Run(g.name, func(t *testing.T) {
			l, err := ParseGNU(g.text, g.abi)
			if err != nil {
				t.Fatal(err)
			}
			sec, want := g.decodeFDEs(t)
			h := sec.Header
			if l.Version != h.Version || l.NumFDEs != int(h.NumFDEs) || l.NumFREs != int(h.NumFREs) ||
				l.CFAFixedFP != h.CFAFixedFP || l.CFAFixedRA != h.CFAFixedRA {
				t.Errorf("header: version %d, %d FDEs, %d FREs, fixed %d/%d; the section: %d, %d, %d, %d/%d",
					l.Version, l.NumFDEs, l.NumFREs, l.CFAFixedFP, l.CFAFixedRA,
					h.Version, h.NumFDEs, h.NumFREs, h.CFAFixedFP, h.CFAFixedRA)
			}
			if l.FixedPrinted == (h.Version == sframe.Version1) {
				t.Errorf("FixedPrinted %v in a version %d listing", l.FixedPrinted, h.Version)
			}
			got := l.FDEs()
			for i := range got {
				if got[i].PCType == sframe.PCMask {
					if l.Funcs[i].RepSizeKnown {
						t.Errorf("func idx [%d]: objdump prints no repetition size, the parser says it knows it", i)
					}
					got[i].RepSize = want[i].RepSize // not printed
				}
			}
			n, diffs := compareFDEs(got, want, g.object)
			for _, d := range diffs {
				t.Error(d)
			}
			if n == 0 && h.NumFREs > 0 {
				t.Error("no rows compared")
			}
			seen[fmt.Sprintf("v%d %s", h.Version, g.abi.Name())] = true
		})
	}
	// Every layout on every target it exists for was read.
	for _, v := range []string{"v1 x86-64", "v1 aarch64", "v1 aarch64_be", "v2 x86-64", "v2 aarch64", "v2 aarch64_be",
		"v3 x86-64", "v3 aarch64", "v3 aarch64_be", "v3 s390x"} {
		if !seen[v] {
			t.Errorf("no golden section of %s", v)
		}
	}
}

// TestTableLooksUpLikeTheSection builds the Table of every linked and
// hand-written fixture's listing and looks up every byte of every
// function in it and in the decoded section itself: the same function
// and the same row, or the same error. Version 1 sections keep the
// version 1 PCMASK rule (gas-2.40 plt).
func TestTableLooksUpLikeTheSection(t *testing.T) {
	t.Parallel()
	masks := 0
	for _, g := range goldenSections(t) {
		if g.object {
			continue
		}
		sec, want := g.decodeFDEs(t)
		t.Run(g.name, func(t *testing.T) {
			l, err := ParseGNU(g.text, g.abi)
			if err != nil {
				t.Fatal(err)
			}
			for i := range l.Funcs {
				if l.Funcs[i].PCType == sframe.PCMask {
					l.Funcs[i].RepSize = want[i].RepSize
					if sec.Header.Version == sframe.Version1 {
						masks++
					}
				}
			}
			tab, err := l.Table(g.base)
			if err != nil {
				t.Fatal(err)
			}
			if v := tab.Sections[0].Header.Version; v != sec.Header.Version {
				t.Errorf("table of version %d, the section is %d", v, sec.Header.Version)
			}
			orig, err := sframe.Decode(g.raw, g.base)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range want {
				for pc := f.Start; pc < f.End(); pc++ {
					gf, gr, gerr := tab.FindRow(pc)
					wf, wr, werr := orig.FindRow(pc)
					if wr.RA.Kind == sframe.RuleUndefined {
						wr.FP, gr.FP = sframe.Rule{}, sframe.Rule{}
					}
					if (gerr == nil) != (werr == nil) || gf.Start != wf.Start || gr != wr {
						t.Fatalf("FindRow(%#x): function %#x row %+v, %v; the section: %#x %+v, %v", pc, gf.Start, gr, gerr, wf.Start, wr, werr)
					}
				}
			}
		})
	}
	if masks == 0 {
		t.Error("no version 1 PCMASK function looked up")
	}
}

// TestParseStoredTexts reads the dumper texts kept under testdata (see
// TestDumperTextsAreCurrent) and compares their rows with the sections'
// own: objdump 2.47 of the builtin encoder's version 2 and 3 sections
// (outermost rows, PCMASK stubs, signed RAs, B keys, flexible FDEs,
// functions without rows), llvm-readobj 23 of the version 2 ones and of
// GNU ld 2.44's. llvm-readobj's text of an s390x section is refused: it
// does not know the ABI.
func TestParseStoredTexts(t *testing.T) {
	t.Parallel()
	for _, s := range storedTexts(t) {
		t.Run(s.file, func(t *testing.T) {
			text, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			g := s.section
			var l *Listing
			if strings.HasPrefix(s.tool, "llvm-readobj") {
				l, err = ParseLLVM(string(text), g.abi)
				if g.abi == sframe.ABIS390XBE {
					if err == nil || !strings.Contains(err.Error(), "does not know ABI 4") {
						t.Errorf("llvm-readobj's s390x listing read: %v", err)
					}
					return
				}
			} else {
				l, err = ParseGNU(string(text), g.abi)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, want := g.decodeFDEs(t)
			got := l.FDEs()
			for i := range got {
				if !l.Funcs[i].RepSizeKnown && got[i].PCType == sframe.PCMask {
					got[i].RepSize = want[i].RepSize
				}
			}
			n, diffs := compareFDEs(got, want, false)
			for _, d := range diffs {
				t.Error(d)
			}
			if n == 0 {
				t.Error("no rows compared")
			}
		})
	}
}
