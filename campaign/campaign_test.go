package campaign

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// TestPlanV2LeavesOutFarCode: sfconform's own version 2 encoder on x86-64
// is asked its version once and leaves out, with the reason, what version
// 2 cannot express (far code, DRAP); its programs hold none of it.
func TestPlanV2LeavesOutFarCode(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(producer.Builtin{Version: 2}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 2 || p.Toolchain || !slices.Contains(p.Mix.LeftOut, "far-code") || !slices.Contains(p.Mix.LeftOut, "drap") ||
		p.Mix.Why == "" || len(p.Mix.Beyond) != 0 {
		t.Fatalf("plan %+v", p)
	}
	for batch := range p.ProduceAhead([]int64{1, 2, 3, 4, 5, 6, 7, 8}, 4, 0, nil) {
		for _, pr := range batch {
			if pr.Err != nil {
				t.Fatal(pr.Err)
			}
			for _, f := range pr.Prog.Funcs {
				if slices.Contains(p.Mix.LeftOut, f.Pattern) {
					t.Errorf("seed %d has a %s function, which the mix leaves out", pr.Seed, f.Pattern)
				}
			}
		}
	}
}

// TestMixToolchainKeepsBeyond: a version 2 toolchain keeps in its mix what
// version 2 cannot express (DRAP: what the toolchain does with it is its
// result), but not far code, which no linker can write a version 2 table
// for; asked patterns are kept to those.
func TestMixToolchainKeepsBeyond(t *testing.T) {
	t.Parallel()
	tc := &recorder{Builtin: producer.Builtin{Version: 2}}
	m, err := NewMix(tc, target.X86_64, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(m.Beyond, "drap") || !slices.Contains(m.Patterns, "drap") || !slices.Equal(m.LeftOut, []string{"far-code"}) ||
		slices.Contains(m.Patterns, "far-code") || m.Version != 0 {
		t.Fatalf("mix %+v", m)
	}
	m, err = NewMix(tc, target.X86_64, 2, []string{"far-code", "drap", "leaf"})
	if err != nil || !slices.Equal(m.Patterns, []string{"drap", "leaf"}) {
		t.Fatalf("asked far-code, drap, leaf: %+v, %v", m, err)
	}
	if m, err := NewMix(tc, target.X86_64, 3, nil); err != nil || m.Version != 3 || len(m.LeftOut) != 0 || m.Patterns != nil {
		t.Fatalf("a version 3 toolchain: %+v, %v", m, err)
	}
}

// TestPlanUnsupported: a consumer that does not read the producer's
// version, and asked patterns none of which is in the mix, make an
// *UnsupportedError with the reason.
func TestPlanUnsupported(t *testing.T) {
	t.Parallel()
	ro, err := consumer.New("llvm-readobj-23")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var u *UnsupportedError
	_, err = NewPlan(producer.Builtin{Version: 3}, target.X86_64, nil, ro)
	if !errors.As(err, &u) || u.Consumer != "llvm-readobj-23" || u.Reason == "" {
		t.Errorf("builtin-v3 x llvm-readobj-23: %v", err)
	}
	p, err := NewPlan(producer.Builtin{Version: 2}, target.X86_64, []string{"far-code"}, consumer.NewBuiltin())
	if !errors.As(err, &u) || u.Consumer != "builtin" || p == nil || p.Version != 2 || !slices.Contains(p.Mix.LeftOut, "far-code") {
		t.Errorf("builtin-v2 asked only far-code: %v, plan %+v", err, p)
	}
	if _, err := NewPlan(producer.Builtin{Version: 2}, target.X86_64, []string{"far-code", "leaf"}, consumer.NewBuiltin()); err != nil {
		t.Errorf("builtin-v2 asked far-code and leaf: %v", err)
	}
}

// sink counts what a run hands it.
type sink struct {
	mu       sync.Mutex
	programs map[*Cell][]int64
	done     map[*Cell]int
}

func (s *sink) Program(c *Checked) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.programs[c.Cell] = append(s.programs[c.Cell], c.Program.Seed)
	return ""
}
func (s *sink) Note(*Cell, string) {}
func (s *sink) CellDone(c *Cell) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done[c]++
}

