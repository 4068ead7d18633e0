package mutation_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func TestMutation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Mutation: the harness catches faults in correct tables and in unwinders")
}

// mutantsPerClass is how many mutants each (target, version, class) entry
// tries, from consecutive seeds.
const mutantsPerClass = 12

var checkers = harness.NewPool(harness.Options{})

// verdictCheckers keep every failing step, so that two consumers'
// verdicts on one image can be compared step by step.
var verdictCheckers = harness.NewPool(harness.Options{MaxFailures: 1 << 30})

func checker(abi target.Target) *harness.Checker {
	c, err := checkers.Get(abi)
	Expect(err).NotTo(HaveOccurred(), "emulator for %s", abi.Name())
	return c
}

// tally counts outcomes of one fault class. DeeperOnly counts the mutants
// whose top frame's row yields what the original's does at every step
// while some backtrace differs deeper down: a witness judging the top row
// only would call them equivalent.
type tally struct{ Tried, Inapplicable, Equivalent, Caught, Survived, DeeperOnly int }

// processTallies is what each parallel process hands to process 1.
type processTallies struct {
	Faults    map[string]*tally
	Mutants   map[string]*mutantTally
	Agreement agreement
}

// tallies counts this process's outcomes per fault class. Under ginkgo -p
// every process holds only part of them: each writes its own to tallyDir,
// and process 1 adds them up once all are done.
var (
	tallies  = map[string]*tally{}
	tallyDir string
)

var _ = SynchronizedBeforeSuite(func() []byte {
	dir, err := os.MkdirTemp("", "sfconform-mutation-")
	Expect(err).NotTo(HaveOccurred())
	return []byte(dir)
}, func(dir []byte) {
	tallyDir = string(dir)
})

var _ = SynchronizedAfterSuite(func() {
	checkers.Close()
	verdictCheckers.Close()
	b, err := json.Marshal(processTallies{Faults: tallies, Mutants: mutantTallies, Agreement: agreed})
	Expect(err).NotTo(HaveOccurred())
	name := filepath.Join(tallyDir, fmt.Sprintf("process-%d.json", GinkgoParallelProcess()))
	Expect(os.WriteFile(name, b, 0o644)).To(Succeed())
}, func() {
	defer os.RemoveAll(tallyDir)
	total := map[string]*tally{}
	mutants := map[string]*mutantTally{}
	var agree agreement
	suite, _ := GinkgoConfiguration()
	for p := 1; p <= suite.ParallelTotal; p++ {
		b, err := os.ReadFile(filepath.Join(tallyDir, fmt.Sprintf("process-%d.json", p)))
		Expect(err).NotTo(HaveOccurred(), "tallies of process %d", p)
		var part processTallies
		Expect(json.Unmarshal(b, &part)).To(Succeed(), "tallies of process %d", p)
		for n, t := range part.Mutants {
			if mutants[n] == nil {
				mutants[n] = &mutantTally{}
			}
			mutants[n].add(t)
		}
		agree.add(part.Agreement)
		for n, t := range part.Faults {
			s := total[n]
			if s == nil {
				s = &tally{}
				total[n] = s
			}
			s.Tried += t.Tried
			s.Inapplicable += t.Inapplicable
			s.Equivalent += t.Equivalent
			s.Caught += t.Caught
			s.Survived += t.Survived
			s.DeeperOnly += t.DeeperOnly
		}
	}
	var none []string
	if len(total) > 0 { // else the label filter ran no fault class
		names := make([]string, 0, len(total))
		for n := range total {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "%-22s %6s %13s %10s %7s %8s %9s %12s\n", "fault class", "tried", "inapplicable", "equivalent", "caught", "survived", "kill rate", "deeper-only")
		for _, n := range names {
			t := total[n]
			rate := "-"
			if d := t.Caught + t.Survived; d > 0 {
				rate = fmt.Sprintf("%.1f%%", 100*float64(t.Caught)/float64(d))
			}
			fmt.Fprintf(&b, "%-22s %6d %13d %10d %7d %8d %9s %12d\n", n, t.Tried, t.Inapplicable, t.Equivalent, t.Caught, t.Survived, rate, t.DeeperOnly)
			if t.Caught == 0 {
				none = append(none, n)
			}
		}
		AddReportEntry(fmt.Sprintf("kill rate per fault class (%d processes)", suite.ParallelTotal), b.String())
	}
	reportAgreement(agree)
	survived, misfiled := reportConsumerMutants(suite.ParallelTotal, mutants)
	// A class that never produced a caught mutant proves nothing: every
	// fault class that ran, in any process, must be detected somewhere.
	Expect(none).To(BeEmpty(), "fault classes of which no mutant was caught anywhere")
	Expect(survived).To(BeEmpty(), "consumer mutants that no program caught: a pattern (or a fault class) is missing")
	Expect(misfiled).To(BeEmpty(), "consumer mutants documented as exposable only by faulty tables, killed on the default mix")
})

