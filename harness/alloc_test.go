package harness

import (
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// maxAllocsPerCheck bounds what checking a program allocates once the
// checker and the consumer have seen it: the section's decoding, the
// tracker's per-program state and the result. It is a per-program
// figure: a step that allocated would add one per instruction, hundreds.
const maxAllocsPerCheck = 64

// maxAllocsPerProbe bounds what each probe lookup (oracle.ProbePCs, at most
// oracle.MaxProbes a program) adds: the builtin consumer's NOINFO error.
const maxAllocsPerProbe = 10

// TestSteadyStepsDoNotAllocate checks one program of each target again
// and again with the builtin consumer: what that allocates must not grow
// with the steps, which are every instruction judged with a full
// backtrace.
func TestSteadyStepsDoNotAllocate(t *testing.T) {
	for _, abi := range target.All {
		c := newChecker(t, abi)
		img, _, err := Produce(producer.Builtin{Version: 3}, abi, 1, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cons := consumer.NewBuiltin()
		res := c.Check(img, cons)
		if !res.Clean() || res.Steps < 10*maxAllocsPerCheck {
			t.Fatalf("%s: %d steps, clean %v; want a clean program of more than %d steps", abi.Name(), res.Steps, res.Clean(), 10*maxAllocsPerCheck)
		}
		allocs := testing.AllocsPerRun(5, func() { c.Check(img, cons) })
		probes := res.Probes[verdict.OK]
		if want := maxAllocsPerCheck + maxAllocsPerProbe*probes; allocs > float64(want) {
			t.Errorf("%s: checking a program of %d steps and %d probes again allocates %.0f times, want at most %d (none per step)",
				abi.Name(), res.Steps, probes, allocs, want)
		}
	}
}
