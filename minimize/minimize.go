package minimize

import (
	"errors"
	"fmt"
	"time"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/verdict"
)

// Signature is what must stay the same while a failure shrinks: the
// verdict, the field and the frame depth of the first failing step, and
// the function whose row is at fault there (Culprit). A section's INVALID
// keeps its rule instead; a section the consumer refused, that it is
// refused.
type Signature struct {
	Verdict  verdict.Verdict `json:"verdict"`
	Field    string          `json:"field,omitempty"`
	Frame    int             `json:"frame"`
	Function string          `json:"function,omitempty"`
	Rule     string          `json:"rule,omitempty"` // INVALID: the rule broken
	Refused  bool            `json:"refused,omitempty"`
}

func (s Signature) String() string {
	switch {
	case s.Refused:
		return "the consumer refuses the section"
	case s.Verdict == verdict.Invalid:
		return "INVALID: " + s.Rule
	}
	field := ""
	if s.Field != "" {
		field = " " + s.Field
	}
	return fmt.Sprintf("%v%s at frame %d (%s's row)", s.Verdict, field, s.Frame, s.Function)
}

// ErrNoFailure is returned for a result that has nothing to shrink: it is
// clean, or the run itself stopped (a fault, the budget), which is no
// unwinding failure and no signature.
var ErrNoFailure = errors.New("minimize: no failure to keep")

// SignatureOf is the signature of a checked image's first failure: its
// first failing step, or else the consumer's refusal of the section, or
// else the section's first broken rule.
func SignatureOf(img *image.Image, res *harness.Result) (Signature, error) {
	switch {
	case len(res.Failures) > 0:
		return FailureSignature(img, &res.Failures[0]), nil
	case res.LoadErr != nil:
		return Signature{Verdict: verdict.Error, Frame: -1, Refused: true}, nil
	case res.Invalid():
		for _, v := range res.Violations {
			if !v.Warning {
				return Signature{Verdict: verdict.Invalid, Frame: -1, Rule: v.Rule}, nil
			}
		}
	}
	return Signature{}, ErrNoFailure
}

// FailureSignature is the signature of one failing step.
func FailureSignature(img *image.Image, f *harness.Failure) Signature {
	j := f.Judgement
	return Signature{Verdict: j.Verdict, Field: j.Field, Frame: j.Frame, Function: Culprit(img, j.Frame, j.Field, f.Expected)}
}

// Culprit names the function whose row the consumer applied to get the
// frame that went wrong: for a wrong PC, SP or FP of frame k > 0, frame
// k-1's (its row locates the caller's values); for a depth past the last
// frame, the last frame's; otherwise frame k's own. A caller frame's
// function is found at its return address minus one: a call may be its
// function's last instruction.
func Culprit(img *image.Image, k int, field string, expected []frame.Frame) string {
	switch {
	case k > 0 && (field == "pc" || field == "sp" || field == "fp"):
		k--
	case k >= len(expected):
		k = len(expected) - 1
	}
	if k < 0 || k >= len(expected) {
		return ""
	}
	pc := expected[k].PC
	if k > 0 && !expected[k-1].Signal {
		pc--
	}
	if s, ok := img.SymbolAt(pc); ok {
		return s.Name
	}
	return fmt.Sprintf("%#x", pc)
}

// Match finds the first failing step of a checked image with signature
// s, among those the checker kept (harness.Options.MaxFailures: with the
// default 1, only the first failing step counts). For a section's
// signature it returns nil and whether the section still has it.
func (s Signature) Match(img *image.Image, res *harness.Result) (*harness.Failure, bool) {
	switch {
	case s.Refused:
		return nil, res.LoadErr != nil
	case s.Verdict == verdict.Invalid:
		got, err := SignatureOf(img, &harness.Result{Violations: res.Violations})
		return nil, err == nil && got == s
	}
	for i := range res.Failures {
		if FailureSignature(img, &res.Failures[i]) == s {
			return &res.Failures[i], true
		}
	}
	return nil, false
}

