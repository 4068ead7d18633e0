package repro

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// Replay is a case run again.
type Replay struct {
	Case *corpus.Case
	// Producer and Consumer are what ran: the case's, or those asked for.
	Producer, Consumer string
	// Remade: the image was made again, from the program regenerated
	// with the case's coordinates, by Producer (another producer asked
	// for, or Options.Remake).
	Remade bool
	Prog   *gen.Program // the regenerated program, when Remade
	Img    *image.Image
	Res    *harness.Result // every failing step kept, every PC traced
	// Failure is the failing step at the case's step, if it still fails
	// there.
	Failure *harness.Failure
}

// Options change a replay.
type Options struct {
	Producer string // "" or the case's: the stored image; another: regenerate and remake
	Consumer string // "": the case's
	// Remake makes the image again with the case's producer, from the
	// regenerated program, instead of running the stored bytes.
	Remake bool
	// Consent is what the user allows the file to run (CheckConsent):
	// without it, a case naming exec:COMMAND or gas:DIR is refused.
	Consent Consent
}

// Run replays a case.
func Run(c *corpus.Case, opt Options) (*Replay, error) {
	if err := CheckConsent(c, opt); err != nil {
		return nil, err
	}
	r := &Replay{Case: c, Producer: c.Producer, Consumer: c.Consumer}
	if opt.Consumer != "" {
		r.Consumer = opt.Consumer
	}
	if r.Consumer == "" {
		r.Consumer = "builtin"
	}
	cons, err := consumer.New(r.Consumer)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	if opt.Producer != "" && opt.Producer != c.Producer || opt.Remake {
		if opt.Producer != "" {
			r.Producer = opt.Producer
		}
		if r.Prog, r.Img, err = Remake(c, r.Producer); err != nil {
			return nil, err
		}
		r.Remade = true
	} else if r.Img, err = c.Image(); err != nil {
		return nil, err
	}
	t := r.Img.Target
	if v := r.Img.SFrameVersion; v != 0 {
		if err := cons.Supports(t, v); err != nil {
			return nil, fmt.Errorf("consumer %s does not read SFrame v%d of %s: %w", r.Consumer, v, t.Name(), err)
		}
	}
	chk, err := harness.New(t, harness.Options{MaxFailures: 1 << 30, KeepExpected: true})
	if err != nil {
		return nil, err
	}
	defer chk.Close()
	if r.Remade && producer.IsToolchain(mustProducer(r.Producer)) {
		if ref, err := harness.Reference(r.Img, r.Prog); err == nil {
			r.Res = chk.CheckAgainst(r.Img, ref, cons)
		}
	}
	if r.Res == nil {
		r.Res = chk.Trace(r.Img, cons)
	} else {
		// The trace for the table: a second run, same steps.
		tr := chk.Trace(r.Img, cons)
		r.Res.Executed, r.Res.ExpectedAt = tr.Executed, tr.ExpectedAt
	}
	for i := range r.Res.Failures {
		if f := &r.Res.Failures[i]; f.Path == 0 && f.Step == c.Step {
			r.Failure = f
		}
	}
	return r, nil
}

func mustProducer(name string) producer.Producer {
	p, err := producer.New(name)
	if err != nil {
		return producer.Builtin{}
	}
	return p
}

// Remake regenerates a case's program and has prod make its image.
func Remake(c *corpus.Case, prod string) (*gen.Program, *image.Image, error) {
	p, err := producer.New(prod)
	if err != nil {
		return nil, nil, err
	}
	t, err := c.TargetOf()
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.SFrameVersion(t); err != nil {
		return nil, nil, fmt.Errorf("producer %s on %s: %w", prod, t.Name(), err)
	}
	prog, err := Regenerate(c)
	if err != nil {
		return nil, nil, err
	}
	if !slices.Equal(prog.Code, c.Code) && prog.Base == uint64(c.CodeAddr) {
		return nil, nil, fmt.Errorf("the program regenerated from the case's coordinates is not the case's code: made by another version of gen?")
	}
	img, err := p.Produce(prog)
	if err != nil {
		return nil, nil, fmt.Errorf("producer %s: %w", prod, err)
	}
	return prog, img, nil
}

