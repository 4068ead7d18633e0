package harness

import (
	"slices"
	"testing"

	"github.com/sfconform/sfconform/cbf"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// TestSignalsReachTheEmulator: a program of the signal pattern runs its
// handler on the paths whose signal the image lists, and on no path once
// the image lists none; both ways every step conforms. A trampoline
// without its signal flag (the rows a version 2 section would have) makes
// the steps in the handler and trampoline wrong: the backtrace is judged
// through the signal frame.
func TestSignalsReachTheEmulator(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			c := newChecker(t, abi)
			img, prog, err := Produce(producer.Builtin{Version: 3}, abi, 5, gen.Options{Patterns: []string{"signal"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(img.Signals) != len(img.Paths) {
				t.Fatalf("%d signals for %d paths", len(img.Signals), len(img.Paths))
			}
			handlers := map[uint64]bool{}
			for _, s := range img.Symbols {
				if s.Kind == image.KindSignalHandler {
					handlers[s.Addr] = true
				}
			}
			cons := consumer.NewBuiltin()
			res := c.Trace(img, cons)
			if !res.Clean() {
				t.Fatalf("not clean: %+v %v %v", res.Counts, res.RunErr, res.Failures)
			}
			entered := 0
			for _, pc := range res.Executed {
				if handlers[pc] {
					entered++
				}
			}
			if entered == 0 || entered > len(img.Paths) {
				t.Errorf("handlers entered %d times over %d paths", entered, len(img.Paths))
			}
			quiet := *img
			quiet.Signals = nil
			res = c.Trace(&quiet, cons)
			if !res.Clean() || slices.ContainsFunc(res.Executed, func(pc uint64) bool { return handlers[pc] }) {
				t.Errorf("without signals: clean %v, a handler ran", res.Clean())
			}
			// The trampoline without its signal flag.
			fdes := prog.FDEs()
			tramp := prog.SignalTrampoline()
			for i := range fdes {
				if fdes[i].Start == tramp.Addr {
					fdes[i].Signal = false
					for r := range fdes[i].Rows {
						fdes[i].Rows[r].Signal = false
					}
				}
			}
			bad, err := producer.BuiltinFrom(prog, sframe.Version3, fdes)
			if err != nil {
				t.Fatal(err)
			}
			if res := c.Check(bad, cons); res.Clean() {
				t.Errorf("a trampoline without the signal flag conforms: %+v", res.Counts)
			}
		})
	}
}

// TestBacktraceCBFSignal: the frame after a signal frame holds the
// interrupted PC itself, stored as a PC, not as a return address.
func TestBacktraceCBFSignal(t *testing.T) {
	t.Parallel()
	frames := []frame.Frame{{PC: 0x100}, {PC: 0x200, Signal: true}, {PC: 0x300}, {PC: 0x400, Outermost: true}}
	bt, err := cbf.Decode(BacktraceCBF(frames, false))
	if err != nil {
		t.Fatal(err)
	}
	want := []cbf.Kind{cbf.KindPC, cbf.KindRA, cbf.KindPC, cbf.KindRA}
	for i, f := range bt.Frames {
		if f.Kind != want[i] || f.Addr != frames[i].PC {
			t.Errorf("frame %d: %v %#x, want %v %#x", i, f.Kind, f.Addr, want[i], frames[i].PC)
		}
	}
}
