package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "SFrame conformance")
}

// programsPerEntry is how many seeds each table entry checks.
const programsPerEntry = 60

// campaignPrograms is how many programs of the default mix each target x
// version checks in the slow campaign; SFCONFORM_CAMPAIGN_PROGRAMS
// overrides it.
func campaignPrograms() int {
	if n, err := strconv.Atoi(os.Getenv("SFCONFORM_CAMPAIGN_PROGRAMS")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// One emulator per target per parallel process, reused by every entry.
var checkers = harness.NewPool(harness.Options{})

func checker(abi sframe.ABI) *harness.Checker {
	c, err := checkers.Get(abi)
	Expect(err).NotTo(HaveOccurred(), "emulator for %s", abi.Name())
	return c
}

var _ = AfterSuite(func() { checkers.Close() })

func failuresDir() string {
	if d := os.Getenv("SFCONFORM_FAILURES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "failures")
}

// Run is one checked program, what the matcher reports on.
type Run struct {
	img   *producer.Image
	prog  *gen.Program
	seed  int64
	cons  string
	res   *harness.Result
	saved string
}

// Conform succeeds when every executed instruction's backtrace matched the
// machine. On failure it saves a reproducer; its message shows the seed,
// the PC, the instruction, the SFrame row in use, expected vs got for
// every frame, and the reproducer's path.
func Conform() types.GomegaMatcher {
	return gcustom.MakeMatcher(func(r *Run) (bool, error) {
		if r.res.Clean() {
			return true, nil
		}
		path, err := corpus.Save(failuresDir(), harness.NewCase(r.img, r.prog, r.seed, r.cons, r.res))
		if err != nil {
			path = "not saved: " + err.Error()
		}
		r.saved = path
		return false, nil
	}, "{{.Actual.Report}}")
}

// Report describes the run for a failure message.
func (r *Run) Report() string {
	res := r.res
	head := fmt.Sprintf("%s, %s, seed %d: %d instructions checked (OK %d, WRONG %d, NOINFO %d, ERROR %d)\nreproducer: %s",
		r.img.ABI.Name(), r.img.Producer, r.seed, res.Steps,
		res.Counts[oracle.OK], res.Counts[oracle.Wrong], res.Counts[oracle.NoInfo], res.Counts[oracle.Error], r.saved)
	switch {
	case len(res.Failures) > 0:
		f := res.Failures[0]
		return fmt.Sprintf("%s\nfirst failure: step %d, pc 0x%x %s: %s\nrow: %s\n%s: %s\n%s",
			head, f.Step, f.PC, f.Function, f.Insn, harness.RowAt(r.img, f.PC),
			f.Judgement.Verdict, f.Judgement.Detail, oracle.FormatFrames(f.Expected, f.Got))
	case res.LoadErr != nil:
		return head + "\nconsumer refused the section: " + res.LoadErr.Error()
	case res.RunErr != nil:
		return head + "\nrun stopped: " + res.RunErr.Error()
	}
	return head
}

var _ = DescribeTable("every executed instruction unwinds to the machine's state",
	func(abi sframe.ABI, pattern string, v sframe.Version) {
		cons := consumer.NewBuiltin()
		for i := int64(0); i < programsPerEntry; i++ {
			seed := GinkgoRandomSeed() + i
			img, prog, err := harness.BuiltinImage(abi, v, seed, gen.Options{Patterns: []string{pattern}})
			Expect(err).NotTo(HaveOccurred(), "seed %d", seed)
			res := checker(abi).Check(img, cons)
			Expect(res.Steps).To(BeNumerically(">", 0), "seed %d executed nothing", seed)
			Expect(&Run{img: img, prog: prog, seed: seed, cons: cons.Name(), res: res}).To(Conform())
		}
	},
	entries(),
)

// The long campaign: the default pattern mix, many seeds. Excluded from
// make test; run it with ginkgo --label-filter slow ./suites/conformance.
var _ = DescribeTable("campaign: the default mix over many seeds",
	func(abi sframe.ABI, v sframe.Version) {
		cons := consumer.NewBuiltin()
		n := campaignPrograms()
		for i := 0; i < n; i++ {
			seed := GinkgoRandomSeed() + int64(i)
			img, prog, err := harness.BuiltinImage(abi, v, seed, gen.Options{})
			Expect(err).NotTo(HaveOccurred(), "seed %d", seed)
			res := checker(abi).Check(img, cons)
			Expect(&Run{img: img, prog: prog, seed: seed, cons: cons.Name(), res: res}).To(Conform())
		}
	},
	campaignEntries(),
)

func campaignEntries() []TableEntry {
	var out []TableEntry
	for _, abi := range sframe.Targets {
		for _, v := range []sframe.Version{2, 3} {
			out = append(out, Entry(fmt.Sprintf("%s v%d", abi.Name(), v),
				Label("slow", "target:"+abi.Name(), fmt.Sprintf("version:%d", v), "producer:builtin", "consumer:builtin"),
				abi, v))
		}
	}
	return out
}

func entries() []TableEntry {
	var out []TableEntry
	for _, abi := range sframe.Targets {
		for _, p := range gen.Patterns(abi) {
			for _, v := range []sframe.Version{2, 3} {
				out = append(out, Entry(fmt.Sprintf("%s %s v%d", abi.Name(), p, v),
					Label("target:"+abi.Name(), "pattern:"+p, fmt.Sprintf("version:%d", v), "producer:builtin", "consumer:builtin"),
					abi, p, v))
			}
		}
	}
	return out
}
