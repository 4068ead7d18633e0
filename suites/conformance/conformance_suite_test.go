package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/verdict"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
	"github.com/onsi/gomega/types"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/target"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "SFrame conformance")
}

// programsPerEntry is how many seeds each table entry checks. A toolchain
// producer makes them with one assembler and one linker run.
const programsPerEntry = 60

// campaignPrograms is how many programs of the default mix each target x
// producer x consumer checks in the slow campaign; SFCONFORM_CAMPAIGN_PROGRAMS
// overrides it.
func campaignPrograms() int {
	if n, err := strconv.Atoi(os.Getenv("SFCONFORM_CAMPAIGN_PROGRAMS")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// One campaign worker per parallel process: one emulator per target,
// reused by every entry.
var worker = campaign.NewWorker(harness.Options{})

var _ = AfterSuite(func() { worker.Close() })

func checker(t target.Target) *harness.Checker {
	c, err := worker.Checker(t)
	Expect(err).NotTo(HaveOccurred(), "emulator for %s", t.Name())
	return c
}

func failuresDir() string {
	if d := os.Getenv("SFCONFORM_FAILURES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "failures")
}

// Run is one checked program, what the matcher reports on.
type Run struct {
	img   *image.Image
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
		path, err := corpus.Save(failuresDir(), repro.NewCase(repro.CaseInput{Img: r.img, Prog: r.prog, Seed: r.seed, ConsumerName: r.cons, Res: r.res}))
		if err != nil {
			path = "not saved: " + err.Error()
		}
		r.saved = path
		return false, nil
	}, "{{.Actual.Report}}")
}

// GomegaString keeps a failure message to the run's coordinates: Gomega
// would otherwise print the whole image before the report.
func (r *Run) GomegaString() string {
	return fmt.Sprintf("the run of seed %d (%s, %s x %s)", r.seed, r.img.Target.Name(), r.img.Producer, r.cons)
}

// Report describes the run for a failure message.
func (r *Run) Report() string {
	res := r.res
	head := fmt.Sprintf("%s, %s x %s, seed %d: %d instructions checked (OK %d, WRONG %d, NOINFO %d, ERROR %d)\nreproducer: %s",
		r.img.Target.Name(), r.img.Producer, r.cons, r.seed, res.Steps,
		res.Counts[verdict.OK], res.Counts[verdict.Wrong], res.Counts[verdict.NoInfo], res.Counts[verdict.Error], r.saved)
	for _, v := range res.Violations {
		head += "\nsection " + v.String()
	}
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

// runCell plans an entry's cell and runs it on this process's worker
// (package campaign): every program must make an image, execute and
// conform. A pair that cannot meet on the target, or patterns its version
// cannot express, show in the report as a skipped entry with the reason,
// never as a failure.
func runCell(t target.Target, prodName, consName string, cfg campaign.Config) {
	c := campaign.NewCell(t, prodName, consName)
	worker.RunCell(cfg, c, expectSink{})
	if c.Status == "unsupported" {
		Skip("unsupported (" + c.Reason + ")")
	}
	Expect(c.Err).NotTo(HaveOccurred(), "%s", c.Name())
	Expect(c.Programs).To(Equal(len(cfg.Seeds)), "%s", c.Name())
}

// expectSink holds every program of a cell to the matchers, on the
// entry's goroutine.
type expectSink struct{}

func (expectSink) Program(k *campaign.Checked) string {
	p := k.Program
	Expect(p.Err).NotTo(HaveOccurred(), "seed %d", p.Seed)
	Expect(k.Result.Steps).To(BeNumerically(">", 0), "seed %d executed nothing", p.Seed)
	Expect(&Run{img: p.Img, prog: p.Prog, seed: p.Seed, cons: k.Consumer.Name(), res: k.Result}).To(Conform())
	return ""
}
func (expectSink) Note(c *campaign.Cell, msg string) { AddReportEntry(c.Name(), msg) }
func (expectSink) CellDone(*campaign.Cell)           {}

var _ = DescribeTable("every executed instruction unwinds to the machine's state",
	func(t target.Target, pattern, prodName, consName string) {
		seeds := make([]int64, programsPerEntry)
		for i := range seeds {
			seeds[i] = GinkgoRandomSeed() + int64(i)
		}
		runCell(t, prodName, consName, campaign.Config{Seeds: seeds, Patterns: []string{pattern}, Batch: len(seeds)})
	},
	entries(),
)

// The long campaign: the default pattern mix, many seeds. Excluded from
// make test; run it with ginkgo --label-filter slow ./suites/conformance.
var _ = DescribeTable("campaign: the default mix over many seeds",
	func(t target.Target, prodName, consName string) {
		seeds := make([]int64, campaignPrograms())
		for i := range seeds {
			seeds[i] = GinkgoRandomSeed() + int64(i)
		}
		runCell(t, prodName, consName, campaign.Config{Seeds: seeds, Batch: 64})
	},
	campaignEntries(),
)

// suiteProducers and suiteConsumers are the plug-ins the tables cover:
// sfconform's own encoder (every registered producer that runs no real
// tool) and its own unwinder (every registered in-process consumer that
// needs no argument). Every pair with a real toolchain or decoder in it is
// the toolchain suite's (./suites/toolchain), which expects their known
// deviations.
func suiteProducers() []string {
	var out []string
	for _, n := range producer.Names() {
		if p, err := producer.New(n); err == nil && !producer.IsToolchain(p) {
			out = append(out, n)
		}
	}
	return out
}

func suiteConsumers() []string {
	var out []string
	for _, n := range consumer.Names() {
		if consumer.InFamily(n) {
			continue
		}
		if c, err := consumer.New(n); err == nil {
			if c.BatchSize() == 1 {
				out = append(out, n)
			}
			c.Close()
		}
	}
	return out
}

// labels are an entry's: its coordinates.
func labels(t target.Target, prod, cons string, more ...string) Labels {
	return append(Labels{"target:" + t.Name(), "producer:" + prod, "consumer:" + cons}, more...)
}

func campaignEntries() []TableEntry {
	var out []TableEntry
	for _, t := range target.All {
		for _, p := range suiteProducers() {
			for _, c := range suiteConsumers() {
				out = append(out, Entry(fmt.Sprintf("%s %s x %s", t.Name(), p, c),
					Label(labels(t, p, c, "slow")...), t, p, c))
			}
		}
	}
	return out
}

func entries() []TableEntry {
	var out []TableEntry
	for _, t := range target.All {
		for _, pat := range gen.Patterns(t) {
			for _, p := range suiteProducers() {
				for _, c := range suiteConsumers() {
					out = append(out, Entry(fmt.Sprintf("%s %s %s x %s", t.Name(), pat, p, c),
						Label(labels(t, p, c, "pattern:"+pat)...), t, pat, p, c))
				}
			}
		}
	}
	return out
}
