package validate

import (
	"errors"
	"strings"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/verdict"
)

// Section validates an image's SFrame sections: its one section, or
// every module's (a violation's Detail then names the module, its Offset
// counts in that module's section). A section that does not decode is
// one violation, the decoder's error; otherwise every rule Check reports
// is one. It returns nil for clean sections.
func Section(img *image.Image) []verdict.Violation {
	if len(img.Modules) == 0 {
		return section(img, img.SFrame, img.SFrameAddr)
	}
	var out []verdict.Violation
	if err := img.CheckModules(); err != nil {
		out = append(out, verdict.Violation{Rule: "modules", Detail: err.Error()})
	}
	for _, m := range img.Modules {
		for _, v := range section(img, m.SFrame, m.SFrameAddr) {
			v.Detail = "module " + m.Name + ": " + v.Detail
			out = append(out, v)
		}
	}
	return out
}

func section(img *image.Image, sec []byte, addr uint64) []verdict.Violation {
	t, err := sframe.Decode(sec, addr)
	if err != nil {
		return []verdict.Violation{violation(err)}
	}
	var out []verdict.Violation
	if want := sframe.ABI(img.Target); t.ABI != want {
		out = append(out, verdict.Violation{Rule: "ABI differs from the target", Offset: 4,
			Detail: "the header names " + t.ABI.String() + ", the image's code is for " + want.String()})
	}
	strict := len(t.Sections) > 0 && t.Sections[0].Header.Version == sframe.Version3
	for _, e := range t.Check(strict) {
		out = append(out, violation(e))
	}
	return out
}

// Invalid reports whether any violation is more than a warning.
func Invalid(vs []verdict.Violation) bool {
	for _, v := range vs {
		if !v.Warning {
			return true
		}
	}
	return false
}

func violation(err error) verdict.Violation {
	var fe *sframe.FormatError
	if !errors.As(err, &fe) {
		return verdict.Violation{Rule: "undecodable", Detail: err.Error()}
	}
	return verdict.Violation{Rule: Rule(fe.Err), Offset: fe.Off, Detail: fe.Msg, Warning: isWarning(fe.Err)}
}

// Rule is the name a violation of the sframe rule err (a sentinel such as
// sframe.ErrNotSorted) has.
func Rule(err error) string { return strings.TrimPrefix(err.Error(), "sframe: ") }

// isWarning names the findings that real toolchains produce and reference
// consumers accept: an FRE that starts at its function's end (GNU as 2.40
// to 2.47 write one for an empty function or CFI after the last
// instruction; libsframe 2.47 and objdump 2.47 accept it, although ld and
// objdump 2.40 and 2.44 abort on it).
func isWarning(err error) bool {
	return errors.Is(err, sframe.ErrFREStartAtEnd)
}