// TestRunSinkSeesEveryProgram: two workers run the cells; the sink sees
// every seed of every cell that runs once, in order, and every cell once
// when it is done; an unsupported cell runs no program.
func TestRunSinkSeesEveryProgram(t *testing.T) {
	t.Parallel()
	cells := []*Cell{
		NewCell(target.X86_64, "builtin-v2", "builtin"),
		NewCell(target.AArch64, "builtin-v3", "builtin"),
		NewCell(target.S390X, "builtin-v3", "builtin"),
		NewCell(target.X86_64, "builtin-v3", "llvm-readobj-23"),
	}
	seeds := Shard{}.Seeds(40, 6, 4)
	s := &sink{programs: map[*Cell][]int64{}, done: map[*Cell]int{}}
	Run(Config{Seeds: seeds, Batch: 4, Workers: 2}, cells, s)
	for _, c := range cells[:3] {
		if !slices.Equal(s.programs[c], seeds) || c.Programs != len(seeds) || c.Status != "clean" || c.Instructions == 0 ||
			c.Verdicts["OK"] != c.Instructions || s.done[c] != 1 || c.Plan() == nil || c.Seconds <= 0 {
			t.Errorf("%s: sink saw %v, done %d; cell %+v", c.Name(), s.programs[c], s.done[c], c)
		}
	}
	if c := cells[3]; c.Status != "unsupported" || c.Reason == "" || len(s.programs[c]) != 0 || s.done[c] != 1 {
		t.Errorf("%s: %+v, sink saw %v", c.Name(), c, s.programs[c])
	}
}

// TestCellAddFolds: a clean, a failing and a tools-failed program fold
// into the cell's counts, its per-pattern results and its status.
func TestCellAddFolds(t *testing.T) {
	t.Parallel()
	c := NewCell(target.X86_64, "builtin-v3", "builtin")
	p := Produced{Seed: 1}
	var err error
	if p.Img, p.Prog, err = Produce(producer.Builtin{Version: 3}, target.X86_64, 1, gen.Options{Patterns: []string{"leaf", "fp-frame"}}); err != nil {
		t.Fatal(err)
	}
	clean := &harness.Result{Steps: 10}
	clean.Counts[verdict.OK] = 10
	c.Add(p, clean, "")
	fn := p.Prog.Funcs[len(p.Prog.Funcs)-1]
	wrong := &harness.Result{Steps: 7, WrongFields: map[string]int{"cfa": 2}}
	wrong.Counts[verdict.OK], wrong.Counts[verdict.Wrong] = 5, 2
	wrong.Failures = []harness.Failure{{Expected: []frame.Frame{{PC: fn.Addr}}, Judgement: oracle.Judgement{Verdict: verdict.Wrong, Field: "cfa"}}}
	c.Add(p, wrong, "r1.json")
	c.Add(Produced{Seed: 3, Prog: p.Prog, Err: errors.New("as: internal error")}, nil, "r3.txt")
	c.Finish()
	if c.Programs != 3 || c.Failed != 2 || c.ToolFailed != 1 || c.Instructions != 17 || c.Verdicts["OK"] != 15 || c.Verdicts["WRONG"] != 2 ||
		c.WrongFields["cfa"] != 2 || c.Status != "failed" || !slices.Equal(c.Saved, []string{"r1.json", "r3.txt"}) {
		t.Fatalf("cell %+v", c)
	}
	if r := c.ByPattern[fn.Pattern]; r == nil || r.Programs != 3 || r.Failed != 1 || !slices.Equal(r.Reproducers, []string{"r1.json"}) {
		t.Errorf("pattern %s: %+v", fn.Pattern, r)
	}
	if r := c.ByPattern[WholeProgram]; r == nil || r.Failed != 1 || !slices.Equal(r.Reproducers, []string{"r3.txt"}) {
		t.Errorf("whole program: %+v", r)
	}
}

// A cell's rate is its instructions over its seconds, in the JSON summary.
func TestCellRate(t *testing.T) {
	t.Parallel()
	c := &Cell{Instructions: 3_000_000}
	c.SetSeconds(2)
	if c.InstrPerSecond != 1_500_000 {
		t.Errorf("rate %v, want 1500000", c.InstrPerSecond)
	}
	b, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(b), `"instructions_per_second":1500000`) {
		t.Errorf("JSON %s (%v) lacks the rate", b, err)
	}
}
