package difffuzz

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/sframe"
)

// situation is one disagreement to classify: the case's outcome, the
// other consumer's answer, the step (-1: the load) and, for a step both
// answered, both results.
type situation struct {
	o     *Outcome
	a     *Answer
	step  int
	crash bool
	b, x  *consumer.Result // builtin's and the other's result; nil at the load or a crash
	lib   *layout          // libsframeReading, once read
}

func (s *situation) l() *layout { return s.o.Layout }
func (s *situation) load() bool { return s.step < 0 }

// is says whether the consumer that answered wraps library lib: the rules
// are about a library's behaviour (its findings), whichever consumer
// name runs it (consumer.About.Library).
func (s *situation) is(lib string) bool {
	a, _ := consumer.Lookup(s.a.Consumer)
	return a.Library == lib
}

// builtinRefused: the builtin consumer refused the section.
func (s *situation) builtinRefused() bool { return s.o.Builtin.LoadErr != nil }

// libsframeReading is the layout as libsframe 2.47 reads it: every
// function start PC-relative (libsframe-ignores-pcrel-flag).
func (s *situation) libsframeReading() *layout {
	if s.lib == nil {
		s.lib = readLayoutAs(s.o.Case.Section, s.o.Case.Addr, true)
	}
	return s.lib
}

// native reports whether the section is in the host's byte order
// (little-endian: the consumers run on x86-64), which libsframe reads
// without flipping.
func (s *situation) native() bool {
	return len(s.l().sections) == 0 || s.l().sections[0].order == binary.LittleEndian
}

// crashIn reports whether the other consumer crashed with a report
// naming what it was doing (the protocol's crash reporter: "in PHASE").
func (s *situation) crashIn(phase string) bool {
	return s.crash && strings.Contains(s.a.Crash, "in "+phase)
}

// Rule classifies disagreements of one kind: Match says whether a
// disagreement is of the kind, Right who is right by the specification.
type Rule struct {
	Name string
	// Finding is the docs/findings file that writes the behaviour up, if
	// one does.
	Finding string
	// Spec is why the side named by Right is right: the sentence of the
	// specification, or why it leaves the matter open.
	Spec  string
	right string // "builtin", "other" (the consumer that disagreed), "either", "neither"
	match func(s *situation) bool
}

// Right names who is right in s.
func (r *Rule) Right(s *situation) string {
	if r.right == "other" {
		return s.a.Consumer
	}
	return r.right
}

// classify returns the first rule that matches s, or nil.
func classify(s *situation) *Rule {
	for _, r := range Rules {
		if r.match(s) {
			return r
		}
	}
	return nil
}

// Rules are the known classes of disagreement, most specific first.
var Rules []*Rule

func init() {
	Rules = append(Rules, crashRules...)
	Rules = append(Rules, loadRules...)
	for _, r := range append(structureRules, decodeRules...) {
		Rules = append(Rules, uncheckedRule(r))
	}
	Rules = append(Rules, walkRules...)
	for _, r := range lookupRules {
		Rules = append(Rules, malformedRule(r))
	}
	Rules = append(Rules, glibcRules...)
}

// structureRules are the layout rules about the header and the regions
// it declares, in the order the classes are tried.
var structureRules = []string{ruleFDEsPastEnd, ruleFREsPastEnd, ruleFDEsIntoFREs, ruleSubsections, ruleAuxHeader, ruleAttrOutside, ruleFRECount, ruleTrailing}

// decodeRules are the function rules builtin checks when it decodes a
// section (the FDE fields); it reads FREs only when a lookup needs them.
var decodeRules = []string{ruleFREType, ruleFDEType, ruleRepSize, ruleFREOutside}

// lookupRules are the function rules builtin finds only when a lookup
// reads the function's FREs.
var lookupRules = []string{ruleWordSize, ruleFREOutside, ruleFREsShared, ruleFREStart, ruleFREOrder, ruleWordCount}

// functionRules are the layout rules about one function's FDE and FREs.
var functionRules = []string{ruleFREType, ruleFDEType, ruleRepSize, ruleWordSize, ruleFREOutside, ruleFREsShared, ruleFREStart, ruleFREOrder, ruleWordCount}

