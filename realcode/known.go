package realcode

import (
	"slices"

	"github.com/sfconform/sfconform/target"
)

// Known is a kind of finding already triaged: which outputs show it and
// where it is written up (docs/findings). Empty lists match anything.
type Known struct {
	Kinds      []string
	Tools      []string // dumpers, for dumper-* findings
	Assemblers []string
	Links      []string
	Targets    []target.Target
	Why        string
}

func (k Known) matches(g Group) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	return in(k.Kinds, g.Finding.Kind) && in(k.Tools, g.Finding.Tool) && in(k.Assemblers, g.Assembler) &&
		in(k.Links, g.Link) && (len(k.Targets) == 0 || slices.Contains(k.Targets, g.Target))
}

// KnownFindings are the campaign's triaged findings. Anything else it
// reports is new: a harness bug to fix or a toolchain behaviour to write
// up, before it goes in this list.
var KnownFindings = []Known{
	{
		Kinds: []string{"segment"}, Assemblers: []string{"gas-2.40", "gas-2.44", "gas-2.47"}, Links: []string{LinkStatic, LinkPIE},
		Why: "finding 032: GNU ld sizes PT_GNU_SFRAME as the sum of the input .sframe sections, not the merged section",
	},
	{
		Kinds: []string{"trailing"}, Assemblers: []string{"gas-2.40", "gas-2.44"}, Links: []string{LinkR},
		Why: "finding 033: ld -r 2.40 and 2.44 leave the merged .sframe at the inputs' total size, zero-padded",
	},
	{
		Kinds: []string{"dumper-error"}, Tools: []string{"objdump-2.40", "readelf-2.40", "objdump-2.44", "readelf-2.44"},
		Assemblers: []string{"gas-2.40", "gas-2.44"}, Links: []string{LinkR}, Targets: []target.Target{target.AArch64BE},
		Why: "finding 033: objdump and readelf 2.40/2.44 refuse that padded section when they byte-swap it",
	},
	{
		Kinds: []string{"check/decode"}, Assemblers: []string{"gas-2.40", "gas-2.44"}, Links: []string{LinkR},
		Why: "finding 033: ld -r 2.40 and 2.44 keep .rela.sframe at the unmerged offsets; sfconform check applies them into FREs and padding",
	},
	{
		Kinds: []string{"trailing"}, Assemblers: []string{"gas-2.47"}, Links: []string{LinkObject}, Targets: []target.Target{target.S390X},
		Why: "not a defect: gas 2.47 for s390x pads an object's .sframe with zeros to its 8-byte alignment; ld drops the padding and objdump 2.47 reads it",
	},
	{
		Kinds: []string{"decode", "no-fde", "no-sframe", "segment", "check/decode", "check/missing", "check/uncovered"}, Assemblers: []string{"llvm-mc-23"},
		Links: []string{LinkR, LinkStatic, LinkPIE},
		Why:   "finding 020: ld 2.47 ignores llvm-mc's SFrame v2 input (an empty .sframe; a PIE keeps only ld's own PLT FDEs)",
	},
}

// Triage says why a group of findings is known, or "" when it is new.
func Triage(g Group) string {
	for _, k := range KnownFindings {
		if k.matches(g) {
			return k.Why
		}
	}
	return ""
}
