package oracle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/sframe"
)

// Verdict is the judgement of one step.
type Verdict uint8

const (
	OK     Verdict = iota
	Wrong          // a value of some frame differs from the machine's
	NoInfo         // the consumer had no FDE or row for a PC inside a function
	Error          // the consumer failed: crashed, refused the section, bad rule...
)

var verdictNames = [...]string{"OK", "WRONG", "NOINFO", "ERROR"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// ParseVerdict is the inverse of String.
func ParseVerdict(s string) (Verdict, error) {
	for i, n := range verdictNames {
		if n == s {
			return Verdict(i), nil
		}
	}
	return 0, fmt.Errorf("unknown verdict %q", s)
}

// MarshalText and UnmarshalText keep verdicts readable in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	*v = p
	return err
}

// ErrNoInfo is what a consumer wraps when it has no unwind information for
// a PC (the builtin consumer's sframe.ErrNoFDE and sframe.ErrNoRow count
// too).
var ErrNoInfo = errors.New("no unwind information")

// Judgement is the outcome of comparing one step's backtraces.
type Judgement struct {
	Verdict Verdict
	Frame   int    // first frame that differs or failed; -1 when OK
	Field   string // "pc", "cfa", "sp", "fp", "outermost", "depth" for WRONG
	Detail  string
}

// Compare judges a consumer's backtrace against the expected one. err is
// the error the consumer stopped with, if any; got holds the frames it
// produced before stopping.
func Compare(expected, got []Frame, err error) Judgement {
	n := min(len(expected), len(got))
	for i := 0; i < n; i++ {
		e, g := &expected[i], &got[i]
		field := ""
		switch {
		case e.PC != g.PC:
			field = "pc"
		case e.Outermost != g.Outermost:
			field = "outermost"
		case !e.Outermost && e.CFA != g.CFA:
			field = "cfa"
		case e.SP != g.SP:
			field = "sp"
		case e.FP != g.FP:
			field = "fp"
		}
		if field != "" {
			return Judgement{Wrong, i, field, fmt.Sprintf("frame %d %s: expected %v, got %v", i, field, *e, *g)}
		}
	}
	if len(got) > len(expected) {
		return Judgement{Wrong, len(expected), "depth",
			fmt.Sprintf("consumer went past the outermost frame: %d frames, expected %d", len(got), len(expected))}
	}
	if err != nil {
		v := Error
		if errors.Is(err, ErrNoInfo) || errors.Is(err, sframe.ErrNoFDE) || errors.Is(err, sframe.ErrNoRow) {
			v = NoInfo
		}
		return Judgement{v, len(got), "", fmt.Sprintf("frame %d: %v", len(got), err)}
	}
	if len(got) < len(expected) {
		return Judgement{Wrong, len(got), "depth",
			fmt.Sprintf("consumer stopped after %d frames without an error, expected %d", len(got), len(expected))}
	}
	return Judgement{OK, -1, "", ""}
}

// FormatFrames lays out expected and got side by side for a report.
func FormatFrames(expected, got []Frame) string {
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
