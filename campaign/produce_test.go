package campaign

import (
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// recorder is the builtin encoder behind the batch interface: it keeps
// the batches it was given.
type recorder struct {
	producer.Builtin
	batches [][]*gen.Program
	refuse  int64 // a seed it fails
}

func (r *recorder) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	r.batches = append(r.batches, progs)
	imgs, errs := make([]*image.Image, len(progs)), make([]error, len(progs))
	for i, p := range progs {
		if p.Seed == r.refuse {
			errs[i] = errors.New("refused")
			continue
		}
		imgs[i], errs[i] = r.Builtin.Produce(p)
	}
	return imgs, errs
}

// TestProduceBatchLayout: a batch producer gets the programs one after the
// other inside the emulator's regions, far code included, each image runs
// alone and conforms, and one program's error is its own.
func TestProduceBatchLayout(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		r := &recorder{Builtin: producer.Builtin{Version: 3}, refuse: 104}
		seeds := []int64{100, 101, 102, 103, 104, 105, 106, 107}
		out := ProduceBatch(r, abi, seeds, gen.Options{Patterns: []string{"far-code", "fp-frame", "leaf"}})
		if len(r.batches) != 1 || len(r.batches[0]) != len(seeds) {
			t.Fatalf("%s: %d batches", abi.Name(), len(r.batches))
		}
		c := newChecker(t, abi)
		var nearEnd, farEnd uint64 = emu.CodeBase, emu.FarCodeBase
		for i, p := range out {
			if p.Seed != seeds[i] {
				t.Fatalf("result %d is seed %d", i, p.Seed)
			}
			if p.Seed == 104 {
				if p.Err == nil || !strings.Contains(p.Err.Error(), "refused") || p.Img != nil {
					t.Errorf("%s: the refused seed: %v", abi.Name(), p.Err)
				}
				continue
			}
			if p.Err != nil {
				t.Fatal(p.Err)
			}
			prog := p.Prog
			if prog.Base < nearEnd || prog.Base%batchAlign != 0 || len(prog.FarCode) > 0 && (prog.FarBase < farEnd || prog.FarBase%batchAlign != 0) {
				t.Errorf("%s seed %d at %#x (far %#x): overlaps the one before (ends %#x, far %#x) or is unaligned", abi.Name(), p.Seed, prog.Base, prog.FarBase, nearEnd, farEnd)
			}
			nearEnd = prog.Base + uint64(len(prog.Code))
			if len(prog.FarCode) > 0 {
				farEnd = prog.FarBase + uint64(len(prog.FarCode))
			}
			if res := c.Check(p.Img, consumer.NewBuiltin()); !res.Clean() {
				t.Errorf("%s seed %d at %#x does not conform alone", abi.Name(), p.Seed, prog.Base)
			}
		}
		if farEnd == emu.FarCodeBase {
			t.Errorf("%s: no program had far code: its layout went unchecked", abi.Name())
		}
	}
}

// TestProduceOneAtATime: a producer without the batch interface gets each
// program alone at harness.CodeBase, as Produce lays it out.
func TestProduceOneAtATime(t *testing.T) {
	t.Parallel()
	out := ProduceBatch(producer.Builtin{Version: 2}, target.S390X, []int64{1, 2, 3}, gen.Options{})
	for _, p := range out {
		if p.Err != nil || p.Prog.Base != harness.CodeBase || p.Img.CodeAddr != harness.CodeBase {
			t.Errorf("seed %d: %v at %#x", p.Seed, p.Err, p.Img.CodeAddr)
		}
	}
}

// TestToolchainMix: a toolchain of SFrame version 2 gets the patterns
// version 2 cannot express too (DRAP: what it does with them is its
// result), but not far code, which no linker can write a version 2 table
// for; sfconform's own encoder gets only what its version expresses.
func TestToolchainMix(t *testing.T) {
	t.Parallel()
	r := &recorder{Builtin: producer.Builtin{Version: 2}} // not producer.Builtin itself: a toolchain to IsToolchain
	if !producer.IsToolchain(r) || producer.IsToolchain(producer.Builtin{Version: 2}) {
		t.Fatal("IsToolchain does not tell the encoder from the others")
	}
	seeds := make([]int64, 40)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	ProduceBatch(r, target.X86_64, seeds, gen.Options{})
	pats := map[string]bool{}
	for _, b := range r.batches {
		for _, p := range b {
			for _, f := range p.Funcs {
				pats[f.Pattern] = true
			}
		}
	}
	if !pats["drap"] || !pats["empty-fde"] || pats["far-code"] {
		t.Errorf("a version 2 toolchain's mix: %v; want drap and empty-fde, no far-code", pats)
	}
	if out := ProduceBatch(r, target.X86_64, []int64{1}, gen.Options{Patterns: []string{"far-code"}}); !errors.As(out[0].Err, new(*gen.CannotExpressError)) {
		t.Errorf("far-code for a version 2 toolchain: %v", out[0].Err)
	}
	for _, p := range ProduceBatch(producer.Builtin{Version: 2}, target.X86_64, seeds[:10], gen.Options{}) {
		for _, f := range p.Prog.Funcs {
			if f.Pattern == "drap" || f.Pattern == "far-code" {
				t.Errorf("the version 2 encoder got a %s function", f.Pattern)
			}
		}
	}
}

func newChecker(t *testing.T, abi target.Target) *harness.Checker {
	t.Helper()
	c, err := harness.New(abi, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
