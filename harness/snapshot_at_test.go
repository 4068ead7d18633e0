package harness

import (
	"errors"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// SnapshotAt's state is the step's: its PC is the one the run executes
// there, and the builtin unwinder, reading the snapshot instead of the
// live machine, gives the backtrace the oracle expects at that step.
func TestSnapshotAt(t *testing.T) {
	t.Parallel()
	for _, tg := range target.All {
		c, err := New(tg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := Produce(producer.Builtin{Version: 3}, tg, 5, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := c.Trace(img, consumer.NewBuiltin())
		steps := res.PathSteps[0]
		for _, k := range []int{0, 1, steps / 3, steps / 2, steps - 1} {
			snap, err := c.SnapshotAt(img, 0, k)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Regs.PC != res.Executed[k] {
				t.Errorf("%s step %d: pc %#x, the run executes %#x there", tg.Name(), k, snap.Regs.PC, res.Executed[k])
			}
			expected := expectedAt(t, tg, img, k)
			b := consumer.NewBuiltin()
			if err := b.Load(img); err != nil {
				t.Fatal(err)
			}
			out := make([]consumer.Result, 1)
			if err := b.Unwind([]consumer.Step{{Index: k, Regs: &snap.Regs, Mem: snap, Snapshot: snap}}, out); err != nil {
				t.Fatal(err)
			}
			if j := oracle.Compare(expected, out[0].Frames, out[0].Err); j.Frame >= 0 {
				t.Errorf("%s step %d: unwinding the snapshot: %v", tg.Name(), k, j.Detail)
			}
		}
		if _, err := c.SnapshotAt(img, 0, steps+5); err == nil {
			t.Errorf("%s: a snapshot past the run's end", tg.Name())
		}
		c.Close()
	}
}

// expectedAt is the oracle's backtrace at step k of path 0: with a
// consumer that answers nothing, every step is a failure carrying it.
func expectedAt(t *testing.T, tg target.Target, img *image.Image, k int) []frame.Frame {
	t.Helper()
	c, err := New(tg, Options{MaxFailures: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := c.Check(img, silent{})
	steps := stepFailures(res)
	if k >= len(steps) || steps[k].Step != k {
		t.Fatalf("step %d not judged", k)
	}
	return steps[k].Expected
}

// stepFailures are the result's failures but the probes'.
func stepFailures(res *Result) []Failure {
	var out []Failure
	for _, f := range res.Failures {
		if !f.Probe {
			out = append(out, f)
		}
	}
	return out
}

// silent unwinds nothing.
type silent struct{}

func (silent) Name() string                      { return "silent" }
func (silent) Supports(target.Target, int) error { return nil }
func (silent) Load(*image.Image) error           { return nil }
func (silent) BatchSize() int                    { return 1 }
func (silent) Close() error                      { return nil }
func (silent) Unwind(steps []consumer.Step, out []consumer.Result) error {
	for i := range out {
		out[i] = consumer.Result{Err: errors.New("silent")}
	}
	return nil
}

// BacktraceStats counts every judged step's expected backtrace once.
func TestBacktraceStats(t *testing.T) {
	t.Parallel()
	var stats BacktraceStats
	c, err := New(target.AArch64, Options{MaxFailures: 1 << 20, Backtraces: &stats})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	img, _, err := Produce(producer.Builtin{Version: 3}, target.AArch64, 9, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := c.Check(img, silent{})
	frames := 0
	steps := stepFailures(res)
	for _, f := range steps {
		frames += len(f.Expected)
	}
	if stats.Backtraces != res.Steps || len(steps) != res.Steps || stats.Frames != frames {
		t.Errorf("counted %d backtraces of %d frames; the run judged %d steps, %d frames", stats.Backtraces, stats.Frames, res.Steps, frames)
	}
	if stats.CBFBytes <= 0 || stats.CBFBytes >= stats.PlainBytes() {
		t.Errorf("CBF %d bytes, plain %d", stats.CBFBytes, stats.PlainBytes())
	}
}
