package repro

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/report/html"
	"github.com/sfconform/sfconform/sframe"
)

// maxStackSlots bounds the stack picture: the slots from SP up to the
// highest address a frame names, at most this many.
const maxStackSlots = 96

// HTMLFailure is the replayed failure as the HTML report shows it: the
// instructions of the failing function with the row covering each and the
// oracle's frames where it last ran by the failing step, the failing
// step's frames expected against got, and the stack there. index numbers
// the failure in its report (its anchors); path is the reproducer's file.
// It is false when the case no longer fails at its step.
func (r *Replay) HTMLFailure(path string, index int) (html.Failure, bool) {
	f := r.Failure
	if f == nil {
		return html.Failure{}, false
	}
	c, img := r.Case, r.Img
	out := html.Failure{
		ID:      fmt.Sprintf("failure-%d", index),
		StepID:  fmt.Sprintf("failing-step-%d", index),
		Title:   fmt.Sprintf("%s %s x %s, seed %d: step %d at %s", c.Target, r.Producer, r.Consumer, c.Seed, f.Step, f.Function),
		File:    path,
		Verdict: f.Judgement.Verdict.String(),
		Detail:  f.Judgement.Detail,
	}
	fact := func(k, v string) {
		if v != "" {
			out.Facts = append(out.Facts, [2]string{k, v})
		}
	}
	fact("replay", "sfconform repro "+path)
	fact("SFrame version", strconv.Itoa(img.SFrameVersion))
	if r.Remade {
		fact("made by", "remade by "+r.Producer)
	} else {
		fact("made by", c.ProducerVersion)
	}
	fact("unwound by", c.ConsumerVersion)
	if m := c.Minimization; m != nil {
		if m.Skipped != "" {
			fact("program", fmt.Sprintf("%v, not minimized: %s", m.Original, m.Skipped))
		} else {
			fact("program", fmt.Sprintf("minimized from %v to %v keeping %s", m.Original, m.Minimized, m.Signature))
		}
	}
	if !r.SameFailure() {
		fact("now", "the step fails otherwise than recorded ("+c.Verdict.String()+" "+c.Detail+")")
	}
	if c.ReferenceRow != "" {
		fact("sfconform's own row", c.ReferenceRow)
	}
	out.Function, out.Steps = r.functionSteps(f.PC, f.Step)
	out.Frames = framesOf(img, f.Expected, f.Got)
	if c.Machine != nil && !r.Remade {
		out.Stack = stackOf(img, c.Machine, f.Expected, f.Got)
	}
	return out, true
}

// functionSteps lists the instructions of the function holding pc, each
// with the row covering it and its last run (path 0) up to step.
func (r *Replay) functionSteps(pc uint64, step int) (string, []html.Step) {
	img := r.Img
	sym, ok := img.SymbolAt(pc)
	if !ok || sym.Size == 0 {
		// No symbol: the instructions around the step.
		sym = image.Symbol{Name: img.Describe(pc), Addr: pc, Size: 1}
	}
	exec := r.Res.Executed
	if len(r.Res.PathSteps) > 0 {
		exec = exec[:min(len(exec), r.Res.PathSteps[0])]
	}
	last := map[uint64]int{}
	for k := 0; k <= step && k < len(exec); k++ {
		last[exec[k]] = k
	}
	verdictAt := map[int]string{}
	for _, f := range r.Res.Failures {
		if f.Path == 0 {
			verdictAt[f.Step] = f.Judgement.Verdict.String()
		}
	}
	var steps []html.Step
	for a := sym.Addr; a < sym.End() && len(steps) < 400; {
		s := html.Step{Addr: fmt.Sprintf("%#x", a), Where: img.Describe(a), Insn: "?", Row: RowText(img, a), Failing: a == pc}
		n := 1
		if code := img.Instruction(a); code != nil {
			if text, l, err := disasm.Instruction(img.Target, code, a); err == nil && l > 0 {
				s.Insn, n = text, l
			}
		}
		if k, ran := last[a]; ran {
			s.Ran = strconv.Itoa(k)
			s.Verdict = "OK"
			if v, bad := verdictAt[k]; bad {
				s.Verdict = v
			}
			if k < len(r.Res.ExpectedAt) {
				s.Oracle = framesLine(r.Res.ExpectedAt[k])
			}
		}
		steps = append(steps, s)
		a += uint64(n)
	}
	return sym.Name, steps
}

// framesLine is a backtrace on one line: each frame's PC (as symbol+offset)
// and CFA.
func framesLine(fs []frame.Frame) string {
	var parts []string
	for k, f := range fs {
		cfa := fmt.Sprintf("cfa %#x", f.CFA)
		switch {
		case f.Outermost:
			cfa = "outermost"
		case f.Signal:
			cfa = "signal"
		}
		parts = append(parts, fmt.Sprintf("#%d %#x %s", k, f.PC, cfa))
	}
	return strings.Join(parts, " · ")
}

// framesOf sets the failing step's frames side by side, each with the
// row it was unwound by (looked up at the frame's PC, a caller's at its
// return address - 1).
func framesOf(img *image.Image, expected, got []frame.Frame) []html.Frame {
	var out []html.Frame
	show := func(fs []frame.Frame, k int, field string) string {
		if k >= len(fs) {
			return "-"
		}
		f := fs[k]
		switch field {
		case "pc":
			return fmt.Sprintf("%#x %s", f.PC, img.Describe(f.PC))
		case "cfa":
			switch {
			case f.Outermost:
				return "outermost"
			case f.Partial:
				return "unknown"
			case f.Signal:
				return "signal frame"
			}
			return fmt.Sprintf("%#x", f.CFA)
		case "sp":
			return fmt.Sprintf("%#x", f.SP)
		}
		return fmt.Sprintf("%#x", f.FP)
	}
	for k := 0; k < max(len(expected), len(got)); k++ {
		fr := html.Frame{Index: k}
		fs := expected
		if k >= len(expected) {
			fs = got
		}
		fr.Row = RowText(img, LookupPC(fs, k))
		for _, name := range []string{"pc", "cfa", "sp", "fp"} {
			e, g := show(expected, k, name), show(got, k, name)
			fr.Fields = append(fr.Fields, html.Field{Name: name, Expected: e, Got: g, Differs: e != g})
		}
		out = append(out, fr)
	}
	return out
}