// Options bound a minimization. Zero values take the defaults.
type Options struct {
	// MaxAttempts bounds the candidates produced and checked; the result
	// depends on nothing else, so it is the same on every machine.
	MaxAttempts int
	// MaxTime bounds the whole minimization, as a guard: when it strikes
	// the result says so (Result.Stopped), and a slower machine may
	// have stopped earlier.
	MaxTime time.Duration
}

// Defaults of Options.
const (
	DefaultMaxAttempts = 400
	DefaultMaxTime     = 20 * time.Second
)

// Result is a minimized failure.
type Result struct {
	Prog *gen.Program // laid out at harness.CodeBase
	Img  *image.Image
	Res  *harness.Result
	Sig  Signature
	// Failure is Res's first failing step with Sig; nil for a section's
	// signature.
	Failure *harness.Failure
	// Original and Minimized are the program's sizes before and after,
	// OriginalSteps and MinimizedSteps the instructions the failing run
	// executed.
	Original, Minimized           gen.Size
	OriginalSteps, MinimizedSteps int
	Attempts                      int // candidates produced and checked
	Elapsed                       time.Duration
	// Stopped says why the search ended before it ran out of reductions:
	// "attempts" or "time"; empty when no reduction was left to try.
	Stopped string
}

// Minimization is what a reproducer records of the minimization
// (repro.CaseInput.Minimization).
func (m *Result) Minimization() *corpus.Minimization {
	return &corpus.Minimization{Signature: m.Sig.String(), Original: repro.SizeOf(m.Original), Minimized: repro.SizeOf(m.Minimized),
		OriginalSteps: m.OriginalSteps, MinimizedSteps: m.MinimizedSteps, Attempts: m.Attempts,
		Seconds: m.Elapsed.Seconds(), Stopped: m.Stopped}
}

// Minimize shrinks prog (a program the failure happened in, path being
// the failing run's index among its paths) while prod's image of it, run
// on chk and judged with cons, fails with sig. Each candidate is a
// program gen rebuilds from a reduced plan (gen.Program.Reduce), laid out
// at harness.CodeBase alone and made by prod: a toolchain producer
// assembles and links the smaller text, so the result is what the tools
// make of it. A candidate is kept when it is smaller and fails with sig;
// its reductions are then searched again. The reductions are tried first
// all at once, then in halves, quarters and so on down to one at a time,
// which drops the many parts a failure does not need in a few attempts.
//
// The result is deterministic for a given MaxAttempts: candidates are
// tried in a fixed order. For a toolchain producer, the final check
// compares the rows with sfconform's own encoding (harness.CheckAgainst),
// so that the result's failure carries the reference row.
//
// When the program alone (not in the batch it failed in) does not fail
// with sig, the error says so and nothing is minimized.
func Minimize(chk *harness.Checker, prod producer.Producer, cons consumer.Consumer, prog *gen.Program, path int, sig Signature, opt Options) (*Result, error) {
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = DefaultMaxAttempts
	}
	if opt.MaxTime <= 0 {
		opt.MaxTime = DefaultMaxTime
	}
	m := &minimizer{chk: chk, prod: prod, cons: cons, sig: sig, opt: opt, start: time.Now()}
	cur, err := gen.Regenerate(prog.Target, prog.Seed, prog.GenOptions(), prog.Applied())
	if err != nil {
		return nil, fmt.Errorf("minimize: the program does not regenerate: %w", err)
	}
	orig := cur.Size()
	if cur.Paths() > 1 {
		if cur, err = cur.Reduce(gen.Reduction{Op: gen.ReducePath, N: path}); err != nil {
			return nil, fmt.Errorf("minimize: keeping path %d: %w", path, err)
		}
	}
	img, res, err := m.check(cur)
	if err != nil {
		return nil, err
	}
	if _, ok := sig.Match(img, res); !ok {
		got, _ := SignatureOf(img, res)
		return nil, fmt.Errorf("minimize: the program alone, on its failing path, does not fail with %v (it gives %v): nothing minimized", sig, got)
	}
	r := &Result{Original: orig, OriginalSteps: res.Steps}
	cur, r.Stopped = m.shrink(cur)
	// The final check, with the differential for a toolchain.
	img, res, err = m.final(cur)
	if err != nil {
		return nil, err
	}
	f, ok := sig.Match(img, res)
	if !ok {
		return nil, fmt.Errorf("minimize: the minimized program no longer fails with %v on its own check", sig)
	}
	r.Prog, r.Img, r.Res, r.Sig, r.Failure = cur, img, res, sig, f
	r.Minimized, r.MinimizedSteps = cur.Size(), res.Steps
	r.Attempts, r.Elapsed = m.attempts, time.Since(m.start)
	return r, nil
}

