package gen

import (
	"testing"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// TestCFAEdgeWords checks that cfa-edges does what it is for: among its
// rows are CFA offsets whose stored s390x words (offset-160)/8 sit on
// each edge of SFrame's data word sizes, and the encoder writes each in
// the size the format's ranges give: signed 1-byte words hold -128..127,
// 2-byte words -32768..32767, except that version 2 sizes words as GNU as
// 2.41-2.45 did, symmetrically (|w| <= 127 for one byte), so -128 takes
// two bytes there. The rows being true is TestRowsAgainstExecution's
// business; this is about hitting the edges, which any consistent frame
// would fail to do silently.
func TestCFAEdgeWords(t *testing.T) {
	t.Parallel()
	want := map[int64][2]int{ // word: size in version 2, in version 3
		127: {1, 1}, 128: {2, 2}, -128: {2, 1}, -129: {2, 2}, 32767: {2, 2}, 32768: {4, 4},
	}
	seen := map[int64]bool{}
	for seed := int64(1); seed <= 40 && len(seen) < len(want); seed++ {
		p, err := Generate(target.S390X, seed, Options{Patterns: []string{"cfa-edges"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range p.Funcs {
			if f.Pattern != "cfa-edges" {
				continue
			}
			for _, r := range f.Rows {
				w := (r.CFA.Offset - 160) / 8
				sizes, edge := want[w]
				if !edge {
					continue
				}
				seen[w] = true
				for i, v := range []int{2, 3} {
					got, err := p.rowWordSize(r, v)
					if err != nil || got != sizes[i] {
						t.Errorf("seed %d %s: CFA word %d (%+v) in version %d: %d-byte words (%v), want %d", seed, f.Name, w, r.CFA, v, got, err, sizes[i])
					}
				}
			}
		}
	}
	for w := range want {
		if !seen[w] {
			t.Errorf("no cfa-edges row in 40 seeds has the CFA word %d", w)
		}
	}
}

// TestCoverageWords: with a version set, every executed step counts one
// data word size, and s390x programs reach all three sizes.
func TestCoverageWords(t *testing.T) {
	t.Parallel()
	for _, v := range []int{2, 3} {
		c := NewCoverage()
		c.Version = v
		for seed := int64(1); seed <= 30; seed++ {
			opt := Options{SFrameVersion: v}
			if seed%2 == 0 {
				opt.Patterns = []string{"cfa-edges"} // 4-byte words are rare in the mix
			}
			p, err := Generate(target.S390X, seed, opt)
			if err != nil {
				t.Fatal(err)
			}
			var all []uint64
			for _, f := range p.Funcs {
				for _, in := range f.Insns {
					all = append(all, f.Addr+uint64(in.Off))
				}
			}
			c.Add(p, all)
		}
		n := 0
		for _, k := range []string{"words:none", "words:1B", "words:2B", "words:4B"} {
			n += c.Kinds[k]
			if c.Kinds[k] == 0 {
				t.Errorf("version %d: no step with %s: %v", v, k, c.Kinds)
			}
		}
		if n != c.Steps {
			t.Errorf("version %d: word sizes counted for %d of %d steps: %v", v, n, c.Steps, c.Kinds)
		}
	}
	// A row the version cannot write is counted as such, not as a size.
	p, _ := Generate(target.S390X, 1, Options{})
	r := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: 15, Offset: 161}, RA: sframe.Rule{Kind: sframe.RuleSame}, FP: sframe.Rule{Kind: sframe.RuleSame}}
	if k := wordsKind(p.rowWordSize(r, 3)); k != "words:unencodable" {
		t.Errorf("CFA offset 161 (not 160 + a multiple of 8): %s", k)
	}
}