// stackOf draws the stack at the failing step from the machine state the
// consumer was given: SP and FP, each frame's CFA (the oracle's, and the
// consumer's where it differs), the slots holding each frame's return
// address and its caller's FP as the machine saved them, and the slots the
// consumer's row for each frame reads them from.
func stackOf(img *image.Image, m *corpus.Machine, expected, got []frame.Frame) *html.Stack {
	lo, hi := uint64(m.StackAddr), uint64(m.StackAddr)+uint64(m.StackSize)
	words := map[uint64]uint64{}
	for _, w := range m.Words {
		words[uint64(w.Addr)] = uint64(w.Value)
	}
	marks := map[uint64][]html.Mark{}
	mark := func(a uint64, kind, text string) {
		a &^= 7
		if a >= lo && a < hi {
			marks[a] = append(marks[a], html.Mark{Text: text, Kind: kind})
		}
	}
	if len(expected) > 0 {
		mark(expected[0].SP, "sp", "SP")
		mark(expected[0].FP, "fp", "FP")
	}
	for k, e := range expected {
		if e.Outermost || e.Partial || e.Signal {
			continue
		}
		mark(e.CFA, "cfa", fmt.Sprintf("CFA of #%d", k))
		if k < len(got) && !got[k].Outermost && !got[k].Partial && got[k].CFA != e.CFA {
			mark(got[k].CFA, "bad", fmt.Sprintf("the consumer's CFA of #%d", k))
		}
		if k+1 >= len(expected) {
			continue
		}
		caller := expected[k+1]
		// The slot the machine saved the return address in: the one
		// holding it nearest above frame k's SP, within its frame (s390x
		// saves it above the CFA, in its caller's register save area).
		for a := e.SP &^ 7; a < e.CFA+256 && a < hi; a += 8 {
			if v, ok := words[a]; ok && v == caller.PC {
				mark(a, "saved", fmt.Sprintf("return address of #%d (to #%d)", k, k+1))
				break
			}
		}
		if caller.FP != e.FP && caller.FP != 0 {
			for a := e.SP &^ 7; a < e.CFA+256 && a < hi; a += 8 {
				if v, ok := words[a]; ok && v == caller.FP {
					mark(a, "saved", fmt.Sprintf("FP of #%d, saved by #%d", k+1, k))
					break
				}
			}
		}
	}
	// Where the consumer's row for each frame looks for the caller's RA
	// and FP: at its CFA plus the row's offsets.
	{
		for k, g := range got {
			if g.Outermost || g.Partial || g.Signal || k+1 > len(got) {
				continue
			}
			sec, addr, _ := img.SectionAt(LookupPC(got, k))
			t, err := sframe.Decode(sec, addr)
			if err != nil {
				continue
			}
			_, row, err := t.FindRow(LookupPC(got, k))
			if err != nil {
				continue
			}
			for _, rr := range []struct {
				name string
				rule sframe.Rule
				ok   func(e frame.Frame, g frame.Frame) bool
			}{
				{"RA", row.RA, func(e, g frame.Frame) bool { return e.PC == g.PC }},
				{"FP", row.FP, func(e, g frame.Frame) bool { return e.FP == g.FP }},
			} {
				if rr.rule.Kind != sframe.RuleExpr || !rr.rule.Deref || rr.rule.Reg != sframe.RegCFA {
					continue
				}
				a := uint64(int64(g.CFA) + rr.rule.Offset)
				kind, text := "read", fmt.Sprintf("#%d's row reads the %s here (CFA%+d)", k, rr.name, rr.rule.Offset)
				if k+1 < len(expected) && k+1 < len(got) && !rr.ok(expected[k+1], got[k+1]) {
					kind, text = "bad", text+": the caller's "+rr.name+" it gives is wrong"
				}
				mark(a, kind, text)
			}
		}
	}
	var addrs []uint64
	for a := range marks {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	s := &html.Stack{}
	if len(addrs) == 0 {
		s.Note = "No frame lies in the stack copy the consumer was given."
		return s
	}
	from, to := addrs[0], addrs[len(addrs)-1]+8
	if n := (to - from) / 8; n > maxStackSlots {
		to = from + maxStackSlots*8
		s.Note = fmt.Sprintf("The %d slots from %#x up (of %d that frames name, up to %#x); higher addresses first.", maxStackSlots, from, n, addrs[len(addrs)-1])
	} else {
		s.Note = fmt.Sprintf("The slots from %#x to %#x, as the consumer was given them; higher addresses first.", from, to)
	}
	for a := to - 8; a >= from && a < to; a -= 8 {
		v := words[a]
		sl := html.Slot{Addr: fmt.Sprintf("%#x", a), Value: fmt.Sprintf("%#018x", v), Marks: marks[a]}
		if _, ok := img.SymbolAt(v); ok && v != 0 {
			sl.Symbol = img.Describe(v)
		}
		s.Slots = append(s.Slots, sl)
		if a == 0 {
			break
		}
	}
	return s
}