type minimizer struct {
	chk      *harness.Checker
	prod     producer.Producer
	cons     consumer.Consumer
	sig      Signature
	opt      Options
	start    time.Time
	attempts int
}

// out says whether the budget is spent, and which part of it.
func (m *minimizer) out() string {
	switch {
	case m.attempts >= m.opt.MaxAttempts:
		return "attempts"
	case time.Since(m.start) >= m.opt.MaxTime:
		return "time"
	}
	return ""
}

// shrink is the search: the current program's reductions in chunks of
// falling size, the first chunk whose program is smaller and still fails
// with the signature taken, until no chunk of one reduction is.
func (m *minimizer) shrink(cur *gen.Program) (*gen.Program, string) {
	for {
		cands := cur.Reductions()
		if len(cands) == 0 {
			return cur, ""
		}
		next := (*gen.Program)(nil)
		for size := len(cands); next == nil; size = (size + 1) / 2 {
			for start := 0; start < len(cands); start += size {
				if why := m.out(); why != "" {
					return cur, why
				}
				q := applyAll(cur, cands[start:min(start+size, len(cands))])
				if q == nil || !smaller(q.Size(), cur.Size()) {
					continue
				}
				if img, res, err := m.check(q); err == nil {
					if _, ok := m.sig.Match(img, res); ok {
						next = q
						break
					}
				}
			}
			if size == 1 {
				break
			}
		}
		if next == nil {
			return cur, ""
		}
		cur = next
	}
}

// applyAll applies the reductions that apply, in order; nil when none
// does.
func applyAll(p *gen.Program, rs []gen.Reduction) *gen.Program {
	applied := false
	for _, r := range rs {
		q, err := p.Reduce(r)
		if err != nil {
			continue
		}
		p, applied = q, true
	}
	if !applied {
		return nil
	}
	return p
}

// smaller: fewer code bytes, or as many in fewer functions or paths.
func smaller(a, b gen.Size) bool {
	if a.Bytes != b.Bytes {
		return a.Bytes < b.Bytes
	}
	return a.Functions < b.Functions || a.Paths < b.Paths
}

// check lays q out alone where campaign.Produce lays a program out, has
// the producer make its image and checks it. A producer's error is the
// candidate's failure to be a program, not the minimization's.
func (m *minimizer) check(q *gen.Program) (*image.Image, *harness.Result, error) {
	m.attempts++
	img, err := m.produce(q)
	if err != nil {
		return nil, nil, err
	}
	return img, m.chk.Check(img, m.cons), nil
}

func (m *minimizer) produce(q *gen.Program) (*image.Image, error) {
	if err := q.Layout(harness.CodeBase); err != nil {
		return nil, err
	}
	return m.prod.Produce(q)
}

// final checks the minimized program, with the differential for a
// toolchain producer.
func (m *minimizer) final(q *gen.Program) (*image.Image, *harness.Result, error) {
	img, err := m.produce(q)
	if err != nil {
		return nil, nil, fmt.Errorf("minimize: producing the minimized program: %w", err)
	}
	if producer.IsToolchain(m.prod) {
		if ref, err := harness.Reference(img, q); err == nil {
			return img, m.chk.CheckAgainst(img, ref, m.cons), nil
		}
	}
	return img, m.chk.Check(img, m.cons), nil
}
