package repro

import (
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/verdict"
)

// CaseInput is a failure to keep as a reproducer.
type CaseInput struct {
	Img  *image.Image
	Prog *gen.Program // nil for an image no program of gen's made
	Seed int64
	// Consumer is what unwound. ConsumerName names it when no consumer is
	// at hand (a campaign's sample): its version is then asked of a new
	// one.
	Consumer     consumer.Consumer
	ConsumerName string
	Res          *harness.Result
	// Failure is the failing step to record; nil: Res's first.
	Failure *harness.Failure
	// Minimization is what made Img and Prog smaller
	// (minimize.Result.Minimization); nil: none, and Skipped says why.
	Minimization *corpus.Minimization
	Skipped      string
	// Checker, when set, takes the machine state at the failing step.
	Checker *harness.Checker
}

// NewCase makes the reproducer of a failure, the one place every
// reproducer is made (run, matrix, check, repro, the suites): the step,
// verdict, backtraces and rows of the failure; the exact versions of the
// producer and consumer; the commands that build the image alone and
// gen's coordinates (for a program of gen's); the minimization; the
// machine state at the failing step (with a Checker).
func NewCase(in CaseInput) *corpus.Case {
	res := in.Res
	if in.Failure != nil {
		r := *res
		r.Failures = []harness.Failure{*in.Failure}
		res = &r
	}
	name := in.ConsumerName
	if in.Consumer != nil {
		name = in.Consumer.Name()
	}
	c := newCase(in.Img, in.Prog, in.Seed, name, res)
	c.ProducerVersion = producer.ImageVersion(in.Img)
	c.ConsumerVersion = consumerVersion(in.Consumer, name)
	if in.Consumer != nil {
		c.ConsumerHello = consumer.Hello(in.Consumer)
	}
	if in.Prog != nil {
		c.Build = producer.BuildCommands(in.Img, in.Prog)
		c.Generator = GeneratorOf(in.Prog)
	}
	switch {
	case in.Minimization != nil:
		c.Minimization = in.Minimization
	case in.Skipped != "":
		c.Minimization = &corpus.Minimization{Skipped: in.Skipped}
		if in.Prog != nil {
			s := SizeOf(in.Prog.Size())
			c.Minimization.Original, c.Minimization.Minimized = s, s
		}
	}
	if in.Checker != nil && len(res.Failures) > 0 {
		f := res.Failures[0]
		if snap, err := in.Checker.SnapshotAt(in.Img, f.Path, f.Step); err == nil {
			c.Machine = corpus.MachineOf(snap)
		}
	}
	return c
}

// consumerVersion is c's exact version, or that of a new consumer called
// name; the name itself when none can be made.
func consumerVersion(c consumer.Consumer, name string) string {
	if c != nil {
		return consumer.Version(c)
	}
	if name == "" {
		return ""
	}
	c, err := consumer.New(name)
	if err != nil {
		return name
	}
	defer c.Close()
	return consumer.Version(c)
}

// SizeOf is a program's size as a reproducer records it.
func SizeOf(s gen.Size) corpus.Size {
	return corpus.Size{Functions: s.Functions, Instructions: s.Instructions, Bytes: s.Bytes, Paths: s.Paths}
}

// GeneratorOf is gen's coordinates of a program.
func GeneratorOf(p *gen.Program) *corpus.Generator {
	o := p.GenOptions()
	g := &corpus.Generator{Seed: p.Seed, Funcs: o.Funcs, MaxDepth: o.MaxDepth, Patterns: o.Patterns, SFrameVersion: o.SFrameVersion, Paths: o.Paths, Idle: o.Idle}
	if g.Idle == 0 {
		// The seed's count now, written down: a replay must not depend on
		// how a later generator derives it.
		if g.Idle = gen.IdleCount(p.Seed); g.Idle == 0 {
			g.Idle = -1
		}
	}
	for _, r := range p.Applied() {
		g.Reductions = append(g.Reductions, corpus.Reduction{Op: r.Op, Func: r.Func, Callee: r.Callee, N: r.N})
	}
	return g
}

// newCase turns the first failure of a result into a reproducer's
// judgement fields. prog may be nil (a replayed case has no program).
func newCase(img *image.Image, prog *gen.Program, seed int64, consumerName string, res *harness.Result) *corpus.Case {
	c := &corpus.Case{Consumer: consumerName, Seed: seed, Frame: -1, Violations: res.Violations}
	path := 0
	if len(res.Failures) > 0 {
		path = res.Failures[0].Path
	} else if res.RunErr != nil {
		path = res.Paths - 1
	}
	c.SetImage(img, path)
	if prog != nil {
		c.Assembly = prog.Assembly()
	}
	if img.Record != nil && img.Record.Assembly != "" {
		c.Assembly = img.Record.Assembly // what the tools assembled
	}
	switch {
	case len(res.Failures) > 0:
		f := &res.Failures[0]
		c.Step, c.PC, c.Insn, c.Function = f.Step, corpus.Addr(f.PC), f.Insn, f.Function
		c.Verdict, c.Frame, c.Field, c.Detail = f.Judgement.Verdict, f.Judgement.Frame, f.Judgement.Field, f.Judgement.Detail
		c.Expected, c.Got = f.Expected, f.Got
		c.ExpectedCBF = harness.BacktraceCBF(f.Expected, false)
		c.GotCBF = harness.BacktraceCBF(f.Got, f.Err != nil)
		c.Row = harness.RowAt(img, f.PC)
		c.ReferenceRow = f.ReferenceRow
		for _, w := range f.Warnings {
			c.Detail += "; the producer warned: " + w.String()
		}
	case res.Invalid():
		c.Verdict, c.Detail = verdict.Invalid, firstInvalid(res.Violations).String()
	case res.LoadErr != nil:
		c.Verdict, c.Detail = verdict.Error, "consumer refused the section: "+res.LoadErr.Error()
	case res.RunErr != nil:
		c.Step, c.Verdict, c.Detail = res.Steps, verdict.Error, "run stopped: "+res.RunErr.Error()
	}
	return c
}

func firstInvalid(vs []verdict.Violation) verdict.Violation {
	for _, v := range vs {
		if !v.Warning {
			return v
		}
	}
	return verdict.Violation{}
}
