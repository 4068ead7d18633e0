package packages

import (
	"strings"
)

// known is a group of findings already written up: the builds it explains
// (series, target, a prefix of the group's key, the type of the file) and
// the write-up.
type known struct {
	series  []string // "" matches every series
	target  string   // "" matches every target
	key     string   // prefix of Group.Key
	example string   // substring of Group.Example
	linked  bool     // only in linked files
	Finding string   // docs/findings file, or a sentence for behaviour by design
}

var knownFindings = []known{
	// ld 2.44 and 2.47 write CFA = SP+16 for x86-64's .plt.got entries,
	// which are 8 bytes without IBT and run at CFA = SP+8.
	// gas 2.40 and 2.44 leave out the FDE of a function whose CFI has
	// DW_CFA_GNU_args_size (GCC's .cfi_escape 0x2e in C++ that pushes
	// arguments); check finds the hole among its neighbours' FDEs. 2.44
	// says so in the build log ("skipping SFrame FDE; CFI insn
	// CFI_escape"), 2.40 does not.
	{series: []string{"2.40", "2.44"}, target: "x86-64", key: "missing [function]: lost: ", Finding: "042-gas-args-size-fde-dropped.md"},
	{series: []string{"2.40", "2.44"}, target: "x86-64", key: "uncovered [function]: lost: ", Finding: "042-gas-args-size-fde-dropped.md"},
	{series: []string{"2.44", "2.47"}, target: "x86-64", key: "static [.plt.got]: ", linked: true, Finding: "037-ld-x86-plt-got-cfa-16.md"},
	// The same rows seen by the dynamic check: a call through a .plt.got
	// entry, emulated, runs at CFA = SP+8 where the row says SP+16.
	{series: []string{"2.44", "2.47"}, target: "x86-64", key: "dynamic [.plt.got]: WRONG at frame N (cfa)", linked: true, Finding: "037-ld-x86-plt-got-cfa-16.md"},
}

// Triage returns the write-up explaining group g of file f of build r, or
// "" when it is new.
func Triage(r *BuildResult, f FileResult, g Group) string {
	for _, k := range knownFindings {
		if wanted(k.series, r.Series) && (k.target == "" || k.target == r.Target) &&
			strings.HasPrefix(g.Key, k.key) && strings.Contains(g.Example, k.example) && (!k.linked || f.Type != "REL") {
			return k.Finding
		}
	}
	return ""
}
