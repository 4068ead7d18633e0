package harness

import (
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// Which frame's row decided a judgement: the boundaries of CulpritFrame.
func TestCulpritFrame(t *testing.T) {
	t.Parallel()
	four := make([]frame.Frame, 4)
	for _, tc := range []struct {
		name string
		j    oracle.Judgement
		want int
	}{
		{"ok", oracle.Judgement{Verdict: verdict.OK, Frame: -1}, -1},
		{"frame 0 pc: the consumer's own", oracle.Judgement{Verdict: verdict.Wrong, Frame: 0, Field: "pc"}, 0},
		{"caller's pc: the callee's row", oracle.Judgement{Verdict: verdict.Wrong, Frame: 2, Field: "pc"}, 1},
		{"caller's sp", oracle.Judgement{Verdict: verdict.Wrong, Frame: 3, Field: "sp"}, 2},
		{"caller's fp", oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "fp"}, 0},
		{"own cfa", oracle.Judgement{Verdict: verdict.Wrong, Frame: 2, Field: "cfa"}, 2},
		{"own outermost mark", oracle.Judgement{Verdict: verdict.Wrong, Frame: 3, Field: "outermost"}, 3},
		{"went past the outermost", oracle.Judgement{Verdict: verdict.Wrong, Frame: 4, Field: "depth"}, 3},
		{"stopped early", oracle.Judgement{Verdict: verdict.Wrong, Frame: 2, Field: "depth"}, 1},
		{"no row", oracle.Judgement{Verdict: verdict.NoInfo, Frame: 2}, 2},
		{"failed at frame 0", oracle.Judgement{Verdict: verdict.Error, Frame: 0}, 0},
		{"failed past the last frame", oracle.Judgement{Verdict: verdict.Error, Frame: 4}, 3},
	} {
		if got := CulpritFrame(tc.j, four); got != tc.want {
			t.Errorf("%s: CulpritFrame = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestRowPC(t *testing.T) {
	t.Parallel()
	fs := []frame.Frame{{PC: 0x100}, {PC: 0x200, Signal: true}, {PC: 0x300}, {PC: 0x400}}
	for k, want := range []uint64{0x100, 0x1ff, 0x300, 0x3ff} {
		if got := RowPC(fs, k); got != want {
			t.Errorf("frame %d: RowPC = %#x, want %#x", k, got, want)
		}
	}
}

// A table broken in the functions of one pattern charges every failing
// step to that pattern, and the steps run in each pattern are counted.
// Two breaks: a CFA a word off (the frame's own value goes wrong) and, on
// the targets whose rows carry the RA's offset, the RA read a word off
// (its caller's PC goes wrong).
func TestBlameNamesTheBrokenPattern(t *testing.T) {
	t.Parallel()
	for _, tg := range target.All {
		t.Run(tg.Name()+"/cfa", func(t *testing.T) {
			t.Parallel()
			blameBroken(t, tg, func(r *sframe.Row) {
				if r.CFA.Kind == sframe.RuleExpr {
					r.CFA.Offset += target.WordSize
				}
			})
		})
		if tg == target.X86_64 {
			continue // the RA is at a fixed offset from the CFA
		}
		t.Run(tg.Name()+"/ra", func(t *testing.T) {
			t.Parallel()
			blameBroken(t, tg, func(r *sframe.Row) {
				if r.RA.Kind == sframe.RuleExpr && r.RA.Deref {
					r.RA.Offset -= target.WordSize
				}
			})
		})
	}
}

func blameBroken(t *testing.T, tg target.Target, breakRow func(*sframe.Row)) {
	{
		{
			c := newChecker(t, tg)
			opt := gen.Options{Patterns: []string{"sp-frame", "fp-frame", "callee-saved"}}
			for seed := int64(1); seed < 4; seed++ {
				_, prog, err := Produce(producer.Builtin{Version: 3}, tg, seed, opt)
				if err != nil {
					t.Fatal(err)
				}
				broken := map[uint64]bool{}
				for _, f := range prog.Funcs {
					if f.Pattern == "sp-frame" {
						broken[f.Addr] = true
					}
				}
				if len(broken) == 0 {
					continue
				}
				fdes := prog.FDEs()
				for i := range fdes {
					if !broken[fdes[i].Start] {
						continue
					}
					for r := range fdes[i].Rows {
						breakRow(&fdes[i].Rows[r])
					}
				}
				img, err := producer.BuiltinFrom(prog, 3, fdes)
				if err != nil {
					t.Fatal(err)
				}
				res := c.CheckProgram(img, nil, prog, consumer.NewBuiltin())
				failing := res.Counts[verdict.Wrong] + res.Counts[verdict.NoInfo] + res.Counts[verdict.Error]
				if failing == 0 {
					t.Fatalf("seed %d: a CFA a word off went unnoticed", seed)
				}
				n := 0
				for b, s := range res.Blames {
					if b.Pattern != "sp-frame" {
						t.Errorf("seed %d: %d steps charged to %v, not to the broken sp-frame (first: %s %s)",
							seed, s.Steps, b, s.First.Function, s.First.Judgement.Detail)
					}
					if s.First.Judgement.Verdict != b.Verdict || s.First.Step < 0 {
						t.Errorf("seed %d: %v keeps a first failure of another verdict: %+v", seed, b, s.First.Judgement)
					}
					n += s.Steps
				}
				if n != failing {
					t.Errorf("seed %d: %d steps charged, %d failed", seed, n, failing)
				}
				if res.PatternSteps["sp-frame"] == 0 || res.PatternSteps["entry"] == 0 {
					t.Errorf("seed %d: steps per pattern %v", seed, res.PatternSteps)
				}
				total := 0
				for _, s := range res.PatternSteps {
					total += s
				}
				if total != res.Steps {
					t.Errorf("seed %d: %d steps per pattern, %d steps", seed, total, res.Steps)
				}
			}
		}
	}
}

// The entry stub's own rows, not marking the outermost frame, are charged
// to the pattern entry; a function without an FDE, NOINFO, to its own.
func TestBlameEntryAndMissingFDE(t *testing.T) {
	t.Parallel()
	tg := target.X86_64
	c := newChecker(t, tg)
	_, prog, err := Produce(producer.Builtin{Version: 3}, tg, 5, gen.Options{Patterns: []string{"leaf", "fp-frame"}})
	if err != nil {
		t.Fatal(err)
	}
	fdes := prog.FDEs()
	for i := range fdes {
		if fdes[i].Start != prog.Funcs[0].Addr {
			continue
		}
		// The CIE's row instead of "RA undefined": what GNU as before
		// SFrame v3 writes for the stub.
		fdes[i].Rows = []sframe.Row{{CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: tg.SP(), Offset: 8},
			RA: sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: -8, Deref: true},
			FP: sframe.Rule{Kind: sframe.RuleSame}}}
	}
	img, err := producer.BuiltinFrom(prog, 3, fdes)
	if err != nil {
		t.Fatal(err)
	}
	res := c.CheckProgram(img, nil, prog, consumer.NewBuiltin())
	if len(res.Blames) == 0 {
		t.Fatalf("no blame: %+v", res.Counts)
	}
	for b := range res.Blames {
		if b.Pattern != "entry" {
			t.Errorf("charged to %v, want the entry stub", b)
		}
	}

	res = c.CheckProgram(withoutFDE(t, prog, 3), nil, prog, consumer.NewBuiltin())
	want := Blame{Pattern: prog.Funcs[1].Pattern, Verdict: verdict.NoInfo}
	if len(res.Blames) != 1 || res.Blames[want] == nil || res.Blames[want].Steps != res.Counts[verdict.NoInfo] {
		t.Errorf("root function without an FDE: blames %s, want all %d NOINFO steps on %v", res.BlameSummary(), res.Counts[verdict.NoInfo], want)
	}

	res = c.CheckProgram(img, nil, prog, &refusing{})
	want = Blame{Pattern: PatternSection, Verdict: verdict.Error, Field: "load"}
	if len(res.Blames) != 1 || res.Blames[want] == nil || res.Blames[want].Steps != res.Steps {
		t.Errorf("refused section: blames %s, want every step on %v", res.BlameSummary(), want)
	}
}

// The entry stub and the signal trampoline with an FDE without rows are
// charged to the patterns that made them so: every pattern the catalog
// flags EmptyFDE gets the charges of such a function.
func TestEmptyFDEFunctionsChargeTheirPattern(t *testing.T) {
	t.Parallel()
	flagged := 0
	for _, info := range gen.Catalog() {
		if !info.EmptyFDE {
			continue
		}
		flagged++
		prog, err := gen.Generate(info.Targets[0], 3, gen.Options{Patterns: []string{info.Name}, SFrameVersion: 3})
		if err != nil {
			t.Fatal(err)
		}
		charged := false
		for _, f := range prog.Funcs {
			charged = charged || (f.EmptyFDE && funcPattern(f) == info.Name)
		}
		if !charged {
			t.Errorf("%s: no function with an FDE without rows is charged to it", info.Name)
		}
	}
	if flagged < 2 {
		t.Errorf("the catalog flags %d patterns EmptyFDE, want empty-fde and signal-empty-fde", flagged)
	}
	for _, tc := range []struct{ pattern, stub, tramp string }{
		{"leaf", "entry", ""},
		{"empty-fde", "empty-fde", ""},
		{"signal", "entry", "signal"},
		{"signal-empty-fde", "entry", "signal-empty-fde"},
	} {
		prog, err := gen.Generate(target.X86_64, 3, gen.Options{Patterns: []string{tc.pattern}, SFrameVersion: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := funcPattern(prog.Funcs[0]); got != tc.stub {
			t.Errorf("%s: the stub is charged to %q, want %q", tc.pattern, got, tc.stub)
		}
		tr := prog.SignalTrampoline()
		switch {
		case tc.tramp == "" && tr != nil:
			t.Errorf("%s: a trampoline", tc.pattern)
		case tc.tramp != "" && (tr == nil || funcPattern(tr) != tc.tramp):
			t.Errorf("%s: the trampoline %+v is not charged to %q", tc.pattern, tr, tc.tramp)
		}
	}
}
