package pipelines

import (
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// knownFinding is a result that is written up: the rows it explains (the
// scenario, a case prefix, the ld series, the target, a substring of the
// detail) and the write-up.
type knownFinding struct {
	scenario, cs string
	series       []string // "" matches every series
	target       string   // "" matches every target
	detail       string
	Finding      string // docs/findings file, or a sentence for behaviour by design
}

var knownFindings = []knownFinding{
	{PostLink, "hello: strip", []string{"2.44", "2.47"}, "x86-64", "static", "037-ld-x86-plt-got-cfa-16.md"},
	{PostLink, "excpt: strip", []string{"2.44", "2.47"}, "x86-64", "static", "037-ld-x86-plt-got-cfa-16.md"},
	{GCSections, "hello.c", []string{"2.47"}, "x86-64", "lost their FDE: .plt", "038-ld-gc-sections-drops-plt-sframe.md"},
	{GCSections, "hello.c", []string{"2.40", "2.44"}, "", "no .sframe section", "038-ld-gc-sections-drops-plt-sframe.md"},
	{LDR, "excpt: ld -r (the first)", []string{"2.40", "2.44"}, "", "", "033-ld-r-sframe-zero-padded.md"},
	// ld -r turns the .rela.sframe entry of a discarded COMDAT copy into
	// R_*_NONE; 2.40 and 2.44 assert on it when they link the object
	// (bfd/elf-sframe.c); trunk skips such entries, citing PR ld/33401.
	{LDR, "excpt: final link", []string{"2.40", "2.44"}, "", "assertion fail", "PR ld/33401 (an R_*_NONE in .rela.sframe, left by ld -r for a discarded COMDAT copy; fixed on trunk)"},
	{Mixed, "", []string{"2.44"}, "", "ld refused the link", "039-ld-2.44-mixed-versions-link-fails.md"},
	// ld 2.47 reads version 3 only and ignores other input with a word,
	// leaving an empty .sframe when nothing is left; ld 2.40 says "no
	// .sframe will be created" and concatenates what it cannot read: 020
	// shows both with llvm-mc's version 2 objects (there with ld 2.44).
	{Mixed, "", []string{"2.47"}, "", "section ignored", "020-llvm-mc-interop.md"},
	{Mixed, "", []string{"2.47"}, "", "unexpected SFrame format version", "020-llvm-mc-interop.md"},
	{Mixed, "", []string{"2.40", "2.44"}, "", "no .sframe will be created", "020-llvm-mc-interop.md"},
	// lld knows nothing of SFrame: C++ links fail on the .sframe
	// relocations of discarded COMDAT copies, other links get the inputs'
	// sections one after the other, without PT_GNU_SFRAME.
	{LLD, "", nil, "", "lld refused the link", "045-lld-sframe-plain-section.md"},
	{LLD, "", nil, "", "no PT_GNU_SFRAME", "045-lld-sframe-plain-section.md"},
	{BOLT, "", nil, "", "", "046-bolt-stale-sframe.md"},
	{LTO, "excpt: -flto, excpt.o with -Wa,--gsframe + excpt2.o without", nil, "", "dropping all",
		"by design: gcc's lto-wrapper drops every -Wa option when the objects' options differ, with a warning"},
	{FarCode, "excpt: .sframe", []string{"2.40", "2.44"}, "", "relocation truncated to fit",
		"by design: SFrame v1 and v2 hold an FDE's function start as a 32-bit offset (v3: 64-bit), so ld cannot reach code 2 GiB away and refuses the link"},
	// A generated hot/cold function's cold part, entered with the frame
	// live: its .cfi_restore takes the FDE's first row (005).
	{Generated, "", nil, "", "_hot_cold.cold: SFrame row", "005-gas-cfi-restore-first-fre.md"},
	// The entry stub's outermost frame (.cfi_undefined of the RA), which
	// gas 2.44 does not carry into SFrame (008).
	{Generated, "", []string{"2.40", "2.44"}, "", "first: _start: SFrame row", "008-gas-mid-function-undefined-ra-ignored.md"},
	// Any x86-64 link with a .plt.got whose only (first) error is that
	// entry's row: ld 2.44 and 2.47 write CFA = SP+16 there. Last, so that
	// the rows above keep their own write-ups.
	{"", "", []string{"2.44", "2.47"}, "x86-64", "first: .plt.got+0:", "037-ld-x86-plt-got-cfa-16.md"},
}

// known returns the write-up explaining a finding row, or "".
func known(r Row, series string) string {
	for _, k := range knownFindings {
		if (k.scenario == "" || k.scenario == r.Scenario) && strings.HasPrefix(r.Case, k.cs) && (k.target == "" || k.target == r.Target) &&
			wanted(k.series, series) && strings.Contains(r.Detail, k.detail) {
			return k.Finding
		}
	}
	return ""
}

// seriesOf is the binutils series of a row's toolchain ("gas-2.47",
// "ld gas-2.47").
func seriesOf(tc string) string {
	tc = strings.TrimPrefix(tc, "ld ")
	return toolchain.Series(strings.TrimPrefix(tc, "gas-"))
}
