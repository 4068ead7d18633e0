package toolchain_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/matrix"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

func TestToolchain(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real toolchains and decoders against the machine, known deviations expected")
}

// programsPerEntry is how many programs of its pattern each entry checks:
// at least deviation.DefaultMin, so that an expected deviation of the
// entry's pattern that no longer shows is noticed. A toolchain makes them
// with one assembler and one linker run.
const programsPerEntry = 12

// campaignPrograms is how many programs of the default mix each target x
// toolchain producer checks in the slow campaign;
// SFCONFORM_CAMPAIGN_PROGRAMS overrides it.
func campaignPrograms() int {
	if n, err := strconv.Atoi(os.Getenv("SFCONFORM_CAMPAIGN_PROGRAMS")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// builtinProducers and builtinConsumer are sfconform's own, which meet the
// real ones here; builtin x builtin is the conformance suite's.
var (
	builtinProducers = []string{"builtin-v2", "builtin-v3"}
	builtinConsumer  = "builtin"
)

// One campaign worker per parallel process: one emulator per target,
// reused by every entry.
var worker = campaign.NewWorker(harness.Options{})

var _ = AfterSuite(func() { worker.Close() })

// expected is the checked-in list of expected deviations.
var expected = func() *deviation.List {
	l, err := deviation.Expected()
	if err != nil {
		panic(err)
	}
	return l
}()

func failuresDir() string {
	if d := os.Getenv("SFCONFORM_FAILURES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "failures")
}

// missing ends an entry whose plug-in setup provides cannot be made: a
// skip on a machine where setup never ran, a failure naming the setup
// step once it has (SFCONFORM_REQUIRE_SETUP=1, as make test sets it).
func missing(name string, err error) {
	n, ok := matrix.SetupProducers[name]
	if !ok {
		n = matrix.SetupConsumers[name]
	}
	step := testenv.Step(n)
	required, envErr := testenv.SetupRequired()
	switch {
	case envErr != nil:
		Fail(fmt.Sprintf("%s: %v; and %v", name, err, envErr))
	case required:
		Fail(fmt.Sprintf("%s: %v, although %s=1 says setup has run: run 'make setup' (%s)", name, err, testenv.RequireSetupEnv, step))
	default:
		Skip(fmt.Sprintf("%s: %v: run 'make setup' (%s) for this entry", name, err, step))
	}
}

// tallyCell plans an entry's cell and runs it on this process's worker
// (package campaign), checking with attribution into a tally of pattern
// ("": the default mix), or ends the entry: a plug-in setup did not
// provide is missing; a pair that cannot meet on the target, a pattern its
// version cannot express or the consumer cannot be judged on, is skipped
// with the reason (unsupported, never a failure).
func tallyCell(t target.Target, prodName, consName, pattern string, cfg campaign.Config) *matrix.Tally {
	if _, err := producer.New(prodName); err != nil {
		missing(prodName, err)
	}
	cons, err := consumer.New(consName)
	if err != nil {
		missing(consName, err)
	}
	cons.Close()
	if why := consumer.PatternLimit(consName, pattern); why != "" {
		Skip("unsupported (" + why + ")")
	}
	c := campaign.NewCell(t, prodName, consName)
	tally := matrix.NewTally(matrix.Cell{Target: t, Producer: prodName, Consumer: consName})
	cfg.Attribute = true
	worker.RunCell(cfg, c, tallySink{tally: tally, pattern: pattern})
	if c.Status == "unsupported" {
		Skip("unsupported (" + c.Reason + ")")
	}
	Expect(c.Err).NotTo(HaveOccurred(), "%s", c.Name())
	return tally
}

// tallySink adds an entry's programs to its tally.
type tallySink struct {
	tally   *matrix.Tally
	pattern string
}

func (s tallySink) Program(k *campaign.Checked) string {
	s.tally.Add(k.Program, k.Result, s.pattern)
	return ""
}
func (tallySink) Note(c *campaign.Cell, msg string) { AddReportEntry(c.Name(), msg) }
func (tallySink) CellDone(*campaign.Cell)           {}

// judge classifies a cell's tally against the expected deviations:
// expected ones are reported apart (a report entry each, with the
// finding), anything else fails the entry with a saved reproducer, and so
// does an expected deviation that no longer shows.
func judge(tally *matrix.Tally) {
	o := matrix.Classify(tally, expected)
	for _, h := range o.Hits {
		AddReportEntry("expected deviation", fmt.Sprintf("%s: %s line %d (%s %s %s) matched %d of %d programs, %d steps: %s",
			tally.Cell, h.Entry.File, h.Entry.Line, h.Entry.Cell(), h.Entry.Pattern, h.Entry.VerdictText(), h.Programs, h.Ran, h.Steps, h.Entry.Finding))
	}
	if o.OK() {
		return
	}
	msg := o.Problems()
	for _, b := range o.Unexpected {
		s := o.Blames[b].Sample
		if c := s.Case(tally.Cell); c != nil {
			path, err := corpus.Save(failuresDir(), c)
			if err != nil {
				path = "not saved: " + err.Error()
			}
			msg = append(msg, fmt.Sprintf("  %s: reproducer %s", b, path))
		} else {
			msg = append(msg, "  "+strings.ReplaceAll(s.NoImageText(tally.Cell), "\n", "\n  "))
		}
	}
	Fail(strings.Join(msg, "\n"))
}

var _ = DescribeTable("every executed instruction unwinds to the machine's state, or deviates as expected",
	func(t target.Target, prodName, consName, pattern string) {
		seeds := matrix.Seeds(GinkgoRandomSeed(), programsPerEntry)
		tally := tallyCell(t, prodName, consName, pattern, campaign.Config{Seeds: seeds, Patterns: []string{pattern}, Batch: len(seeds)})
		Expect(tally.Instructions).To(BeNumerically(">", 0), "%s executed nothing", tally.Cell)
		judge(tally)
	},
	entries(),
)

// The long campaign: each toolchain producer's default mix over many
// seeds, against sfconform's own unwinder, its known deviations expected.
// Excluded from make test; run it with make campaign.
var _ = DescribeTable("campaign: a toolchain's default mix over many seeds, known deviations expected",
	func(t target.Target, prodName string) {
		seeds := matrix.Seeds(GinkgoRandomSeed(), campaignPrograms())
		tally := tallyCell(t, prodName, builtinConsumer, "", campaign.Config{Seeds: seeds, Batch: 64})
		judge(tally)
	},
	campaignEntries(),
)

// realProducers and realConsumers are what setup provisions, sorted.
func realProducers() []string { return sortedKeys(matrix.SetupProducers) }
func realConsumers() []string { return sortedKeys(matrix.SetupConsumers) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cells are the suite's producer x consumer pairs: every real producer
// with every consumer, and sfconform's own producers with every real
// consumer.
func cells() [][2]string {
	var out [][2]string
	for _, p := range realProducers() {
		for _, c := range append([]string{builtinConsumer}, realConsumers()...) {
			out = append(out, [2]string{p, c})
		}
	}
	for _, p := range builtinProducers {
		for _, c := range realConsumers() {
			out = append(out, [2]string{p, c})
		}
	}
	return out
}

// inQuickSlice says whether make test runs an entry; the others carry the
// label matrix (make test-matrix). The slice: sid's GNU as against
// sfconform's unwinder everywhere (what make test checked before this
// suite), and each real producer and consumer once on x86-64 with the
// patterns that show their known deviations and the plainest ones.
func inQuickSlice(t target.Target, prod, cons, pattern string) bool {
	if prod == "gas-2.47" && cons == builtinConsumer {
		return true
	}
	if t != target.X86_64 || !slices.Contains(quickPatterns, pattern) {
		return false
	}
	switch {
	case cons == builtinConsumer:
		return true // every real producer
	case prod == "builtin-v2" || prod == "builtin-v3":
		return true // every real consumer
	}
	return false
}

// quickPatterns are the patterns of the quick slice off gas-2.47 x builtin.
var quickPatterns = []string{"fp-frame", "noreturn-call", "new-stack", "empty-fde", "drap"}

func entries() []TableEntry {
	var out []TableEntry
	for _, t := range target.All {
		for _, pc := range cells() {
			for _, pat := range gen.Patterns(t) {
				l := Labels{"target:" + t.Name(), "producer:" + pc[0], "consumer:" + pc[1], "pattern:" + pat}
				if !inQuickSlice(t, pc[0], pc[1], pat) {
					l = append(l, "matrix")
				}
				out = append(out, Entry(fmt.Sprintf("%s %s %s x %s", t.Name(), pat, pc[0], pc[1]), l, t, pc[0], pc[1], pat))
			}
		}
	}
	return out
}

func campaignEntries() []TableEntry {
	var out []TableEntry
	for _, t := range target.All {
		for _, p := range realProducers() {
			out = append(out, Entry(fmt.Sprintf("%s %s x %s", t.Name(), p, builtinConsumer),
				Label("target:"+t.Name(), "producer:"+p, "consumer:"+builtinConsumer, "slow"), t, p))
		}
	}
	return out
}
