package harness

import (
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// A table whose FDEs run over the gaps after their functions gives the
// same row at every executed instruction, but has unwind information at
// PCs in no function: only the probes see it, for an in-process consumer
// and for one that takes the steps in batches alike.
func TestProbesCatchAFunctionRangeOverItsGap(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		c := newChecker(t, abi)
		var prog *gen.Program
		gaps := map[uint64]uint32{}
		for seed := int64(1); len(gaps) == 0; seed++ {
			if seed > 10 {
				t.Fatalf("%s: no function followed by a gap in seeds 1-10", abi.Name())
			}
			var err error
			if _, prog, err = Produce(producer.Builtin{Version: 3}, abi, seed, gen.Options{}); err != nil {
				t.Fatal(err)
			}
			for _, f := range prog.Funcs {
				if len(f.Gap) > 0 {
					gaps[f.Addr] = uint32(len(f.Gap))
				}
			}
		}
		good, err := producer.BuiltinFrom(prog, 3, prog.FDEs())
		if err != nil {
			t.Fatal(err)
		}
		fdes := prog.FDEs()
		for i := range fdes {
			fdes[i].Size += gaps[fdes[i].Start]
		}
		bad, err := producer.BuiltinFrom(prog, 3, fdes)
		if err != nil {
			t.Fatal(err)
		}
		for _, cons := range []consumer.Consumer{consumer.NewBuiltin(), &batched{size: 64}} {
			res := c.Check(good, cons)
			if !res.Clean() || res.Probes[verdict.OK] == 0 {
				t.Fatalf("%s %T: the generator's table: clean %v, probes %v, %v", abi.Name(), cons, res.Clean(), res.Probes, res.Failures)
			}
			res = c.Check(bad, cons)
			if res.Counts[verdict.OK] != res.Steps || res.Probes[verdict.Wrong] == 0 || res.Clean() {
				t.Fatalf("%s %T: FDEs over their gaps: steps %v of %d, probes %v, clean %v", abi.Name(), cons, res.Counts, res.Steps, res.Probes, res.Clean())
			}
			f := res.Failures[0]
			if !f.Probe || f.Judgement.Field != "no-function" {
				t.Errorf("%s %T: first failure %+v, want a probe's", abi.Name(), cons, f)
			}
		}
		// Foreign code asks for none.
		c.SetProbes(false)
		if res := c.Check(bad, consumer.NewBuiltin()); res.Probes != [verdict.Count]int{} || !res.Clean() {
			t.Errorf("%s: probes off: probes %v, clean %v", abi.Name(), res.Probes, res.Clean())
		}
		c.SetProbes(true)
	}
}