var specOf = map[string]string{
	ruleFDEsPastEnd:  "v3 2.2: the FDE sub-section holds sfh_num_fdes entries from sfh_fdeoff, inside the section",
	ruleFREsPastEnd:  "v3 2.2: the FRE sub-section is sfh_fre_len bytes from sfh_freoff, inside the section",
	ruleFDEsIntoFREs: "v3 2.2: the two sub-sections tile the section: the FDE entries end where the FRE sub-section starts",
	ruleSubsections:  "v3 2.2: the FDE sub-section comes before the FRE sub-section",
	ruleAuxHeader:    "v3 2.2: the auxiliary header follows the header, inside the section",
	ruleAttrOutside:  "v3 2.3.2: a function's attribute lies at sfdi_func_start_fre_off in the FRE sub-section",
	ruleFRECount:     "v3 2.2: sfh_num_fres is the number of FREs in the section, the sum of the functions' counts",
	ruleTrailing:     "v3 2.2: the section ends with its FRE sub-section (sfh_fre_len bytes)",
	ruleFREType:      "v3 2.3.3.3: there are three FRE types, 0 to 2",
	ruleFDEType:      "v3 2.3.3.2: there are two FDE types, 0 and 1",
	ruleRepSize:      "v3 2.3.3.1: a PCMASK FDE looks FREs up at PC % REP_BLOCK_SIZE, which a size of 0 does not define",
	ruleWordSize:     "v3 2.4.1: data words are 1, 2 or 4 bytes (size codes 0-2)",
	ruleFREOutside:   "v3 2.4: a function's FREs lie in the FRE sub-section",
	ruleFREStart:     "v3 2.4: an FRE's start is an offset from the start of its function, inside it",
	ruleFREOrder:     "v3 2.3.3.1: FREs are looked up by the last start <= the PC offset, which needs increasing starts",
	ruleWordCount:    "v3 3.1 and 3.2: the data words the ABI's default layout (after the header's fixed offsets) or the flexible pairs define",
	ruleFREsShared:   "v3 2.2 and 2.4: the FRE sub-section holds each function's attribute and FREs; two functions do not share them",
}

// crashRules classify the crashes of libsframe, each on a section the
// layout shows to be malformed: builtin is right to refuse it (or the
// lookup), libsframe is wrong to die on it.
var crashRules = []*Rule{
	{
		Name:    "libsframe-crash-fde-count",
		Finding: "docs/findings/017-libsframe-crash-huge-num-fdes.md",
		Spec:    specOf[ruleFDEsPastEnd] + "; libsframe's sframe_decode (native byte order) reads num_fdes entries wherever they run.",
		right:   "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.crashIn("sframe_decode") && s.native() && s.l().has(ruleFDEsPastEnd)
		},
	},
	{
		Name:    "libsframe-crash-flipping",
		Finding: "docs/findings/036-libsframe-flip-writes-past-buffer.md",
		Spec:    "v3 2.2 and 2.4: every FDE, attribute and FRE lies inside the section. libsframe's foreign-endian path (flip_sframe) follows sfdi_func_start_fre_off and the FRE counts as they are and passes buf_end - fp as the room left, which wraps around once fp is past the end: it flips (writes) bytes outside the buffer.",
		right:   "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || !s.crashIn("sframe_decode") || s.native() {
				return false
			}
			for _, r := range append(append(structureRules, functionRules...), ruleFREsShared) {
				if s.l().has(r) {
					return true
				}
			}
			return false
		},
	},
	{
		Name:  "libsframe-crash-fre-offset",
		Spec:  specOf[ruleAttrOutside] + ". sframe_decode (native byte order) reads each v3 attribute at sfdi_func_start_fre_off wherever it points.",
		right: "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.crashIn("sframe_decode") && s.native() && (s.l().has(ruleAttrOutside) || s.l().has(ruleFREOutside))
		},
	},
	{
		Name:    "libsframe-crash-fre-subsection",
		Finding: "docs/findings/017-libsframe-crash-huge-num-fdes.md",
		Spec:    specOf[ruleFREsPastEnd] + " (after the auxiliary header, " + specOf[ruleAuxHeader] + "); sframe_decode copies fre_len bytes from the end of the auxiliary header + freoff without looking at the buffer's size (the same unchecked header as 017, other fields).",
		right:   "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.crashIn("sframe_decode") && s.native() && (s.l().has(ruleFREsPastEnd) || s.l().has(ruleSubsections) || s.l().has(ruleAuxHeader))
		},
	},
	{
		Name:    "libsframe-overflow-data-words",
		Finding: "docs/findings/028-libsframe-fre-datawords-stack-overflow.md",
		Spec:    specOf[ruleWordCount] + " (at most 6 in any layout: MAX_NUM_DATAWORDS). sframe_find_fre's sframe_decode_fre copies count x size bytes (up to 15 x 4 = 60) into the 24-byte fre_datawords array of an sframe_frame_row_entry on its stack, before any check: a stack buffer overflow, which its own assertion on the FRE size or the stack protector turns into an abort when the copy reaches fre_info or the canary.",
		right:   "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || !s.crash || s.load() || !s.l().wordsOverflow() || s.crashIn("sframe_decode") {
				return false
			}
			// The copy overwrites fre_info (the assertion), the stack
			// protector's canary, or sframe_find_fre's caller's frame:
			// the crash then comes after the call, in our code.
			return strings.Contains(s.a.Crash, "sframe_decode_fre: Assertion") || strings.Contains(s.a.Crash, "stack smashing") ||
				s.crashIn("idle")
		},
	},
	{
		Name:    "libsframe-abort-fre-type",
		Finding: "docs/findings/035-libsframe-fre-type-assertion-abort.md",
		Spec:    specOf[ruleFREType] + "; sframe_find_fre asserts (sframe_fre_start_addr_size) on any other, and the process aborts.",
		right:   "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.crash && strings.Contains(s.a.Crash, "sframe_fre_start_addr_size") && s.l().has(ruleFREType)
		},
	},
	{
		Name:    "libsframe-crash-rep-size-zero",
		Finding: "docs/findings/029-libsframe-pcmask-rep-size-zero-sigfpe.md",
		Spec:    specOf[ruleRepSize] + "; sframe_find_fre divides by it (SIGFPE).",
		right:   "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.crashIn("sframe_find_fre") && strings.Contains(s.a.Crash, "(FPE)") && s.l().has(ruleRepSize)
		},
	},
	{
		Name:  "libsframe-crash-reading-outside",
		Spec:  "v3 2.2 and 2.4: every FDE, attribute and FRE lies inside the section; sframe_find_fre follows offsets and counts read from it wherever they point, past the FRE data it copied.",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || !s.crashIn("sframe_find_fre") {
				return false
			}
			for _, r := range []string{ruleFDEsPastEnd, ruleFREsPastEnd, ruleAttrOutside, ruleFREOutside, ruleFRECount} {
				if s.l().has(r) {
					return true
				}
			}
			return false
		},
	},
}

