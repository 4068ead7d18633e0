package mutation_test

import (
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// consumerMutant is the suite's unwinder with one rule broken the way a
// real unwinder gets it wrong.
type consumerMutant struct {
	name string
	brk  ruleBreak
	// rule is the builtin unwinder's rule that the mutant breaks (see
	// sframe.Unwinder and sframe.Decode), and how.
	rule string
	// targets and versions the rule can matter on; nil: all.
	targets  []target.Target
	versions []int
	// faultyOnly, when set, says why no program on which the reference
	// unwinder is clean can expose the mutant: it is measured on the
	// producer fault mix, where its verdicts must differ from the
	// reference's on some faulty image.
	faultyOnly string
}

var (
	aarch64s     = []target.Target{target.AArch64, target.AArch64BE}
	linkRegister = []target.Target{target.AArch64, target.AArch64BE, target.S390X}
	s390xOnly    = []target.Target{target.S390X}
	x86Only      = []target.Target{target.X86_64}
	v3Only       = []int{3}
)

// relaxed is the reason shared by the mutants that drop a check: they
// differ from the reference only where it refuses to unwind, and a program
// on which the reference refuses something is not clean.
const relaxed = "it drops a check the reference makes; it differs from the reference only at steps where the reference fails, which no clean program has"

var consumerMutants = []consumerMutant{
	// Looking up a row.
	{name: "row-start-exclusive", brk: brkRowStartExclusive,
		rule: "a row covers from its start: the mutant applies a row only after its first byte"},
	{name: "pcmask-as-inc", brk: brkPCMaskAsInc,
		rule: "PCMASK FDE rows match the offset modulo the repetition size: the mutant matches the plain offset"},
	{name: "empty-fde-no-info", brk: brkEmptyFDENoInfo, versions: v3Only,
		rule: "a v3 DEFAULT FDE without FREs is an outermost frame: the mutant reads it as no information"},
	{name: "empty-signal-fde-outermost", brk: brkEmptySignalFDEOutermost, versions: v3Only,
		rule: "the signal flag is looked at first: a v3 signal FDE without FREs is a trampoline; the mutant reads it as outermost"},
	// Killed on the default mix since functions may be followed by gaps
	// and padding: probes there expect NOINFO, and a return address in a
	// gap must be looked up at RA-1.
	{name: "fde-size-ignored", brk: brkFDESizeIgnored,
		rule: "a function covers [start, start+size): the mutant takes the nearest function starting at or before the PC"},

	// What data words mean.
	{name: "cfa-base-bit-inverted", brk: brkCFABaseBitInverted,
		rule: "FRE info bit 0 set = CFA based on SP: the mutant reads it as FP"},
	{name: "fixed-ra-ignored", brk: brkFixedRAIgnored, targets: x86Only,
		rule: "AMD64's RA is at the header's fixed offset, its FREs have no RA word: the mutant reads [CFA, RA, FP]"},
	{name: "s390x-cfa-unscaled", brk: brkS390XCFAUnscaled, targets: s390xOnly,
		rule: "s390x stores CFA offsets as (offset-160)/8: the mutant reads the word as the offset"},
	{name: "s390x-ra-padding-as-offset", brk: brkS390XRAPaddingAsOffset, targets: s390xOnly,
		rule: "s390x RA word 0 is padding (RA not saved): the mutant reads RA saved at CFA+0"},
	{name: "v2-regnum-words-as-offsets", brk: brkV2RegnumWordsAsOffsets, targets: s390xOnly, versions: []int{2},
		rule: "s390x v2 odd RA/FP words are DWARF register numbers: the mutant reads them as CFA offsets"},
	{name: "flex-ignore-deref", brk: brkFlexIgnoreDeref, versions: v3Only,
		rule: "a FLEX control word's deref bit loads the value from the address: the mutant takes the address"},
	{name: "flex-base-always-cfa", brk: brkFlexBaseAlwaysCFA, versions: v3Only,
		rule: "a FLEX RA/FP control word's reg_p bit bases the rule on a register: the mutant bases it on the CFA"},
	{name: "flex-padding-as-pair", brk: brkFlexPaddingAsPair, versions: v3Only,
		rule: "a lone FLEX control word 0 is padding: the mutant reads a (control, displacement) pair there"},

	// The walk.
	{name: "ra-lookup-no-minus-1", brk: brkRALookupNoMinus1,
		rule: "callers are looked up at RA-1, inside the call: the mutant looks up the RA"},
	{name: "interrupted-lookup-minus-1", brk: brkInterruptedLookupMinus1, versions: v3Only,
		rule: "the frame a signal interrupted is looked up at its exact PC: the mutant takes it for a return address"},
	{name: "lr-rule-in-callers", brk: brkLRRuleInCallers, targets: linkRegister, faultyOnly: relaxed,
		rule: "the RA in the link register is known in the topmost (or interrupted) frame only: the mutant reads the LR for a caller"},
	{name: "reg-rules-in-callers", brk: brkRegRulesInCallers, faultyOnly: relaxed,
		rule: "rules on registers other than SP and FP apply in the topmost (or interrupted) frame only: the mutant applies them to callers"},
	{name: "topmost-rules-frame-0-only", brk: brkTopRulesFrame0Only, versions: v3Only,
		rule: "the topmost-frame rules (RA in LR, other registers, CFA == SP) hold in an interrupted frame: the mutant allows them in frame 0 only"},
	{name: "callers-fp-from-registers", brk: brkCallersFPFromRegisters,
		rule: "a caller's FP is the one its callee's rules recovered: the mutant bases callers' FP rules on the register file's FP"},
	{name: "fp-not-carried", brk: brkFPNotCarried,
		rule: "an FP the row does not save is still the callee's: the mutant forgets it (0)"},
	{name: "no-outermost-stop", brk: brkNoOutermostStop,
		rule: "an FRE without data words (RA undefined) ends the walk at an outermost frame: the mutant fails there"},
	{name: "no-cfa-growth-check", brk: brkNoCFAGrowthCheck, faultyOnly: relaxed,
		rule: "the caller's SP must lie above the frame's: the mutant does not check"},
	{name: "cfa-growth-equal-in-callers", brk: brkCFAGrowthEqualInCallers, faultyOnly: relaxed,
		rule: "only the topmost (or interrupted) frame may leave the caller's SP equal to its own: the mutant allows it everywhere"},
	{name: "cfa-growth-strict-at-top", brk: brkCFAGrowthStrictAtTop, targets: linkRegister,
		rule: "the topmost frame may leave the caller's SP equal (a leaf with no frame): the mutant requires it strictly above"},
	{name: "s390x-sp-is-cfa", brk: brkS390XSPIsCFA, targets: s390xOnly,
		rule: "the s390x caller's SP is CFA-160: the mutant takes the CFA"},
	{name: "no-pac-strip", brk: brkNoPACStrip, targets: aarch64s,
		rule: "a mangled RA has its pointer authentication code stripped (bits 48-63): the mutant keeps it"},
	{name: "pac-strip-top-byte-only", brk: brkPACStripTopByteOnly, targets: aarch64s,
		rule: "a mangled RA has bits 48-63 cleared: the mutant clears the top byte only, as for a tag"},
	{name: "signal-as-ordinary-frame", brk: brkSignalAsOrdinaryFrame, versions: v3Only,
		rule: "a signal trampoline's caller is read from the signal frame: the mutant unwinds it by its rows"},
	{name: "signal-restore-wrong-offset", brk: brkSignalRestoreWrongOffset, versions: v3Only,
		rule: "the signal frame lies at the trampoline's SP (x86-64: one word below): the mutant misplaces it the way each target's unwinder does"},
	{name: "signal-regs-not-restored", brk: brkSignalRegsNotRestored, versions: v3Only,
		rule: "an interrupted frame's registers are those the signal frame saved: the mutant keeps frame 0's for its topmost rules"},
}

func (m *consumerMutant) appliesTo(abi target.Target, v sframe.Version) bool {
	ok := m.targets == nil
	for _, t := range m.targets {
		ok = ok || t == abi
	}
	if m.versions == nil {
		return ok
	}
	for _, w := range m.versions {
		if w == int(v) && ok {
			return true
		}
	}
	return false
}

// mutantTally counts one consumer mutant's outcomes.
type mutantTally struct {
	Programs, Caught int // default mix: programs run, programs with a non-OK step
	// Faulty, Differ: faulty images of the producer fault mix run, images
	// where some step's verdict differs from the reference's.
	Faulty, Differ int
	// DifferBy counts Differ by fault class.
	DifferBy map[string]int
	// Example is the first kill seen, for the report.
	Example string
}

// mutantTallies are this process's counts; process 1 adds them up.
var mutantTallies = map[string]*mutantTally{}

func (t *mutantTally) add(u *mutantTally) {
	t.Programs += u.Programs
	t.Caught += u.Caught
	t.Faulty += u.Faulty
	t.Differ += u.Differ
	for c, n := range u.DifferBy {
		if t.DifferBy == nil {
			t.DifferBy = map[string]int{}
		}
		t.DifferBy[c] += n
	}
	if t.Example == "" {
		t.Example = u.Example
	}
}

func mutantTallyOf(name string) *mutantTally {
	t := mutantTallies[name]
	if t == nil {
		t = &mutantTally{}
		mutantTallies[name] = t
	}
	return t
}

// runConsumerMutants checks an image of the default mix, on which the
// reference is clean, with every consumer mutant that applies.
func runConsumerMutants(abi target.Target, v sframe.Version, seed int64, img *image.Image) {
	for k := range consumerMutants {
		m := &consumerMutants[k]
		if !m.appliesTo(abi, v) {
			continue
		}
		t := mutantTallyOf(m.name)
		res := checker(abi).Check(img, newSuiteUnwinder(m.brk, m.name))
		t.Programs++
		if !res.Clean() {
			t.Caught++
			if t.Example == "" {
				t.Example = fmt.Sprintf("%s v%d seed %d: %s", abi.Name(), v, seed, firstFailure(res))
			}
		}
	}
}

// stepVerdicts are the non-OK steps of a result by (path, step).
func stepVerdicts(r *harness.Result) map[[2]int]*harness.Failure {
	m := make(map[[2]int]*harness.Failure, len(r.Failures))
	for i := range r.Failures {
		f := &r.Failures[i]
		m[[2]int{f.Path, f.Step}] = f
	}
	return m
}

// verdictDiff says where two results of one image (a reference's, a
// mutant's) first judge a step differently, "" when they never do (a
// refused section is ERROR at every step).
func verdictDiff(ref, mut *harness.Result) string {
	if (ref.LoadErr == nil) != (mut.LoadErr == nil) || ref.Steps != mut.Steps {
		return fmt.Sprintf("the reference %s; the mutant %s", firstFailure(ref), firstFailure(mut))
	}
	vr, vm := stepVerdicts(ref), stepVerdicts(mut)
	judged := func(f *harness.Failure) string {
		if f == nil {
			return "OK"
		}
		return fmt.Sprintf("%s %s", f.Judgement.Verdict, f.Judgement.Detail)
	}
	var first [2]int
	found := false
	for _, m := range []map[[2]int]*harness.Failure{vr, vm} {
		for k, f := range m {
			o := vm[k]
			if o == f {
				o = vr[k]
			}
			differ := o == nil || o.Judgement.Verdict != f.Judgement.Verdict
			if differ && (!found || k[0] < first[0] || k[0] == first[0] && k[1] < first[1]) {
				first, found = k, true
			}
		}
	}
	if !found {
		return ""
	}
	f := vr[first]
	if f == nil {
		f = vm[first]
	}
	return fmt.Sprintf("path %d step %d pc %#x %s (%s): the reference %s; the mutant %s",
		first[0], first[1], f.PC, f.Function, f.Insn, judged(vr[first]), judged(vm[first]))
}

func verdictChecker(abi target.Target) *harness.Checker {
	c, err := verdictCheckers.Get(abi)
	Expect(err).NotTo(HaveOccurred(), "emulator for %s", abi.Name())
	return c
}

// measureOnFaultyImage runs the reference and the mutants that only
// faulty tables can expose on a producer fault's image, and counts the
// mutants whose verdict differs from the reference's at some step.
func measureOnFaultyImage(abi target.Target, v sframe.Version, seed int64, class string, fault *mutant) {
	var ref *harness.Result
	for k := range consumerMutants {
		m := &consumerMutants[k]
		if m.faultyOnly == "" || !m.appliesTo(abi, v) {
			continue
		}
		if ref == nil {
			ref = verdictChecker(abi).Check(fault.img, newSuiteUnwinder(intact, "suite"))
		}
		t := mutantTallyOf(m.name)
		res := verdictChecker(abi).Check(fault.img, newSuiteUnwinder(m.brk, m.name))
		t.Faulty++
		if why := verdictDiff(ref, res); why != "" {
			t.Differ++
			if t.DifferBy == nil {
				t.DifferBy = map[string]int{}
			}
			t.DifferBy[class]++
			if t.Example == "" {
				t.Example = fmt.Sprintf("%s v%d seed %d, %s: %s", abi.Name(), v, seed, fault.desc, why)
			}
		}
	}
}

// reportConsumerMutants prints the kill table of the consumer mutants
// (summed over the parallel processes) and returns those that ran and
// were not killed: on the default mix, or, for those documented as
// exposable only by faulty tables, on the producer fault mix; and those of
// the latter killed on the default mix (which makes the documented reason
// false).
func reportConsumerMutants(processes int, total map[string]*mutantTally) (survived, misfiled []string) {
	var b, ex strings.Builder
	fmt.Fprintf(&b, "%-28s %8s %7s %9s %7s %7s  %s\n", "consumer mutant", "programs", "caught", "kill rate", "faulty", "differ", "outcome")
	for k := range consumerMutants {
		m := &consumerMutants[k]
		t := total[m.name]
		if t == nil || t.Programs+t.Faulty == 0 {
			continue
		}
		rate := "-"
		if t.Programs > 0 {
			rate = fmt.Sprintf("%.1f%%", 100*float64(t.Caught)/float64(t.Programs))
		}
		faulty, differ := "-", "-"
		if m.faultyOnly != "" {
			faulty, differ = fmt.Sprint(t.Faulty), fmt.Sprint(t.Differ)
		}
		outcome := "killed"
		switch {
		case m.faultyOnly == "" && t.Programs > 0 && t.Caught == 0:
			outcome = "SURVIVED"
			survived = append(survived, m.name)
		case m.faultyOnly != "" && t.Caught > 0:
			outcome = "killed on the default mix: not faulty-only"
			misfiled = append(misfiled, m.name)
		case m.faultyOnly != "" && t.Faulty > 0 && t.Differ == 0:
			outcome = "SURVIVED (faulty tables)"
			survived = append(survived, m.name)
		case m.faultyOnly != "":
			outcome = "killed only on faulty tables"
		}
		fmt.Fprintf(&b, "%-28s %8d %7d %9s %7s %7s  %s\n", m.name, t.Programs, t.Caught, rate, faulty, differ, outcome)
		fmt.Fprintf(&ex, "%s: %s\n    %s\n", m.name, m.rule, t.Example)
		if m.faultyOnly != "" {
			classes := make([]string, 0, len(t.DifferBy))
			for c := range t.DifferBy {
				classes = append(classes, c)
			}
			sort.Strings(classes)
			for i, c := range classes {
				classes[i] = fmt.Sprintf("%s %d", c, t.DifferBy[c])
			}
			fmt.Fprintf(&ex, "    faulty images where the verdicts differ, by fault class: %s\n", strings.Join(classes, ", "))
		}
	}
	if ex.Len() > 0 {
		AddReportEntry(fmt.Sprintf("kill rate per consumer rule (%d processes)", processes), b.String())
		AddReportEntry("the rule each consumer mutant breaks, and its first kill", ex.String())
	}
	return survived, misfiled
}
