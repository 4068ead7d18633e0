package campaign

import (
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// A failure goes to the pattern of the function whose row gave the wrong
// value: a frame's CFA to the frame's own function, its PC (the return
// address its callee's row found) to the callee; no failing step, or a PC
// in no function, to the whole program.
func TestFailingPattern(t *testing.T) {
	t.Parallel()
	var prog *gen.Program
	var caller, callee *gen.Func
	for seed := int64(1); seed < 50 && callee == nil; seed++ {
		_, p, err := Produce(producer.Builtin{Version: 3}, target.X86_64, seed, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Funcs {
			for _, b := range p.Funcs {
				if a.Pattern != b.Pattern && a.Pattern != "entry" && b.Pattern != "entry" && a.Size > 4 && b.Size > 4 {
					prog, caller, callee = p, a, b
				}
			}
		}
	}
	if callee == nil {
		t.Fatal("no program with functions of two patterns")
	}
	// Frame 0 runs in callee; frame 1 returns into caller.
	frames := []frame.Frame{{PC: callee.Addr + 1}, {PC: caller.Addr + 2}, {Outermost: true}}
	res := func(k int, field string) *harness.Result {
		return &harness.Result{Failures: []harness.Failure{{Expected: frames, Judgement: oracle.Judgement{Verdict: verdict.Wrong, Frame: k, Field: field}}}}
	}
	for _, tc := range []struct {
		frame int
		field string
		want  string
	}{
		{0, "cfa", callee.Pattern},
		{0, "sp", callee.Pattern},
		{1, "pc", callee.Pattern},
		{1, "fp", callee.Pattern},
		{1, "cfa", caller.Pattern},
		{2, "outermost", caller.Pattern},
		{7, "depth", caller.Pattern}, // past the end: the last frame's callee
	} {
		if got := FailingPattern(prog, res(tc.frame, tc.field)); got != tc.want {
			t.Errorf("frame %d field %s: %s, want %s", tc.frame, tc.field, got, tc.want)
		}
	}
	if got := FailingPattern(prog, &harness.Result{}); got != WholeProgram {
		t.Errorf("no failing step: %s", got)
	}
	if got := FailingPattern(nil, res(0, "cfa")); got != WholeProgram {
		t.Errorf("no program: %s", got)
	}
	frames[0].PC = 1 // in no function
	if got := FailingPattern(prog, res(0, "cfa")); got != WholeProgram {
		t.Errorf("a PC in no function: %s", got)
	}
}