// loadRules classify a section one consumer reads and the other does not,
// other than for a broken structure rule (uncheckedRule).
var loadRules = []*Rule{
	{
		Name:  "libsframe-refuses-v1",
		Spec:  "v3 2.1.2: version 1 is obsolete and should not be used; libsframe 2.46+ no longer reads it, builtin still does. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.load() && !s.crash && !s.builtinRefused() && s.a.Refused() &&
				len(s.l().sections) > 0 && s.l().sections[0].version == 1
		},
	},
	{
		Name:  "function-past-address-space",
		Spec:  "v3 2.3.1: a function is [start, start + size); one that runs past 2^64-1 is no range of addresses, and the specification does not say what a tracer does with it. builtin refuses the section, libsframe loads it (and its 64-bit signed arithmetic never notices). Either is right.",
		right: "either",
		match: func(s *situation) bool {
			return s.load() && !s.crash && s.builtinRefused() && !s.a.Refused() && firstStructureRule(s.l()) == "" && s.l().has(ruleEndWraps)
		},
	},
	{
		Name:  "builtin-reads-another-abi",
		Spec:  "v3 2.2.1: the ABI/arch identifier names the target the section is for; our C consumer refuses a section whose identifier is not the image's target, builtin's consumer unwinds the image with the rules of the ABI the section names.",
		right: "other",
		match: func(s *situation) bool {
			return s.load() && !s.crash && !s.builtinRefused() && s.a.Refused() && len(s.l().sections) > 0 &&
				s.l().sections[0].abi != uint8(s.o.Case.Target)
		},
	},
	{
		Name:    "libsframe-foreign-aux-header-refused",
		Finding: "docs/findings/041-libsframe-foreign-aux-header-refused.md",
		Spec:    "v3 2.2 (and v2 2.2): sfh_auxhdr_len is the size of an auxiliary header after the SFrame header, sfh_fdeoff and sfh_freoff count from its end, and nothing limits it. libsframe's foreign-endian path (flip_header) refuses any section whose auxiliary header is not empty, while its native path skips it: builtin reads the section in both byte orders.",
		right:   "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || !s.load() || s.crash || s.builtinRefused() || !s.a.Refused() || len(s.l().sections) == 0 {
				return false
			}
			sec := s.l().sections[0]
			return sec.order != binary.LittleEndian && sec.auxLen > 0 && firstStructureRule(s.l()) == ""
		},
	},
	{
		Name:  "libsframe-foreign-endian-checks-at-load",
		Spec:  "The section breaks a rule about a function's FREs (" + strings.Join(functionRules, ", ") + "). Or FRE bytes no function refers to, which the specification does not forbid. libsframe's foreign-endian path walks every FRE while flipping, adds up their sizes, and refuses the section when they do not account for the rest of the buffer; builtin decodes lazily and fails the lookups that reach the bad FRE. The specification says what is malformed, not when to notice. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if !s.is("libsframe") || !s.load() || s.crash || s.builtinRefused() || !s.a.Refused() || len(s.l().sections) == 0 {
				return false
			}
			if s.l().sections[0].order == binary.LittleEndian {
				return false // the host's order: libsframe's native path
			}
			for _, r := range append(functionRules, ruleFRECount, ruleTrailing, ruleFREsShared, factFREGap) {
				if s.l().has(r) {
					return true
				}
			}
			return false
		},
	},
}

