package harness

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sfconform/sfconform/cbf"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

func newChecker(t *testing.T, abi sframe.ABI) *Checker {
	t.Helper()
	c, err := New(abi, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// shiftedCFA returns the image with every row's CFA of the root function
// (the entry stub's callee) one word off.
func shiftedCFA(t *testing.T, prog *gen.Program, v sframe.Version) *producer.Image {
	t.Helper()
	fdes := prog.FDEs()
	for i := range fdes {
		if fdes[i].Start != prog.Funcs[1].Addr {
			continue
		}
		for r := range fdes[i].Rows {
			if fdes[i].Rows[r].CFA.Kind == sframe.RuleExpr {
				fdes[i].Rows[r].CFA.Offset += sframe.WordSize
			}
		}
	}
	img, err := producer.BuiltinFrom(prog, v, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestCleanAndMutatedImages(t *testing.T) {
	for _, abi := range sframe.Targets {
		t.Run(abi.Name(), func(t *testing.T) {
			c := newChecker(t, abi)
			img, prog, err := BuiltinImage(abi, 3, 11, gen.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Check(img, consumer.NewBuiltin())
			if !res.Clean() || res.Steps == 0 || res.Counts[oracle.OK] != res.Steps {
				t.Fatalf("correct image: %+v", res)
			}

			bad := shiftedCFA(t, prog, 3)
			res = c.Check(bad, consumer.NewBuiltin())
			if res.Clean() || len(res.Failures) != 1 || res.Counts[oracle.Wrong] == 0 {
				t.Fatalf("CFA off by a word went unnoticed: %+v", res)
			}
			f := res.Failures[0]
			if f.Judgement.Verdict != oracle.Wrong || f.Insn == "" || f.Insn == "?" {
				t.Fatalf("failure lacks verdict or instruction: %+v", f)
			}

			// The saved case replays to the same failure, and its CBF
			// backtraces hold the same PCs as its JSON frames.
			cs := NewCase(bad, prog, 11, "builtin", res)
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
				frames []oracle.Frame
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

// batched is the builtin consumer behind the batch interface: it proves
// that stack snapshots carry what an unwinder needs.
type batched struct {
	consumer.Builtin
	size  int
	calls int
	fail  error
}

func (b *batched) BatchSize() int { return b.size }

func (b *batched) Unwind(steps []consumer.Step, out []consumer.Result) error {
	b.calls++
	if b.fail != nil {
		return b.fail
	}
	return b.Builtin.Unwind(steps, out)
}

func TestBatchConsumerSeesSnapshots(t *testing.T) {
	for _, abi := range sframe.Targets {
		c := newChecker(t, abi)
		img, prog, err := BuiltinImage(abi, 2, 5, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		live := c.Check(img, consumer.NewBuiltin())
		b := &batched{size: 64}
		res := c.Check(img, b)
		if !res.Clean() || res.Steps != live.Steps {
			t.Fatalf("%s: batched consumer: %+v (live: %d steps)", abi.Name(), res, live.Steps)
		}
		if want := (res.Steps + 63) / 64; b.calls != want {
			t.Errorf("%s: %d batches for %d steps, want %d", abi.Name(), b.calls, res.Steps, want)
		}
		// Snapshots are taken at the step, not at the flush: a wrong table
		// must be caught at the same step either way.
		bad := shiftedCFA(t, prog, 2)
		lres := c.Check(bad, consumer.NewBuiltin())
		bres := c.Check(bad, &batched{size: 64})
		if len(bres.Failures) == 0 || bres.Failures[0].Step != lres.Failures[0].Step {
			t.Fatalf("%s: batched failure %+v, live %+v", abi.Name(), bres.Failures, lres.Failures)
		}
		crash := c.Check(img, &batched{size: 8, fail: errors.New("consumer process exited")})
		if crash.Counts[oracle.Error] != crash.Steps || crash.Steps == 0 {
			t.Fatalf("%s: a crashing batch consumer: %+v", abi.Name(), crash.Counts)
		}
	}
}

// refusing refuses every section, as a consumer that cannot parse it.
type refusing struct{ consumer.Builtin }

func (refusing) Load(*producer.Image) error { return errors.New("not an SFrame section") }

func TestRefusedSectionIsErrorAtEveryStep(t *testing.T) {
	c := newChecker(t, sframe.ABIAMD64LE)
	img, _, _ := BuiltinImage(sframe.ABIAMD64LE, 3, 1, gen.Options{})
	res := c.Check(img, &refusing{})
	if res.LoadErr == nil || res.Counts[oracle.Error] != res.Steps || res.Steps == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestFaultingRunThenCleanRun(t *testing.T) {
	for _, abi := range sframe.Targets {
		c := newChecker(t, abi)
		img, _, _ := BuiltinImage(abi, 3, 3, gen.Options{})
		broken := *img
		broken.Code = append([]byte(nil), img.Code...)
		// Make the root function's first instruction an invalid one.
		off := img.Symbols[1].Addr - img.CodeAddr
		copy(broken.Code[off:], []byte{0xff, 0xff, 0xff, 0xff})
		res := c.Check(&broken, consumer.NewBuiltin())
		if res.RunErr == nil {
			t.Fatalf("%s: invalid instruction ran without error", abi.Name())
		}
		if res := c.Check(img, consumer.NewBuiltin()); !res.Clean() {
			t.Fatalf("%s: the run after a fault: %v", abi.Name(), res.RunErr)
		}
	}
}

func TestWrongTargetImage(t *testing.T) {
	c := newChecker(t, sframe.ABIS390XBE)
	img, _, _ := BuiltinImage(sframe.ABIAMD64LE, 3, 1, gen.Options{})
	if res := c.Check(img, consumer.NewBuiltin()); res.RunErr == nil {
		t.Fatal("x86-64 image ran on an s390x checker")
	}
}

func TestPoolReusesCheckers(t *testing.T) {
	p := NewPool(Options{})
	a, err := p.Get(sframe.ABIS390XBE)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Get(sframe.ABIS390XBE)
	c, _ := p.Get(sframe.ABIAMD64LE)
	if a != b || a == c {
		t.Fatalf("pool: same target gave %p and %p, other target %p", a, b, c)
	}
	p.Close()
	if d, _ := p.Get(sframe.ABIS390XBE); d == a {
		t.Fatal("a closed pool handed out a closed checker")
	}
	p.Close()
}
