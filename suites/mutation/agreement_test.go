package mutation_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// programsPerCell is how many programs of the default mix each (target,
// version) cell checks with the suite's unwinder, against the builtin,
// and with every consumer mutant.
const programsPerCell = 60

// agreement counts the steps on which the builtin consumer and the
// suite's unwinder were compared.
type agreement struct {
	Programs, Steps, Frames, Disagreements int
	First                                  string
}

// agreed is this process's count; process 1 adds them up.
var agreed agreement

func (a *agreement) add(b agreement) {
	a.Programs += b.Programs
	a.Steps += b.Steps
	a.Frames += b.Frames
	a.Disagreements += b.Disagreements
	if a.First == "" {
		a.First = b.First
	}
}

func reportAgreement(a agreement) {
	if a.Programs == 0 {
		return // the label filter ran no cell
	}
	first := ""
	if a.First != "" {
		first = " (first: " + a.First + ")"
	}
	AddReportEntry("the suite's unwinder against the builtin consumer",
		fmt.Sprintf("%d programs of the default mix, %d steps, %d frames compared field by field: %d disagreements%s",
			a.Programs, a.Steps, a.Frames, a.Disagreements, first))
}

var _ = DescribeTable("the suite's unwinder agrees with the builtin on the default mix, and each of its mutants is caught",
	func(abi target.Target, v sframe.Version) {
		for i := int64(0); i < programsPerCell; i++ {
			seed := GinkgoRandomSeed() + i
			img, _, err := campaign.Produce(producer.Builtin{Version: v}, abi, seed, gen.Options{})
			Expect(err).NotTo(HaveOccurred())

			// The reference: judged by the harness, and compared frame for
			// frame with the builtin consumer at every step.
			both := newAgreeing()
			ref := checker(abi).Check(img, both)
			agreed.add(agreement{Programs: 1, Steps: both.steps, Frames: both.frames, Disagreements: both.disagreements})
			if both.first != "" {
				agreed.add(agreement{First: fmt.Sprintf("%s v%d seed %d: %s", abi.Name(), v, seed, both.first)})
			}
			Expect(both.first).To(BeEmpty(), "%s v%d seed %d: the suite's unwinder and the builtin disagree", abi.Name(), v, seed)
			Expect(ref.Clean()).To(BeTrue(), "%s v%d seed %d: the suite's unwinder must conform where the builtin does: %s",
				abi.Name(), v, seed, firstFailure(ref))

			runConsumerMutants(abi, v, seed, img)
		}
	},
	cellEntries(),
)

func cellEntries() []TableEntry {
	var out []TableEntry
	for _, abi := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			out = append(out, Entry(fmt.Sprintf("%s v%d", abi.Name(), v),
				Label("target:"+abi.Name(), fmt.Sprintf("version:%d", v), "consumer-mutants"), abi, v))
		}
	}
	return out
}

// firstFailure says what the harness found first in a result.
func firstFailure(r *harness.Result) string {
	switch {
	case len(r.Failures) > 0:
		f := r.Failures[0]
		return fmt.Sprintf("step %d pc %#x %s (%s): %s %s", f.Step, f.PC, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail)
	case r.LoadErr != nil:
		return "refused the section: " + r.LoadErr.Error()
	case r.RunErr != nil:
		return "run stopped: " + r.RunErr.Error()
	case r.Invalid():
		return "section invalid"
	}
	return "clean"
}

// agreeing runs the builtin consumer and the suite's unwinder on every
// step, hands the suite's backtrace to the harness and records where the
// two differ in any frame's fields or in how they stopped.
type agreeing struct {
	builtin *consumer.Builtin
	suite   *suiteUnwinder
	mine    []consumer.Result

	steps, frames, disagreements int
	first                        string
}

func newAgreeing() *agreeing {
	return &agreeing{builtin: consumer.NewBuiltin(), suite: newSuiteUnwinder(intact, "suite"), mine: make([]consumer.Result, 1)}
}

func (a *agreeing) Name() string   { return "suite" }
func (a *agreeing) BatchSize() int { return 1 }
func (a *agreeing) Close() error   { return nil }

func (a *agreeing) Supports(t target.Target, v int) error { return a.suite.Supports(t, v) }

func (a *agreeing) Load(img *image.Image) error {
	errB, errS := a.builtin.Load(img), a.suite.Load(img)
	if (errB == nil) != (errS == nil) {
		a.disagree(0, fmt.Sprintf("the builtin's load says %v, the suite's %v", errB, errS))
	}
	return errS
}

func (a *agreeing) Unwind(steps []consumer.Step, out []consumer.Result) error {
	if err := a.suite.Unwind(steps, out); err != nil {
		return err
	}
	for i := range steps {
		if err := a.builtin.Unwind(steps[i:i+1], a.mine); err != nil {
			return err
		}
		a.steps++
		a.frames += len(out[i].Frames)
		if why := backtraceDiff(a.mine[0], out[i]); why != "" {
			a.disagree(steps[i].Index, fmt.Sprintf("pc %#x: %s", steps[i].Regs.PC, why))
		}
	}
	return nil
}

func (a *agreeing) disagree(step int, why string) {
	a.disagreements++
	if a.first == "" {
		a.first = fmt.Sprintf("step %d: %s", step, why)
	}
}

// backtraceDiff says how two backtraces differ ("" when they do not):
// a frame's fields, the depth, or how they stopped (complete, no
// information, failed).
func backtraceDiff(a, b consumer.Result) string {
	for i := range min(len(a.Frames), len(b.Frames)) {
		if a.Frames[i] != b.Frames[i] {
			return fmt.Sprintf("frame %d: %v vs %v", i, a.Frames[i], b.Frames[i])
		}
	}
	if len(a.Frames) != len(b.Frames) {
		return fmt.Sprintf("%d frames vs %d", len(a.Frames), len(b.Frames))
	}
	if ka, kb := stopKind(a.Err), stopKind(b.Err); ka != kb {
		return fmt.Sprintf("stopped with %s (%v) vs %s (%v)", ka, a.Err, kb, b.Err)
	}
	return ""
}

func stopKind(err error) string {
	switch {
	case err == nil:
		return "no error"
	case errors.Is(err, frame.ErrNoInfo):
		return "no information"
	}
	return "a failure"
}