// uncheckedRule is the class of a section that breaks structure rule r,
// which builtin refuses and libsframe's native-endian decoder loads.
func uncheckedRule(r string) *Rule {
	return &Rule{
		Name:  "libsframe-unchecked-" + r,
		Spec:  specOf[r] + "; libsframe's native-endian sframe_decode checks only the preamble and fdeoff <= freoff, and loads the section.",
		right: "builtin",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.load() && !s.crash && s.builtinRefused() && !s.a.Refused() && firstStructureRule(s.l()) == r
		},
	}
}

// firstStructureRule is the first structure rule the layout finds broken.
func firstStructureRule(l *layout) string {
	for _, b := range l.broken {
		for _, r := range append(structureRules, decodeRules...) {
			if b.rule == r {
				return r
			}
		}
	}
	return ""
}

// walkRules classify steps where both read the section and walk apart.
var walkRules = []*Rule{
	{
		Name:  "unusual-fixed-offsets",
		Spec:  "v3 3.1.1-3.1.3: AMD64 tracks the FP per FRE and keeps the RA at CFA-8, AArch64 and s390x track both per FRE. A header with other fixed offsets contradicts its ABI's layout, and the specification gives no reading of it: builtin and libsframe place the data words after the fixed offsets (and libsframe's getters return a fixed offset where no word is), our C walk then applies its s390x register rule to an odd fixed offset. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			return s.b != nil && s.x != nil && s.l().has(ruleFixed)
		},
	},
	{
		Name:  "ra-offset-zero",
		Spec:  "v3 3.1.2: on AArch64 \"RA = CFA + offset2\", with no value set apart; SFRAME_FRE_RA_OFFSET_INVALID (0) is defined as s390x's padding (3.1.3, v2 erratum 1). builtin reads an RA word of 0 as \"RA not saved\" on every ABI (still in the link register), libsframe and glibc as the RA at CFA+0.",
		right: "other",
		match: func(s *situation) bool {
			if s.b == nil || s.x == nil {
				return false
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			if c >= len(s.b.Frames) {
				return false
			}
			pc := lookupPC(s.b.Frames, c)
			if s.is("glibc") {
				pc = s.b.Frames[c].PC
			}
			for _, f := range s.l().fdeAt(pc) {
				sec := s.l().sectionOf(f)
				if j := freAt(f, pc); j >= 0 && sec.abi != 4 && sec.fixedRA == 0 && !(sec.version == 3 && f.fdeType() == 1) {
					if r := f.fres[j]; r.count() >= 2 && r.words[1] == 0 {
						return true
					}
				}
			}
			return false
		},
	},
	{
		Name:  "libsframe-reads-first-section-only",
		Spec:  "v3 2.2: an SFrame section is one header and its sub-sections; the specification does not speak of several laid back to back, as linkers leave them when they concatenate instead of merging. builtin reads them all; libsframe's sframe_decode the first. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if !s.is("libsframe") || len(s.l().sections) == 0 {
				return false
			}
			if s.load() && !s.crash && !s.builtinRefused() && s.a.Refused() && !s.native() && len(s.l().sections) > 1 {
				return true // the foreign-endian path refuses anything after the first section
			}
			if s.load() && !s.crash && s.builtinRefused() && !s.a.Refused() {
				// builtin refuses what follows the first section, which
				// libsframe does not read: the first section breaks no
				// rule builtin checks when it decodes, and more follows.
				first := s.l().sections[0]
				if first.end >= len(s.o.Case.Section) {
					return false
				}
				for _, b := range s.l().broken {
					if b.off < first.end && slices.Contains(append(structureRules, decodeRules...), b.rule) {
						return false
					}
				}
				return true
			}
			if s.b == nil || s.x == nil || len(s.l().sections) < 2 {
				return false
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			if c >= len(s.b.Frames) {
				return false
			}
			for _, f := range s.l().fdeAt(lookupPC(s.b.Frames, c)) {
				if s.l().sectionOf(f) != s.l().sections[0] {
					return true
				}
			}
			return false
		},
	},
	{
		Name:    "libsframe-ignores-pcrel-flag",
		Finding: "docs/findings/021-libsframe-v2-start-taken-as-pcrel.md",
		Spec:    "v3 2.1.3 (and v2 erratum 1): without SFRAME_F_FDE_FUNC_START_PCREL a function's start is an offset from the start of the section. libsframe 2.47's sframe_find_fre adds the FDE's own offset whatever the flag says, so in such a section (GNU ld 2.44 and older write them) it looks every function up 28 + 20 x index bytes (v2) past its start: it finds the wrong rows, or none.",
		right:   "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || s.b == nil || s.x == nil || len(s.l().sections) == 0 {
				return false
			}
			for _, sec := range s.l().sections {
				if sec.flags&4 != 0 || sec.version < 2 {
					return false
				}
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			for _, frames := range [][]frame.Frame{s.b.Frames, s.x.Frames} {
				if c < len(frames) {
					pc := lookupPC(frames, c)
					if len(s.l().fdeAt(pc)) > 0 || len(s.libsframeReading().fdeAt(pc)) > 0 {
						return true
					}
				}
			}
			return false
		},
	},
	{
		Name:  "start-wraps-around",
		Spec:  "v3 2.3.1: a function's start is the anchor (the field, or the section) plus a signed 64-bit offset; the specification does not say what a start below 0, above 2^64-1, or 2^63 or more away from the section is. builtin computes addresses modulo 2^64 (such a function lies at the top of the address space), libsframe compares signed 64-bit section-relative offsets, which overflow (the function lies below the section, out of order). Either is right.",
		right: "either",
		match: func(s *situation) bool {
			// The signed order misleads every binary search over the
			// index, libsframe's and our C walk's alike.
			return s.b != nil && s.x != nil && s.l().has(ruleStartWraps)
		},
	},
	{
		Name:  "unsorted-under-sorted-flag",
		Spec:  "v3 2.3.1: with SFRAME_F_FDE_SORTED set the FDEs are sorted by start; here they are not, so the section is malformed and the specification does not say what a tracer does with it. builtin sorts its own index and finds the function, libsframe's binary search trusts the flag and misses it. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			return s.is("libsframe") && s.x != nil && stopKind(s.x.Err) == "noinfo" && s.l().has(ruleNotSorted)
		},
	},
	{
		Name:  "libsframe-needs-sorted-flag",
		Spec:  "v3 2.1.3 and 2.3.1: SFRAME_F_FDE_SORTED says the FDEs are sorted, which allows a binary search; without it the information is the same. libsframe's sframe_find_fre (and glibc's copy of it) refuses every lookup in a section without the flag (SFRAME_ERR_FDE_NOTSORTED); builtin sorts its index itself.",
		right: "builtin",
		match: func(s *situation) bool {
			// Every lookup fails: the walk ends at frame 0, without
			// information, or (glibc) as the outermost frame when its FP
			// is 0.
			if s.x == nil || len(s.x.Frames) != 1 || len(s.l().sections) == 0 || s.l().sections[0].flags&1 != 0 {
				return false
			}
			f := s.x.Frames[0]
			return stopKind(s.x.Err) == "noinfo" || s.is("glibc") && f.Outermost && f.FP == 0
		},
	},
	{
		Name:    "libsframe-pc-distance-truncated",
		Finding: "docs/findings/016-libsframe-pc-distance-truncated.md",
		Spec:    "v3 2.3.1: a function covers [start, start + sfdi_func_size); libsframe compares the PC's distance from the start truncated to 32 bits, so a PC 4 GiB or more past a function is taken for one inside it.",
		right:   "builtin",
		match:   farPC,
	},
	{
		Name:  "libsframe-empty-fde-not-outermost",
		Spec:  "v3 1.2: \"An SFrame FDE of type SFRAME_FDE_TYPE_DEFAULT with no FREs is used to indicate an outermost frame\"; libsframe's sframe_find_fre finds no FRE in it and the walk stops without information.",
		right: "builtin",
		match: func(s *situation) bool {
			k, ok := stoppedAtSamePC(s, "complete", "noinfo")
			if !ok || !s.is("libsframe") || !s.b.Frames[k].Outermost {
				return false
			}
			for _, f := range s.l().fdeAt(lookupPC(s.b.Frames, k)) {
				if sec := s.l().sectionOf(f); sec.version == 3 && f.attrOK && f.numFREs == 0 && f.fdeType() == 0 {
					return true
				}
			}
			return false
		},
	},
	{
		Name:  "walk-stops-at-signal-frame",
		Spec:  "v3 2.3.3: signal_p marks a signal trampoline; the specification gives no rule to recover the interrupted context (the ABI's signal frame holds it). builtin reads the kernel's signal frame; our C walk around libsframe stops there (also when the trampoline's FDE has no FREs, where it asks libsframe for an FRE before it looks at the flag). Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if !s.is("libsframe") || s.b == nil || s.x == nil || stopKind(s.x.Err) == "complete" {
				return false
			}
			k := len(s.x.Frames) - 1
			if k < 0 || k >= len(s.b.Frames) || !s.b.Frames[k].Signal || s.x.Frames[k].PC != s.b.Frames[k].PC {
				return false
			}
			return firstDiff(s.b.Frames, s.x.Frames) >= k
		},
	},
	{
		Name:  "signal-flag-on-outermost-row",
		Spec:  "v3 2.3.3 and 2.4.1: the FDE says signal trampoline (signal_p), its row says outermost frame (no data words). The specification does not say which wins: builtin looks at the flag first, as the Linux unwinder does, and reads the kernel's signal frame; our C walk around libsframe takes the row's mark. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if !s.is("libsframe") || s.b == nil || s.x == nil || stopKind(s.x.Err) != "complete" {
				return false
			}
			k := len(s.x.Frames) - 1
			if k >= len(s.b.Frames) || !s.b.Frames[k].Signal || firstDiff(s.b.Frames, s.x.Frames) < k {
				return false
			}
			pc := lookupPC(s.x.Frames, k)
			for _, f := range s.l().fdeAt(pc) {
				if j := freAt(f, pc); f.info&0x80 != 0 && j >= 0 && f.fres[j].count() == 0 {
					return true
				}
			}
			return false
		},
	},
	{
		Name:  "libsframe-flips-shared-fres-twice",
		Spec:  specOf[ruleFREsShared] + ". Two functions share FRE bytes here; builtin reads them as they are, libsframe's foreign-endian path flips each function's FREs in place, the shared ones twice, and reads them back in the wrong byte order.",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || s.native() || s.b == nil || s.x == nil {
				return false
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			for _, frames := range [][]frame.Frame{s.b.Frames, s.x.Frames} {
				if c >= len(frames) {
					continue
				}
				for _, f := range s.l().fdeAt(lookupPC(frames, c)) {
					for _, b := range f.broken {
						if b.rule == ruleFREsShared {
							return true
						}
					}
				}
			}
			return false
		},
	},
	{
		Name:  "overlapping-functions",
		Spec:  "v3 2.3.1: each FDE describes one function, [start, start + size), and the index is searched by start. The specification does not say what two FDEs covering one PC mean: builtin takes the one starting last, libsframe's binary search, which assumes functions apart, may miss both. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if s.b == nil || s.x == nil {
				return false
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			for _, frames := range [][]frame.Frame{s.b.Frames, s.x.Frames} {
				if c < len(frames) {
					pc := lookupPC(frames, c)
					for _, l := range []*layout{s.l(), s.libsframeReading()} {
						for _, f := range l.fdeAt(pc) {
							if f.overlaps {
								return true
							}
						}
					}
				}
			}
			return false
		},
	},
}

