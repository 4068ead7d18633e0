package verdict

import "fmt"

// Verdict is the judgement of one step, or of a section for Invalid.
type Verdict uint8

const (
	OK     Verdict = iota
	Wrong          // a value of some frame differs from the machine's
	NoInfo         // the consumer had no FDE or row for the PC of the frame it stopped at
	Error          // the consumer failed: crashed, refused the section, could not apply a row
	// Invalid judges a section, not a step: it breaks a rule that the
	// specification or a strict consumer (libsframe, the Linux unwinder)
	// applies. Steps of an image with an invalid section are still judged.
	Invalid
)

// Count is the number of verdicts, for arrays indexed by Verdict.
const Count = int(Invalid) + 1

var names = [Count]string{"OK", "WRONG", "NOINFO", "ERROR", "INVALID"}

func (v Verdict) String() string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Parse is the inverse of String.
func Parse(s string) (Verdict, error) {
	for i, n := range names {
		if n == s {
			return Verdict(i), nil
		}
	}
	return 0, fmt.Errorf("unknown verdict %q", s)
}

// MarshalText and UnmarshalText keep verdicts readable in JSON.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	*v = p
	return err
}

// Violation is one broken rule of a section.
type Violation struct {
	Rule   string `json:"rule"`   // short name of the rule, e.g. "FDEs not sorted"
	Offset int    `json:"offset"` // byte offset in the section of the field concerned
	Detail string `json:"detail"`
	// Warning marks what real toolchains emit and reference consumers
	// accept although a strict reading refuses it; it does not make the
	// section Invalid.
	Warning bool `json:"warning,omitempty"`
}

func (v Violation) String() string {
	kind := "invalid"
	if v.Warning {
		kind = "warning"
	}
	return fmt.Sprintf("%s: %s at byte offset %d (0x%x): %s", kind, v.Rule, v.Offset, v.Offset, v.Detail)
}
