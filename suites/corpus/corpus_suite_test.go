package corpus_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/minimize"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/toolchain"
)

func TestCorpus(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "curated reproducers")
}

// casesDir holds the curated reproducers: every real finding the
// toolchain producers and the consumers reach, and every fixed bug of
// sfconform recovered from its history (curate_test.go makes them).
const casesDir = "../../corpus/cases"

// cases lists the curated case files, one table entry each.
func cases() []TableEntry {
	paths, err := filepath.Glob(filepath.Join(casesDir, "*.json"))
	if err != nil {
		panic(err)
	}
	sort.Strings(paths)
	var out []TableEntry
	for _, p := range paths {
		labels := []string{"corpus"}
		if c, err := corpus.Load(p); err == nil {
			labels = append(labels, "target:"+c.Target, "producer:"+c.Producer, "consumer:"+c.Consumer)
			if c.Expect != nil && c.Expect.Fails {
				labels = append(labels, "upstream")
			} else {
				labels = append(labels, "fixed")
			}
		}
		out = append(out, Entry(filepath.Base(p), Label(labels...), p))
	}
	return out
}

// missing is testenv.Missing for a spec: a skip before setup has run, a
// failure after.
func missing(err error) {
	required, rerr := testenv.SetupRequired()
	switch {
	case rerr != nil:
		Fail(rerr.Error())
	case required:
		Fail(fmt.Sprintf("%v, although %s=1 says setup has run: run 'make setup'", err, testenv.RequireSetupEnv))
	default:
		Skip(fmt.Sprintf("%v: run 'make setup'; skipping", err))
	}
}

// notProvisioned reports whether err is about a missing setup piece.
func notProvisioned(err error) bool {
	return errors.Is(err, toolchain.ErrNotProvisioned)
}

var _ = DescribeTable("a curated reproducer",
	func(path string) {
		c, err := corpus.Load(path)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Expect).NotTo(BeNil(), "a curated case says what its replay must show (expect)")
		Expect(c.Expect.Note).NotTo(BeEmpty())
		By(c.Expect.Note)

		if c.Expect.Regenerate {
			regenerated(c)
			return
		}
		r, err := repro.Run(c, repro.Options{})
		if notProvisioned(err) {
			missing(err)
		}
		Expect(err).NotTo(HaveOccurred())
		if !c.Expect.Fails {
			Expect(r.Res.Clean()).To(BeTrue(), "fixed: the case must conform, and fails: %s\n%s", describe(r), r.Table(6, 2))
			return
		}
		Expect(r.SameFailure()).To(BeTrue(), "the recorded failure (step %d: %v %s, frame %d) is gone: %s",
			c.Step, c.Verdict, c.Field, c.Frame, describe(r))
		// An upstream bug reproduces with the provisioned toolchain, not
		// only in the stored bytes: the program made again by it.
		p, err := producer.New(c.Producer)
		if notProvisioned(err) {
			missing(err)
		}
		Expect(err).NotTo(HaveOccurred())
		if producer.IsToolchain(p) {
			again, err := repro.Run(c, repro.Options{Remake: true})
			if notProvisioned(err) {
				missing(err)
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(again.SameFailure()).To(BeTrue(), "made again by the provisioned %s (%s), the failure is gone: %s",
				c.Producer, again.Img.Record.Versions(), describe(again))
		}
	},
	cases(),
)

// regenerated checks a fixed bug of gen: the program made again from the
// case's coordinates by today's gen conforms with the case's producer and
// consumer, and the stored program, what the bug made, still fails.
func regenerated(c *corpus.Case) {
	prog, err := repro.Regenerate(c)
	Expect(err).NotTo(HaveOccurred())
	prod, err := producer.New(c.Producer)
	if notProvisioned(err) {
		missing(err)
	}
	Expect(err).NotTo(HaveOccurred())
	img, err := prod.Produce(prog)
	Expect(err).NotTo(HaveOccurred())
	cons, err := consumer.New(c.Consumer)
	if notProvisioned(err) {
		missing(err)
	}
	Expect(err).NotTo(HaveOccurred())
	defer cons.Close()
	chk, err := harness.New(img.Target, harness.Options{})
	Expect(err).NotTo(HaveOccurred())
	defer chk.Close()
	res := chk.Check(img, cons)
	sig, _ := minimize.SignatureOf(img, res)
	Expect(res.Clean()).To(BeTrue(), "the program today's gen makes for seed %d fails: %v", c.Seed, sig)
	// Not the program the bug made: other code, or another signal on the
	// failing path.
	var sig0 *image.Signal
	for _, s := range prog.Signals() {
		if s.Path == c.Path {
			s.Path = 0
			sig0 = &s
		}
	}
	stored := c.Signal
	if stored != nil {
		s := *stored
		s.Path = 0
		stored = &s
	}
	Expect(bytes.Equal(prog.Code, c.Code) && reflect.DeepEqual(sig0, stored)).To(BeFalse(), "today's gen makes the program the bug made")

	old, err := repro.Run(c, repro.Options{})
	Expect(err).NotTo(HaveOccurred())
	Expect(old.SameFailure()).To(BeTrue(), "the stored program, the one the bug made, no longer fails as recorded: %s", describe(old))
}

func describe(r *repro.Replay) string {
	res := r.Res
	switch {
	case r.Failure != nil:
		return fmt.Sprintf("step %d at %s: %v %s", r.Failure.Step, r.Failure.Function, r.Failure.Judgement.Verdict, r.Failure.Judgement.Detail)
	case res.LoadErr != nil:
		return "the consumer refused the section: " + res.LoadErr.Error()
	case res.RunErr != nil:
		return "the run stopped: " + res.RunErr.Error()
	case len(res.Failures) > 0:
		f := res.Failures[0]
		return fmt.Sprintf("conforms at the recorded step; fails at step %d at %s: %v %s", f.Step, f.Function, f.Judgement.Verdict, f.Judgement.Detail)
	case res.Invalid():
		return "the section is invalid"
	}
	return fmt.Sprintf("all %d steps conform", res.Steps)
}

var _ = Describe("the curated corpus", func() {
	It("has a case for each finding and fixed bug it claims", func() {
		paths, err := filepath.Glob(filepath.Join(casesDir, "*.json"))
		Expect(err).NotTo(HaveOccurred())
		var upstream, fixed int
		for _, p := range paths {
			c, err := corpus.Load(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Format).To(Equal(corpus.FormatName), "%s: curated cases are kept in the current format", p)
			Expect(c.Replay).To(Equal("sfconform repro corpus/cases/"+filepath.Base(p)), "%s: its replay command", p)
			if c.Expect != nil && c.Expect.Fails {
				upstream++
				Expect(c.Expect.Finding).NotTo(BeEmpty(), "%s: an upstream bug names its finding", p)
			} else {
				fixed++
				Expect(c.Expect.Fix).NotTo(BeEmpty(), "%s: a fixed bug names the commit that fixed it", p)
			}
		}
		Expect(upstream).To(BeNumerically(">=", 6))
		Expect(fixed).To(BeNumerically(">=", 3))
	})
})