// malformedRule is the class of a step where builtin stops at frame k
// because the function covering it breaks function rule r (a lookup
// reads its FREs only then), and the other consumer reads on.
func malformedRule(r string) *Rule {
	return &Rule{
		Name:  "libsframe-reads-malformed-" + r,
		Spec:  specOf[r] + "; builtin fails the lookup that reaches it, libsframe answers from it (an FRE that fails libsframe's own sanity check even reads as RA undefined: sframe_fre_get_ra_undefined_p returns its error, -1, as true).",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("libsframe") || s.b == nil {
				return false
			}
			breaks := func(l *layout, pc uint64) bool {
				for _, f := range l.fdeAt(pc) {
					for _, b := range f.broken {
						if b.rule == r {
							return true
						}
					}
				}
				return false
			}
			// builtin stops at frame k, reading the broken function.
			if k := len(s.b.Frames) - 1; stopKind(s.b.Err) == "failed" && k >= 0 && (s.x == nil || firstDiff(s.b.Frames, s.x.Frames) >= k) {
				pc := lookupPC(s.b.Frames, k)
				if breaks(s.l(), pc) || breaks(s.libsframeReading(), pc) {
					return true
				}
			}
			// libsframe's answer for the first frame they part on comes
			// from a broken function, as libsframe reads the section.
			if s.x != nil {
				if c := max(culprit(s.b.Frames, s.x.Frames), 0); c < len(s.x.Frames) {
					return breaks(s.libsframeReading(), lookupPC(s.x.Frames, c))
				}
			}
			return false
		},
	}
}