var _ = DescribeTable("a fault injected into a correct table is caught unless it is equivalent",
	func(abi target.Target, v sframe.Version, class faultClass) {
		t := tallies[class.name]
		if t == nil {
			t = &tally{}
			tallies[class.name] = t
		}
		var opt gen.Options
		n := mutantsPerClass
		if programs := faultPrograms[class.name]; programs != nil {
			opt.Patterns, n = programs(abi, v)
		}
		for i := int64(0); i < int64(n); i++ {
			seed := GinkgoRandomSeed() + i
			img, prog, err := campaign.Produce(producer.Builtin{Version: v}, abi, seed, opt)
			Expect(err).NotTo(HaveOccurred())
			clean := checker(abi).Trace(img, consumer.NewBuiltin())
			Expect(clean.Clean()).To(BeTrue(), "seed %d: the unmutated table must conform before mutating it", seed)

			in := &mutationInput{abi: abi, v: v, seed: seed, prog: prog, img: img, executed: clean.Executed}
			m, ok := class.apply(in)
			t.Tried++
			if !ok {
				t.Inapplicable++
				continue
			}
			probe, err := newProbe(in, m)
			Expect(err).NotTo(HaveOccurred(), "seed %d", seed)
			res := checker(abi).Check(m.img, probe)
			caught := !res.Clean()
			GinkgoWriter.Printf("%s v%d seed %d: %s: differs=%v (top row: %v) caught=%v (%s) [%s]\n", abi.Name(), v, seed, m.desc, probe.differs, probe.topDiffers, caught, probe.firstWhy, firstFailure(res))
			if probe.differs && !probe.topDiffers {
				t.DeeperOnly++
			}
			measureOnFaultyImage(abi, v, seed, class.name, m)
			switch {
			case !probe.differs && !caught:
				t.Equivalent++
			case caught:
				t.Caught++
			default:
				t.Survived++
				Fail(fmt.Sprintf("%s v%d seed %d: mutant %q changes the unwind rule at step %d (pc 0x%x: %s) but the harness found nothing",
					abi.Name(), v, seed, m.desc, probe.firstStep, probe.firstPC, probe.firstWhy))
			}
		}
	},
	mutationEntries(),
)

func mutationEntries() []TableEntry {
	var out []TableEntry
	for _, abi := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			for _, c := range faultClasses {
				if programs := faultPrograms[c.name]; programs != nil {
					if _, n := programs(abi, v); n == 0 {
						continue
					}
				}
				out = append(out, Entry(fmt.Sprintf("%s v%d %s", abi.Name(), v, c.name),
					Label("target:"+abi.Name(), fmt.Sprintf("version:%d", v), "fault:"+c.name),
					abi, v, c))
			}
		}
	}
	return out
}

// mutationInput is what a fault class may look at to place its fault.
type mutationInput struct {
	abi      target.Target
	v        sframe.Version
	seed     int64
	prog     *gen.Program
	img      *image.Image
	executed []uint64
}

// executedIn reports whether any executed PC lies in [lo, hi).
func (in *mutationInput) executedIn(lo, hi uint64) bool {
	for _, pc := range in.executed {
		if pc >= lo && pc < hi {
			return true
		}
	}
	return false
}
