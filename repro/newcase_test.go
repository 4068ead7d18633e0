package repro

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/cbf"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// A reproducer of a wrong row replays to the same failure, and its CBF
// backtraces hold the same PCs as its JSON frames.
func TestNewCaseReplaysWithCBF(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			c, err := harness.New(abi, harness.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			prog, err := laidOut(abi, 11, 3)
			if err != nil {
				t.Fatal(err)
			}
			fdes := prog.FDEs()
			for i := range fdes {
				if fdes[i].Start != prog.Funcs[1].Addr {
					continue
				}
				for r := range fdes[i].Rows {
					if fdes[i].Rows[r].CFA.Kind == sframe.RuleExpr {
						fdes[i].Rows[r].CFA.Offset += target.WordSize
					}
				}
			}
			bad, err := producer.BuiltinFrom(prog, 3, fdes)
			if err != nil {
				t.Fatal(err)
			}
			res := c.Check(bad, consumer.NewBuiltin())
			if len(res.Failures) != 1 {
				t.Fatalf("CFA off by a word: %d failures", len(res.Failures))
			}
			f := res.Failures[0]
			// The saved case replays to the same failure, and its CBF
			// backtraces hold the same PCs as its JSON frames.
			cs := NewCase(CaseInput{Img: bad, Prog: prog, Seed: 11, ConsumerName: "builtin", Res: res})
			path, err := corpus.Save(t.TempDir(), cs)
			if err != nil {
				t.Fatal(err)
			}
			back, err := corpus.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			img2, err := back.Image()
			if err != nil {
				t.Fatal(err)
			}
			res2 := c.Check(img2, consumer.NewBuiltin())
			if len(res2.Failures) != 1 || res2.Failures[0].Step != f.Step || !reflect.DeepEqual(res2.Failures[0].Got, f.Got) {
				t.Fatalf("replay differs: %+v vs %+v", res2.Failures, f)
			}
			for _, x := range []struct {
				raw    []byte
				frames []frame.Frame
			}{{back.ExpectedCBF, back.Expected}, {back.GotCBF, back.Got}} {
				bt, err := cbf.Decode(x.raw)
				if err != nil {
					t.Fatal(err)
				}
				if len(bt.Frames) != len(x.frames) {
					t.Fatalf("CBF has %d frames, JSON %d", len(bt.Frames), len(x.frames))
				}
				for i := range bt.Frames {
					if bt.Frames[i].Addr != x.frames[i].PC {
						t.Errorf("CBF frame %d = %#x, JSON pc %#x", i, bt.Frames[i].Addr, x.frames[i].PC)
					}
				}
			}
		})
	}
}

// A section that breaks a rule is kept as an INVALID reproducer, with
// its violations, and every reproducer names what made and read the
// section and where the program came from.
func TestNewCaseOfInvalidSection(t *testing.T) {
	t.Parallel()
	c, err := harness.New(target.AArch64BE, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prog, err := laidOut(target.AArch64BE, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	fdes := prog.FDEs()
	// A function right before the next one (no gap, whose bytes a probe
	// would find covered) whose FDE runs into it.
	k := slices.IndexFunc(fdes, func(f sframe.FDE) bool {
		i := slices.IndexFunc(prog.Funcs, func(g *gen.Func) bool { return g.Addr == f.Start })
		return i > 0 && i+1 < len(prog.Funcs) && len(prog.Funcs[i].Gap) == 0 && f.PCType == sframe.PCInc
	})
	if k < 0 {
		t.Fatal("no function right before another")
	}
	fdes[k].Size += 8
	img, err := producer.BuiltinFrom(prog, 2, fdes)
	if err != nil {
		t.Fatal(err)
	}
	res := c.Check(img, consumer.NewBuiltin())
	if !res.Invalid() {
		t.Fatalf("overlapping FDEs not reported: %v", res.Violations)
	}
	cs := NewCase(CaseInput{Img: img, Prog: prog, Seed: 4, ConsumerName: "builtin", Res: res})
	if res.Counts[verdict.OK] == res.Steps && (cs.Verdict != verdict.Invalid || !strings.Contains(cs.Detail, "functions overlap")) {
		t.Fatalf("reproducer: verdict %v, detail %q", cs.Verdict, cs.Detail)
	}
	if len(cs.Violations) == 0 {
		t.Fatal("reproducer lost the violations")
	}
	// Every reproducer, whoever saves it, names what made and read the
	// section and where the program came from.
	if !strings.Contains(cs.ProducerVersion, "its own encoder") || !strings.Contains(cs.ConsumerVersion, "its own unwinder") ||
		cs.Generator == nil || cs.Generator.Seed != prog.Seed {
		t.Fatalf("reproducer: producer %q, consumer %q, generator %+v", cs.ProducerVersion, cs.ConsumerVersion, cs.Generator)
	}
}

// laidOut is a program of gen's laid out where the harness runs programs
// (campaign.Produce, which this package's tests cannot import).
func laidOut(t target.Target, seed int64, v int) (*gen.Program, error) {
	p, err := gen.Generate(t, seed, gen.Options{SFrameVersion: v})
	if err != nil {
		return nil, err
	}
	return p, p.Layout(harness.CodeBase)
}

// A reproducer writes down the idle functions its program was made with,
// and a replay makes that many, whatever the seed's own count is.
func TestGeneratorKeepsTheIdleCount(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{1, 20} {
		p, err := gen.Generate(target.X86_64, seed, gen.Options{Paths: 1})
		if err != nil {
			t.Fatal(err)
		}
		g := GeneratorOf(p)
		want := gen.IdleCount(seed)
		if want == 0 {
			want = -1
		}
		if g.Idle != want || p.IdleFuncs() != max(want, 0) {
			t.Errorf("seed %d: recorded idle %d, program has %d, want %d", seed, g.Idle, p.IdleFuncs(), want)
		}
	}
	c := &corpus.Case{Target: target.X86_64.Name(), Seed: 20, Generator: &corpus.Generator{Seed: 20, Paths: 1, Idle: 5}}
	p, err := Regenerate(c)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.IdleFuncs(); n != 5 {
		t.Errorf("replayed with idle 5: %d idle functions (seed 20's count is %d)", n, gen.IdleCount(20))
	}
}
