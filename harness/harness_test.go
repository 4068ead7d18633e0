package harness

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/verdict"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func newChecker(t *testing.T, abi target.Target) *Checker {
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
func shiftedCFA(t *testing.T, prog *gen.Program, v sframe.Version) *image.Image {
	t.Helper()
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
	img, err := producer.BuiltinFrom(prog, v, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestCleanAndMutatedImages(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			c := newChecker(t, abi)
			img, prog, err := Produce(producer.Builtin{Version: 3}, abi, 11, gen.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Check(img, consumer.NewBuiltin())
			if !res.Clean() || res.Steps == 0 || res.Counts[verdict.OK] != res.Steps {
				t.Fatalf("correct image: %+v", res)
			}

			bad := shiftedCFA(t, prog, 3)
			res = c.Check(bad, consumer.NewBuiltin())
			if res.Clean() || len(res.Failures) != 1 || res.Counts[verdict.Wrong] == 0 {
				t.Fatalf("CFA off by a word went unnoticed: %+v", res)
			}
			f := res.Failures[0]
			if f.Judgement.Verdict != verdict.Wrong || f.Insn == "" || f.Insn == "?" {
				t.Fatalf("failure lacks verdict or instruction: %+v", f)
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
	// snapsIn counts the snapshots by where their copy of the stack ends.
	snapsIn map[uint64]int
}

func (b *batched) BatchSize() int { return b.size }

func (b *batched) Unwind(steps []consumer.Step, out []consumer.Result) error {
	b.calls++
	for i := range steps {
		// Everything a batch consumer reads is in the serialisable snapshot.
		s := &steps[i]
		if s.Snapshot == nil || s.Regs != &s.Snapshot.Regs || s.Mem != machine.Memory(s.Snapshot) || len(s.Snapshot.Stack) == 0 {
			return fmt.Errorf("step %d: no self-contained snapshot", s.Index)
		}
		if b.snapsIn == nil {
			b.snapsIn = map[uint64]int{}
		}
		b.snapsIn[s.Snapshot.StackAddr+uint64(len(s.Snapshot.Stack))]++
	}
	if b.fail != nil {
		return b.fail
	}
	return b.Builtin.Unwind(steps, out)
}

func TestBatchConsumerSeesSnapshots(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		c := newChecker(t, abi)
		img, prog, err := Produce(producer.Builtin{Version: 2}, abi, 5, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		live := c.Check(img, consumer.NewBuiltin())
		b := &batched{size: 64}
		res := c.Check(img, b)
		if !res.Clean() || res.Steps != live.Steps {
			t.Fatalf("%s: batched consumer: %+v (live: %d steps)", abi.Name(), res, live.Steps)
		}
		want := 0
		for k, n := range res.PathSteps {
			if k == 0 { // the probes go in the first run's batches
				n += res.Probes[verdict.OK]
			}
			want += (n + 63) / 64 // each run's last batch is sent when the run ends
		}
		if res.Paths != gen.DefaultPaths || len(res.PathSteps) != res.Paths {
			t.Errorf("%s: %d paths, steps %v", abi.Name(), res.Paths, res.PathSteps)
		}
		if b.calls != want {
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
		if crash.Counts[verdict.Error] != crash.Steps || crash.Steps == 0 {
			t.Fatalf("%s: a crashing batch consumer: %+v", abi.Name(), crash.Counts)
		}
	}
}

// refusing refuses every section, as a consumer that cannot parse it.
type refusing struct{ consumer.Builtin }

func (refusing) Load(*image.Image) error { return errors.New("not an SFrame section") }

func TestRefusedSectionIsErrorAtEveryStep(t *testing.T) {
	t.Parallel()
	c := newChecker(t, target.X86_64)
	img, _, _ := Produce(producer.Builtin{Version: 3}, target.X86_64, 1, gen.Options{})
	res := c.Check(img, &refusing{})
	if res.LoadErr == nil || res.Counts[verdict.Error] != res.Steps || res.Steps == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestFaultingRunThenCleanRun(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		c := newChecker(t, abi)
		img, _, _ := Produce(producer.Builtin{Version: 3}, abi, 3, gen.Options{})
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
	t.Parallel()
	c := newChecker(t, target.S390X)
	img, _, _ := Produce(producer.Builtin{Version: 3}, target.X86_64, 1, gen.Options{})
	if res := c.Check(img, consumer.NewBuiltin()); res.RunErr == nil {
		t.Fatal("x86-64 image ran on an s390x checker")
	}
}

func TestPoolReusesCheckers(t *testing.T) {
	t.Parallel()
	p := NewPool(Options{})
	a, err := p.Get(target.S390X)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.Get(target.S390X)
	c, _ := p.Get(target.X86_64)
	if a != b || a == c {
		t.Fatalf("pool: same target gave %p and %p, other target %p", a, b, c)
	}
	p.Close()
	if d, _ := p.Get(target.S390X); d == a {
		t.Fatal("a closed pool handed out a closed checker")
	}
	p.Close()
}

// withoutFDE drops the FDE of prog's root function (the stub's callee).
func withoutFDE(t *testing.T, prog *gen.Program, v sframe.Version) *image.Image {
	t.Helper()
	var fdes []sframe.FDE
	for _, f := range prog.FDEs() {
		if f.Start != prog.Funcs[1].Addr {
			fdes = append(fdes, f)
		}
	}
	img, err := producer.BuiltinFrom(prog, v, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// A function without an FDE: the steps inside it (frame 0) and in its
// callees (frame 1) are NOINFO, not WRONG, since every frame the consumer
// got to is right.
func TestMissingFDEIsNoInfo(t *testing.T) {
	t.Parallel()
	for _, tg := range target.All {
		c := newChecker(t, tg)
		_, prog, err := Produce(producer.Builtin{Version: 3}, tg, 11, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := c.Check(withoutFDE(t, prog, 3), consumer.NewBuiltin())
		if res.Counts[verdict.NoInfo] == 0 || res.Counts[verdict.Wrong] != 0 || res.Counts[verdict.Error] != 0 {
			t.Fatalf("%s: counts %v", tg.Name(), res.Counts)
		}
		if f := res.Failures[0]; f.Judgement.Verdict != verdict.NoInfo || !errors.Is(f.Err, frame.ErrNoInfo) {
			t.Fatalf("%s: first failure %+v", tg.Name(), f)
		}
		if res.Invalid() {
			t.Fatalf("%s: a table with a function left out is valid, got %v", tg.Name(), res.Violations)
		}
	}
}

// A section breaking a rule strict consumers apply is INVALID, with the
// rule and its byte offset, even when every step unwinds correctly.
func TestInvalidSectionIsReported(t *testing.T) {
	t.Parallel()
	c := newChecker(t, target.AArch64BE)
	_, prog, err := Produce(producer.Builtin{Version: 2}, target.AArch64BE, 4, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fdes := prog.FDEs()
	fdes[1].Size += uint32(len(prog.Funcs[1].Gap)) + 8 // runs over its gap into the next function
	img, err := producer.BuiltinFrom(prog, 2, fdes)
	if err != nil {
		t.Fatal(err)
	}
	res := c.Check(img, consumer.NewBuiltin())
	if !res.Invalid() || res.Clean() || res.Steps == 0 {
		t.Fatalf("overlapping FDEs: invalid=%v clean=%v steps=%d %v", res.Invalid(), res.Clean(), res.Steps, res.Violations)
	}
	v := res.Violations[0]
	if v.Rule != "functions overlap" || v.Offset <= sframe.HeaderSize || v.Warning {
		t.Fatalf("violation %+v", v)
	}
}

// gen lays programs out for this memory map: far functions in the far
// code region, fresh stacks inside the stack region, below the stack a
// run starts on.
func TestGenFitsTheMemoryMap(t *testing.T) {
	t.Parallel()
	if CodeBase+gen.FarOffset != emu.FarCodeBase {
		t.Errorf("far functions go to %#x, the far code region is at %#x", uint64(CodeBase+gen.FarOffset), uint64(emu.FarCodeBase))
	}
	if gen.AltStackTop > emu.InitialSP-64<<10 || gen.AltStackBottom < emu.StackBase {
		t.Errorf("fresh stacks [%#x, %#x) outside the stack region [%#x, %#x) or within 64 KiB of the initial SP %#x",
			gen.AltStackBottom, gen.AltStackTop, emu.StackBase, emu.StackTop, emu.InitialSP)
	}
}

// Far functions, fresh stacks and an FDE without rows run clean, with the
// in-process consumer and with a batch consumer that sees only snapshots;
// a fresh stack's snapshot ends at that stack's end.
func TestFarCodeAndFreshStacks(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		c := newChecker(t, abi)
		far, fresh := 0, 0
		for seed := int64(1); seed <= 6; seed++ {
			img, prog, err := Produce(producer.Builtin{Version: 3}, abi, seed,
				gen.Options{Patterns: []string{"far-code", "new-stack", "empty-fde", "fp-frame"}})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Trace(img, consumer.NewBuiltin())
			if !res.Clean() {
				t.Fatalf("%s seed %d: %+v", abi.Name(), seed, res)
			}
			for _, pc := range res.Executed {
				if pc >= img.CodeAddr+gen.FarOffset {
					far++
				}
			}
			b := &batched{size: 16}
			bres := c.Check(img, b)
			if !bres.Clean() || bres.Steps != res.Steps {
				t.Fatalf("%s seed %d: batched consumer: %+v (live: %d steps)", abi.Name(), seed, bres, res.Steps)
			}
			for _, s := range prog.Stacks() {
				fresh += b.snapsIn[s.End()]
			}
		}
		if far == 0 || fresh == 0 {
			t.Errorf("%s: %d steps in far code, %d batch snapshots ending at a fresh stack's end: the patterns were not exercised", abi.Name(), far, fresh)
		}
	}
}
