package difffuzz

import (
	"fmt"

	"github.com/sfconform/sfconform/consumer"
)

// Disagreement is one place where a consumer's answer differs from the
// builtin consumer's: the load of the section (Step -1) or one step.
type Disagreement struct {
	Consumer string
	Step     int
	// Class is the name of the rule that explains the difference, or
	// Unclassified.
	Class string
	// Right says who is right by the specification: "builtin", the other
	// consumer's name, "either" where the specification leaves the
	// behaviour open, "neither".
	Right string
	// Finding is the docs/findings file the class is written up in, if
	// any.
	Finding string
	// Crash is true when the other consumer's process died here.
	Crash  bool
	Detail string
}

// Unclassified is the class of a disagreement no rule explains.
const Unclassified = "unclassified"

func (d Disagreement) String() string {
	where := "load"
	if d.Step == AfterSteps {
		where = "after the steps"
	}
	if d.Step >= 0 {
		where = fmt.Sprintf("step %d", d.Step)
	}
	crash := ""
	if d.Crash {
		crash = " CRASH"
	}
	return fmt.Sprintf("%s %s%s: %s (right: %s): %s", d.Consumer, where, crash, d.Class, d.Right, d.Detail)
}

// compare lists where a differs from the builtin consumer's answer, each
// classified.
func compare(o *Outcome, a *Answer) []Disagreement {
	b := o.Builtin
	var out []Disagreement
	add := func(step int, crash bool, detail string, br, ar *consumer.Result) {
		s := &situation{o: o, a: a, step: step, crash: crash, b: br, x: ar}
		d := Disagreement{Consumer: a.Consumer, Step: step, Crash: crash, Detail: detail}
		if r := classify(s); r != nil {
			d.Class, d.Right, d.Finding = r.Name, r.Right(s), r.Finding
		} else {
			d.Class, d.Right = Unclassified, "?"
		}
		out = append(out, d)
	}
	after := func() {
		if a.Crashed && a.CrashStep == AfterSteps {
			add(AfterSteps, true, fmt.Sprintf("builtin: %s; %s answered every step, then crashed freeing what the case left: %s", loadText(b), a.Consumer, a.Crash), nil, nil)
		}
	}
	switch {
	case a.Crashed && a.CrashStep == -1:
		add(-1, true, fmt.Sprintf("builtin: %s; %s crashed loading the section: %s", loadText(b), a.Consumer, a.Crash), nil, nil)
		return out
	case b.LoadErr != nil && a.LoadErr != nil:
		return out // both refuse
	case b.LoadErr == nil && a.LoadErr != nil:
		add(-1, false, fmt.Sprintf("builtin: %s; %s: %s", loadText(b), a.Consumer, loadText(a)), nil, nil)
		return out
	case b.LoadErr != nil:
		// The other read what builtin refused: the load is the
		// disagreement, or the crash that followed.
		switch {
		case !a.Crashed:
			add(-1, false, fmt.Sprintf("builtin: %s; %s: %s", loadText(b), a.Consumer, loadText(a)), nil, nil)
		case a.CrashStep == AfterSteps:
			after()
		default:
			add(a.CrashStep, true, fmt.Sprintf("builtin: %s; %s loaded it and crashed at step %d (pc %#x): %s", loadText(b), a.Consumer, a.CrashStep, stepPC(o.Case, a.CrashStep), a.Crash), nil, nil)
		}
		return out
	}
	for i := 0; i < a.Asked; i++ {
		br, ar := &b.Results[i], &a.Results[i]
		if sameResult(*br, *ar) {
			continue
		}
		add(i, false, fmt.Sprintf("pc %#x: builtin %s; %s %s", stepPC(o.Case, i), resultString(*br), a.Consumer, resultString(*ar)), br, ar)
	}
	switch {
	case !a.Crashed:
	case a.CrashStep == AfterSteps:
		after()
	default:
		var br *consumer.Result
		detail := fmt.Sprintf("pc %#x: %s crashed: %s", stepPC(o.Case, a.CrashStep), a.Consumer, a.Crash)
		if a.CrashStep < len(b.Results) {
			br = &b.Results[a.CrashStep]
			detail = fmt.Sprintf("pc %#x: builtin %s; %s crashed: %s", stepPC(o.Case, a.CrashStep), resultString(*br), a.Consumer, a.Crash)
		}
		add(a.CrashStep, true, detail, br, nil)
	}
	return out
}

func loadText(a *Answer) string {
	if a.LoadErr == nil {
		return "loaded the section"
	}
	if a.Crashed {
		return "crashed: " + a.Crash
	}
	return "refused: " + a.LoadErr.Error()
}