// glibcRules classify glibc's answers on sections that pass validation.
var glibcRules = []*Rule{
	{
		Name:  "glibc-no-object-for-pc",
		Spec:  "v3 2.3.1: no FDE covers the PC, so there is no information (builtin). glibc's walk asks _dl_find_object first, which the consumer's stand-in answers for every PC; glibc then reads the code at a PC that is no code (its signal-frame check) and faults: an artefact of the stand-in, not glibc's.",
		right: "builtin",
		match: func(s *situation) bool {
			k, ok := stoppedAtSamePC(s, "noinfo", "")
			if !ok || !s.is("glibc") {
				return false
			}
			// glibc looks the frame up at its PC itself.
			return len(s.l().fdeAt(s.b.Frames[k].PC)) == 0
		},
	},
	{
		Name:  "glibc-pc-offset-32-bit",
		Spec:  "v3 2.3.1: a function covers [start, start + sfdi_func_size), sizes up to 4 GiB. glibc's walk passes the PC to its sframe_find_fre as a 32-bit signed offset from the section, so a PC 2 GiB or more from the section (inside a large function) is looked up somewhere else, or nowhere.",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("glibc") || s.b == nil || s.x == nil {
				return false
			}
			c := max(culprit(s.b.Frames, s.x.Frames), 0)
			if c >= len(s.x.Frames) {
				return false
			}
			d := int64(s.x.Frames[c].PC - s.o.Case.Addr)
			return d != int64(int32(d))
		},
	},
	{
		Name:  "glibc-zero-fp-outermost",
		Spec:  "The specification says nothing of a zero frame pointer. glibc ends the trace at a frame without an FRE whose FP is 0 (its uw-sigframe.h rule); builtin stops there for lack of information. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			k, ok := stoppedAtSamePC(s, "noinfo", "complete")
			if !ok || !s.is("glibc") {
				return false
			}
			f := s.x.Frames[k]
			if !f.Outermost || f.FP != 0 {
				return false
			}
			for _, fde := range s.l().fdeAt(f.PC) {
				if freAt(fde, f.PC) >= 0 {
					return false
				}
			}
			return true
		},
	},
	{
		Name:  "glibc-keeps-pac-bits",
		Spec:  "v3 2.4.1: fre_mangled_ra_p says the return address is mangled with authorization bits; a tracer strips them (builtin clears bits 48-63 as for user-space addresses). glibc's walk returns the signed address as read.",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("glibc") || s.b == nil || s.x == nil {
				return false
			}
			j := firstDiff(s.b.Frames, s.x.Frames)
			if j >= len(s.b.Frames) || j >= len(s.x.Frames) {
				return false
			}
			b, x := s.b.Frames[j], s.x.Frames[j]
			const pac = 0xffff << 48
			return x.PC != b.PC && x.PC&^pac == b.PC && x.PC&pac != 0 && x.SP == b.SP && x.FP == b.FP
		},
	},
	{
		Name:    "glibc-callers-at-ra",
		Finding: "docs/findings/018-glibc-callers-at-ra.md",
		Spec:    "v3 appendix A looks frame N+1 up at its PC; a caller's PC is a return address, which after a call as a function's last instruction lies in the next function. builtin (like the Linux unwinder) looks callers up at RA-1; glibc at the RA itself, and gets the next function's row.",
		right:   "builtin",
		match: func(s *situation) bool {
			if !s.is("glibc") || s.b == nil || s.x == nil {
				return false
			}
			c := culprit(s.b.Frames, s.x.Frames)
			if c < 1 || c >= len(s.b.Frames) {
				return false
			}
			pc := s.b.Frames[c].PC
			return rowAt(s.l(), pc) != rowAt(s.l(), pc-1)
		},
	},
	{
		Name:    "glibc-ra-in-link-register",
		Finding: "docs/findings/019-glibc-lr-and-outermost.md",
		Spec:    "v3 3.1.2 and 3.1.3: an AArch64 or s390x row without an RA offset leaves the RA in the link register, which the tracer initialises in the topmost frame (3.1.3). glibc's walk never reads the link register and stops.",
		right:   "builtin",
		match: func(s *situation) bool {
			_, ok := stoppedAtSamePC(s, "", "failed")
			return ok && s.is("glibc") && strings.Contains(s.x.Err.Error(), "still in the link register")
		},
	},
	{
		Name:  "glibc-driver-reads-past-stack-copy",
		Spec:  "The protocol carries the stack from a little below the SP to its top and makes the rest unreadable: builtin stops where a rule reads outside the copy. The glibc consumer maps the copy's pages whole, so glibc reads zeros from the rest of the last page and walks on: an artefact of the driver, not glibc's.",
		right: "builtin",
		match: func(s *situation) bool {
			if !s.is("glibc") || s.b == nil || s.x == nil || !errors.Is(s.b.Err, sframe.ErrUnreadable) {
				return false
			}
			k := len(s.b.Frames) - 1
			return k >= 0 && len(s.x.Frames) > k+1 && firstDiff(s.b.Frames, s.x.Frames) >= k
		},
	},
	{
		Name:  "glibc-no-cfa-above-check",
		Spec:  "The specification's appendix A does not compare a caller's SP with its callee's; builtin (as the Linux unwinder) stops a walk whose caller's SP is not above the frame's, glibc's walk goes on. Either is right.",
		right: "either",
		match: func(s *situation) bool {
			if !s.is("glibc") || s.b == nil || s.x == nil || stopKind(s.b.Err) != "failed" {
				return false
			}
			k := len(s.b.Frames) - 1
			if k < 0 || k+1 >= len(s.x.Frames) || firstDiff(s.b.Frames, s.x.Frames) < k {
				return false
			}
			return s.x.Frames[k+1].SP < s.x.Frames[k].SP || (k > 0 && s.x.Frames[k+1].SP == s.x.Frames[k].SP)
		},
	},
}

