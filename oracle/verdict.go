package oracle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/verdict"
)

// Judgement is the outcome of comparing one step's backtraces.
type Judgement struct {
	Verdict verdict.Verdict
	Frame   int    // first frame that differs or failed; -1 when OK
	Field   string // "pc", "cfa", "sp", "fp", "outermost", "depth" for WRONG
	Detail  string
}

// Compare judges a consumer's backtrace against the expected one. err is
// the error the consumer stopped with, if any; got holds the frames it
// produced before stopping, the last of which may be Partial (reached but
// not unwound).
//
// The frames come first: any value that differs makes the step WRONG,
// whatever the consumer said after. Only when every frame it returned is
// right does its error decide: NOINFO when it wraps frame.ErrNoInfo, ERROR
// otherwise. A consumer that stops early without an error, or goes on
// past the outermost frame, is WRONG at that depth.
func Compare(expected, got []frame.Frame, err error) Judgement {
	n := min(len(expected), len(got))
	for i := 0; i < n; i++ {
		e, g := &expected[i], &got[i]
		if g.Partial && (i != len(got)-1 || err == nil) {
			return Judgement{verdict.Error, i, "", fmt.Sprintf("frame %d: the consumer marked a frame partial that is not the last of a failed backtrace", i)}
		}
		field := ""
		switch {
		case e.PC != g.PC:
			field = "pc"
		case e.SP != g.SP:
			field = "sp"
		case e.FP != g.FP:
			field = "fp"
		case g.Partial:
			// the consumer could go no further: nothing else to compare
		case e.Outermost != g.Outermost:
			field = "outermost"
		case !e.Outermost && !e.Signal && e.CFA != g.CFA:
			// A signal trampoline's CFA has no meaning: nothing to compare.
			field = "cfa"
		}
		if field != "" {
			return Judgement{verdict.Wrong, i, field, fmt.Sprintf("frame %d %s: expected %v, got %v", i, field, *e, *g)}
		}
	}
	if len(got) > len(expected) {
		return Judgement{verdict.Wrong, len(expected), "depth",
			fmt.Sprintf("consumer went past the outermost frame: %d frames, expected %d", len(got), len(expected))}
	}
	if err != nil {
		at := len(got)
		if at > 0 && got[at-1].Partial {
			at--
		}
		v := verdict.Error
		if errors.Is(err, frame.ErrNoInfo) {
			v = verdict.NoInfo
		}
		return Judgement{v, at, "", fmt.Sprintf("frame %d: %v", at, err)}
	}
	if len(got) < len(expected) {
		return Judgement{verdict.Wrong, len(got), "depth",
			fmt.Sprintf("consumer stopped after %d frames without an error, expected %d", len(got), len(expected))}
	}
	return Judgement{verdict.OK, -1, "", ""}
}

// FormatFrames lays out expected and got side by side for a report.
func FormatFrames(expected, got []frame.Frame) string {
	var b strings.Builder
	n := max(len(expected), len(got))
	for i := 0; i < n; i++ {
		var e, g string = "-", "-"
		if i < len(expected) {
			e = expected[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		mark := " "
		if e != g {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s #%d expected %s\n     got      %s\n", mark, i, e, g)
	}
	return b.String()
}
