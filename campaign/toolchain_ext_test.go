package campaign

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// TestNoInfoCarriesTheWarning: GNU as 2.44 skips the FDE of a DRAP
// function (a version 3 pattern it is given anyway) with a warning; a
// step in that function is NOINFO, and the failure and its reproducer
// carry the warning.
func TestNoInfoCarriesTheWarning(t *testing.T) {
	t.Parallel()
	prod, err := producer.New("gas-2.44")
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.44: %v", err)
	}
	// Every failure kept: before SFrame v3 gas leaves the entry stub
	// without its outermost row, so the first failure of a run is WRONG
	// at the stub; the NOINFO of a DRAP function comes later.
	c, err := harness.New(target.X86_64, harness.Options{MaxFailures: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	found := 0
	for _, p := range ProduceBatch(prod, target.X86_64, []int64{1, 2, 3, 4}, gen.Options{SFrameVersion: 3, Patterns: []string{"drap", "fp-frame"}}) {
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		ref, err := harness.Reference(p.Img, p.Prog)
		if err != nil {
			t.Fatal(err)
		}
		res := c.CheckAgainst(p.Img, ref, consumer.NewBuiltin())
		if res.Counts[verdict.NoInfo] == 0 || res.Differs == 0 {
			t.Errorf("seed %d: %d NOINFO, %d rows differ; want some of both", p.Seed, res.Counts[verdict.NoInfo], res.Differs)
		}
		if res.WrongFields["outermost"] == 0 || sumValues(res.WrongFields) != res.Counts[verdict.Wrong] ||
			res.AtOutermost[verdict.Wrong] != res.WrongFields["outermost"] || res.AtOutermost[verdict.NoInfo] != 0 {
			t.Errorf("seed %d: WRONG %d by field %v, at the outermost frame %v; gas 2.44 never marks the stub outermost, and a DRAP function has no FDE",
				p.Seed, res.Counts[verdict.Wrong], res.WrongFields, res.AtOutermost)
		}
		k := slices.IndexFunc(res.Failures, func(f harness.Failure) bool { return f.Judgement.Verdict == verdict.NoInfo })
		if k < 0 {
			continue
		}
		f := res.Failures[k]
		found++
		if len(f.Warnings) == 0 || !strings.Contains(f.Warnings[0].Text, "skipping SFrame FDE") || !strings.Contains(f.Warnings[0].Function, "drap") {
			t.Errorf("seed %d: NOINFO at %s with warnings %v", p.Seed, f.Function, f.Warnings)
		}
		res.Failures = res.Failures[k:]
		cs := repro.NewCase(repro.CaseInput{Img: p.Img, Prog: p.Prog, Seed: p.Seed, ConsumerName: "builtin", Res: res})
		if !strings.Contains(cs.Detail, "the producer warned: as in f") || cs.Record == nil || cs.ReferenceRow == "" {
			t.Errorf("seed %d: case detail %q, record %v, reference row %q", p.Seed, cs.Detail, cs.Record, cs.ReferenceRow)
		}
	}
	if found == 0 {
		t.Fatal("no program failed NOINFO first: the warning's attachment went unchecked")
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestToolchainPlanModules: a cell of a toolchain that links modules says
// "modules: produced and judged" when its consumers read them, and its
// producer then builds the programs the layout picks (seed%8 == 4) one
// ELF per module; with a consumer that does not declare modules the cell
// says so and every image is one ELF. Every other shape stays the
// toolchain's.
func TestToolchainPlanModules(t *testing.T) {
	t.Parallel()
	prod, err := producer.New("gas-2.47")
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.47: %v", err)
	}
	seeds := []int64{1, 4, 12, 20}
	modules := func(p *Plan) (n int) {
		for _, b := range ProduceBatch(p.Producer, p.Target, seeds, p.Mix.Options(1)) {
			if b.Err != nil {
				t.Fatal(b.Err)
			}
			if len(b.Img.Modules) > 0 {
				if b.Seed%8 != 4 {
					t.Errorf("seed %d: %d modules, outside the layout's seeds", b.Seed, len(b.Img.Modules))
				}
				n++
			}
		}
		return n
	}
	p, err := NewPlan(prod, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Mix.Layouts {
		if l.Produced != (l.Name == producer.LayoutModules) || !l.Produced && l.Why == "" {
			t.Errorf("gas-2.47 x builtin: %s", l)
		}
	}
	if n := modules(p); n < 2 {
		t.Errorf("gas-2.47 x builtin: %d of the programs of seeds %v made of modules", n, seeds)
	}
	// The same plan set again for a consumer that reads no layout.
	p.setLayouts([]consumer.Consumer{named("no-layouts")})
	for _, l := range p.Mix.Layouts {
		if l.Name == producer.LayoutModules && (l.Produced || !strings.Contains(l.Why, "no-layouts")) {
			t.Errorf("gas-2.47 x a consumer reading no layouts: %s", l)
		}
	}
	if n := modules(p); n != 0 {
		t.Errorf("gas-2.47 x a consumer reading no layouts: %d programs made of modules", n)
	}
}

// imageSink keeps the images a cell's programs were made into.
type imageSink struct {
	mu   sync.Mutex
	imgs map[*Cell][]*image.Image
}

func (s *imageSink) Program(c *Checked) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Program.Img != nil {
		s.imgs[c.Cell] = append(s.imgs[c.Cell], c.Program.Img)
	}
	return ""
}
func (s *imageSink) Note(*Cell, string) {}
func (s *imageSink) CellDone(*Cell)     {}

// rawShapes reads the header shapes of an SFrame section's bytes on its
// own, from the format's fixed header (sframe-facts.md: magic, version,
// flags, ABI, CFA fixed FP and RA offsets, auxiliary header length, then
// num_fdes, num_fres, fre_len, fdeoff, freoff as 32-bit words): an
// auxiliary header, FDE_SORTED (flag 0x1) clear, a v2 section without
// FDE_FUNC_START_PCREL (0x4), a second header after the first section
// (at 8-byte alignment), bytes past the last section.
func rawShapes(t *testing.T, sec []byte, bo binary.ByteOrder) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	off, n := 0, 0
	for off+28 <= len(sec) && bo.Uint16(sec[off:]) == 0xdee2 {
		h := sec[off:]
		version, flags, aux := h[2], h[3], int(h[7])
		freLen, freOff := int(bo.Uint32(h[16:])), int(bo.Uint32(h[24:]))
		if aux > 0 {
			out[producer.LayoutAuxHeader] = true
		}
		if flags&0x1 == 0 {
			out[producer.LayoutUnsorted] = true
		}
		if version == 2 && flags&0x4 == 0 {
			out[producer.LayoutSectionRelative] = true
		}
		off += 28 + aux + freOff + freLen
		n++
		next := (off + 7) &^ 7
		if next+2 <= len(sec) && bo.Uint16(sec[next:]) == 0xdee2 {
			off = next
		}
	}
	if n == 0 {
		t.Fatalf("no SFrame header at the start of a %d-byte section", len(sec))
	}
	if n > 1 {
		out[producer.LayoutConcatenated] = true
	}
	if off < len(sec) {
		out[producer.LayoutPadding] = true
	}
	return out
}

// TestToolchainLayoutsMeasured: a toolchain cell's layout statuses count,
// for each header shape the toolchain decides, the programs whose
// sections have it; the counts must be those of the bytes, read here on
// their own. GNU ld 2.44 writes v2 starts relative to the section, 2.47
// for s390x rounds the PT_GNU_SFRAME segment past the section: at least
// those are non-zero.
func TestToolchainLayoutsMeasured(t *testing.T) {
	cases := []struct {
		tg      target.Target
		prod    string
		nonZero string
	}{
		{target.X86_64, "gas-2.44", producer.LayoutSectionRelative},
		{target.S390X, "gas-2.47", producer.LayoutPadding},
		{target.X86_64, "gas-2.47", ""},
	}
	var cells []*Cell
	for _, c := range cases {
		if _, err := producer.New(c.prod); err != nil {
			testenv.Missing(t, testenv.Binutils, "producer %s: %v", c.prod, err)
		}
		cells = append(cells, NewCell(c.tg, c.prod, "builtin"))
	}
	seeds := make([]int64, 24)
	for i := range seeds {
		seeds[i] = int64(100 + i)
	}
	s := &imageSink{imgs: map[*Cell][]*image.Image{}}
	w := NewWorker(harness.Options{})
	defer w.Close()
	for _, c := range cells {
		w.RunCell(Config{Seeds: seeds, Batch: 8}, c, s)
	}
	measured := []string{producer.LayoutAuxHeader, producer.LayoutUnsorted, producer.LayoutSectionRelative, producer.LayoutPadding, producer.LayoutConcatenated}
	for i, c := range cells {
		if c.Status == "error" {
			t.Fatalf("%s: %s", c.Name(), c.Reason)
		}
		want := map[string]int{}
		for _, img := range s.imgs[c] {
			any := map[string]bool{}
			for _, m := range img.Sections() {
				for n := range rawShapes(t, m.SFrame, c.Arch().ByteOrder()) {
					any[n] = true
				}
			}
			for n := range any {
				want[n]++
			}
		}
		for _, name := range measured {
			k := slices.IndexFunc(c.Layouts, func(l LayoutStatus) bool { return l.Name == name })
			if k < 0 || c.Layouts[k].Measured == nil {
				t.Errorf("%s: no measured status for %s: %+v", c.Name(), name, c.Layouts)
				continue
			}
			l := c.Layouts[k]
			if got := *l.Measured; got.With != want[name] || got.Of != len(s.imgs[c]) || l.Produced != (want[name] > 0) {
				t.Errorf("%s: %s: the cell says %q (%+v), the bytes: %d of %d programs", c.Name(), name, l, got, want[name], len(s.imgs[c]))
			}
		}
		if n := cases[i].nonZero; n != "" && want[n] == 0 {
			t.Errorf("%s: no program's section has %s", c.Name(), n)
		}
		t.Logf("%s: %v of %d programs", c.Name(), want, len(s.imgs[c]))
	}
}