// lookupPC is the PC a walk looks frame k up at: frame 0's PC, a caller's
// return address minus 1.
func lookupPC(frames []frame.Frame, k int) uint64 {
	if k == 0 {
		return frames[0].PC
	}
	return frames[k].PC - 1
}

// firstDiff is the first index where two backtraces' frames differ (the
// shorter one's length when one is a prefix of the other).
func firstDiff(a, b []frame.Frame) int {
	j := 0
	for j < len(a) && j < len(b) && a[j] == b[j] {
		j++
	}
	return j
}

// culprit is the frame whose unwinding the two backtraces first disagree
// on: the frame before the first differing one when that one's PC, SP or
// FP differ (they come from unwinding the frame before), else the first
// differing frame itself (its CFA or flags differ).
func culprit(a, b []frame.Frame) int {
	j := firstDiff(a, b)
	if j >= len(a) || j >= len(b) {
		return j - 1
	}
	x, y := a[j], b[j]
	if x.PC != y.PC || x.SP != y.SP || x.FP != y.FP {
		return j - 1
	}
	return j
}

// stoppedAtSamePC reports whether builtin and the other consumer agree on
// frames 0 to k-1 and on frame k's PC, where k is the last frame of the
// one that stops with want (builtin's stop bWant, the other's xWant; ""
// for any). It returns k.
func stoppedAtSamePC(s *situation, bWant, xWant string) (int, bool) {
	if s.b == nil || s.x == nil {
		return 0, false
	}
	if bWant != "" && stopKind(s.b.Err) != bWant || xWant != "" && stopKind(s.x.Err) != xWant {
		return 0, false
	}
	k := len(s.x.Frames) - 1
	if bWant != "" && (xWant == "" || len(s.b.Frames) <= len(s.x.Frames)) {
		k = len(s.b.Frames) - 1
	}
	if k < 0 || k >= len(s.b.Frames) || k >= len(s.x.Frames) || s.b.Frames[k].PC != s.x.Frames[k].PC {
		return 0, false
	}
	for i := 0; i < k; i++ {
		if s.b.Frames[i] != s.x.Frames[i] {
			return 0, false
		}
	}
	return k, true
}

// rowAt names the FRE the layout finds for pc: its offset, or -1 when no
// FDE covers pc, -2 when one does but no FRE of it.
func rowAt(l *layout, pc uint64) int {
	fdes := l.fdeAt(pc)
	if len(fdes) == 0 {
		return -1
	}
	f := fdes[len(fdes)-1]
	if j := freAt(f, pc); j >= 0 {
		return f.fres[j].off
	}
	return -2
}

// farPC: at the frame whose unwinding the two first disagree on, a
// function's size covers the distance of the PC looked up from its start
// truncated to 32 bits but not the distance itself (4 GiB or more):
// libsframe's search takes that function for the PC's.
func farPC(s *situation) bool {
	if !s.is("libsframe") || s.b == nil || s.x == nil {
		return false
	}
	c := max(culprit(s.b.Frames, s.x.Frames), 0)
	if c >= len(s.b.Frames) {
		return false
	}
	lookup := lookupPC(s.b.Frames, c)
	for _, l := range []*layout{s.l(), s.libsframeReading()} {
		for _, sec := range l.sections {
			for _, f := range sec.fdes {
				d := lookup - f.start
				if int64(d) >= 1<<32 && uint32(d) < f.size {
					return true
				}
			}
		}
	}
	return false
}