// StillFails says whether the case's failure is still there: its step
// fails with the verdict recorded (a section's INVALID: still invalid; a
// refused section: still refused).
func (r *Replay) StillFails() bool {
	c := r.Case
	switch {
	case r.Failure != nil:
		return r.Failure.Judgement.Verdict == c.Verdict
	case c.Verdict == verdict.Invalid:
		return r.Res.Invalid()
	case strings.HasPrefix(c.Detail, "consumer refused the section"):
		return r.Res.LoadErr != nil
	}
	return false
}

// SameFailure says whether the step fails exactly as recorded: the same
// verdict, frame and field.
func (r *Replay) SameFailure() bool {
	f := r.Failure
	return f != nil && f.Judgement.Verdict == r.Case.Verdict && f.Judgement.Frame == r.Case.Frame && f.Judgement.Field == r.Case.Field
}

// RowText describes the row covering pc in img's section: the function,
// the row's start and its rules in the notation of the target's
// registers ("CFA rsp+8, RA [CFA-8], FP same").
func RowText(img *image.Image, pc uint64) string {
	sec, addr, _ := img.SectionAt(pc)
	t, err := sframe.Decode(sec, addr)
	if err != nil {
		return "the section does not decode: " + err.Error()
	}
	fde, row, err := t.FindRow(pc)
	if err != nil {
		return "no row: " + err.Error()
	}
	return fmt.Sprintf("FDE %#x+%#x, row from +%#x: %s", fde.Start, fde.Size, row.Start, Rules(img.Target, row))
}

// Rules writes a row's rules with the target's register names.
func Rules(t target.Target, r sframe.Row) string {
	if r.RA.Kind == sframe.RuleUndefined {
		s := "RA undefined (outermost frame)"
		if r.Signal {
			s += ", signal frame"
		}
		return s
	}
	s := fmt.Sprintf("CFA %s, RA %s, FP %s", r.CFA.Text(t.RegName), r.RA.Text(t.RegName), r.FP.Text(t.RegName))
	if r.MangledRA {
		s += fmt.Sprintf(", RA signed (key %s)", []string{"A", "B"}[r.PAuthKey&1])
	}
	if r.Signal {
		s += ", signal frame"
	}
	return s
}

// LookupPC is the PC a consumer looks frame k's row up at: frame 0's PC,
// a caller's return address minus one (the call may be its function's
// last instruction), or the PC a signal interrupted.
func LookupPC(frames []frame.Frame, k int) uint64 {
	pc := frames[k].PC
	if k > 0 && !frames[k-1].Signal {
		pc--
	}
	return pc
}

// Table writes the instructions around the failing step: address,
// disassembly, the row the section has there and the step's verdict, then
// the failing step's frames, expected against got, with the row each
// frame was unwound by.
func (r *Replay) Table(before, after int) string {
	var b strings.Builder
	exec := r.Res.Executed
	if len(r.Res.PathSteps) > 0 {
		exec = exec[:min(len(exec), r.Res.PathSteps[0])]
	}
	step := r.Case.Step
	verdictAt := map[int]*harness.Failure{}
	for i := range r.Res.Failures {
		if f := &r.Res.Failures[i]; f.Path == 0 {
			verdictAt[f.Step] = f
		}
	}
	fmt.Fprintf(&b, "%6s  %-18s  %-34s  %-8s  %s\n", "step", "address", "instruction", "verdict", "row in the section")
	for k := max(0, step-before); k <= min(len(exec)-1, step+after); k++ {
		pc := exec[k]
		v := "OK"
		if f := verdictAt[k]; f != nil {
			v = f.Judgement.Verdict.String()
		}
		mark := " "
		if k == step {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s%5d  %-18s  %-34s  %-8s  %s\n", mark, k, r.Img.Describe(pc), instruction(r.Img, pc), v, RowText(r.Img, pc))
	}
	if f := r.Failure; f != nil {
		fmt.Fprintf(&b, "\nstep %d: %v %s\n%s", f.Step, f.Judgement.Verdict, f.Judgement.Detail, oracle.FormatFrames(f.Expected, f.Got))
		b.WriteString("rows used, frame by frame (looked up at the frame's PC, a caller's at its return address - 1):\n")
		for k := range f.Expected {
			pc := LookupPC(f.Expected, k)
			fmt.Fprintf(&b, "  #%d %-20s %s\n", k, r.Img.Describe(pc), RowText(r.Img, pc))
		}
	}
	return b.String()
}

func instruction(img *image.Image, pc uint64) string {
	if code := img.Instruction(pc); code != nil {
		if text, _, err := disasm.Instruction(img.Target, code, pc); err == nil {
			return text
		}
	}
	return "?"
}
