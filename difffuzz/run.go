package difffuzz

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/validate"
)

// Answer is what one consumer made of a case.
type Answer struct {
	Consumer string
	// LoadErr is the consumer's refusal of the section, or its failure
	// (Crashed) while loading it.
	LoadErr error
	// Results holds one result per step asked; Asked says how many were:
	// after a crash on a step, the steps after it are not asked.
	Results []consumer.Result
	Asked   int
	// Crashed is true when the process died (or hung, or answered
	// garbage) on the load (CrashStep -1) or on step CrashStep; Crash is
	// what it reported.
	Crashed   bool
	CrashStep int
	Crash     string
}

// Refused reports whether the consumer declined the section without
// failing.
func (a *Answer) Refused() bool { return a.LoadErr != nil && !a.Crashed }

// Runner asks cases of the builtin consumer, libsframe and, for sections
// it can read, glibc. It keeps the out-of-process consumers running
// between cases; Close stops them.
//
// libsframe trusts a section in the host's byte order and writes into its
// own copy of one in the other: a malformed section can corrupt the
// process's heap without crashing it, and a later case then crashes for
// it. So a case whose section the layout finds malformed runs in a fresh
// libsframe process, and after its steps the process loads a section
// holding only a header (which frees everything the case's decoder
// allocated, where the C library checks the heap): a crash there is the
// case's, reported as a crash at step AfterSteps.
type Runner struct {
	builtin   *consumer.Builtin
	libsframe consumer.Consumer
	glibc     consumer.Consumer // nil: not asked
	dirty     bool              // the libsframe process has read a malformed section
}

// AfterSteps is the step of a crash that happened after a case's steps,
// when the consumer freed what the case left.
const AfterSteps = -2

// LibsframeEnv names the environment variable that replaces the
// provisioned libsframe consumer with another libsframe (libsframe:DIR, a
// build of one's own or a patched one: ci/verify-fixes.sh replays the
// stored cases against it). Its disagreements keep the class names of
// libsframe's.
const LibsframeEnv = "SFCONFORM_DIFFFUZZ_LIBSFRAME"

// renamed is a consumer answering under its registry kind's name
// (libsframe:DIR as libsframe).
type renamed struct {
	consumer.Consumer
	name string
}

func (r renamed) Name() string { return r.name }

// NewRunner starts nothing yet; it fails when the C consumers are not
// built (a *toolchain.NotProvisionedError). withGlibc adds glibc.
func NewRunner(withGlibc bool) (*Runner, error) {
	r := &Runner{builtin: consumer.NewBuiltin()}
	var l consumer.Consumer
	var err error
	if name := os.Getenv(LibsframeEnv); name != "" {
		l, err = consumer.New(name)
		if a, ok := consumer.Lookup(name); ok && err == nil {
			// Its answers are libsframe's: classes and kept cases
			// name the consumer by its kind.
			l = renamed{Consumer: l, name: a.Kind}
		}
	} else {
		l, err = consumer.NewLibsframe()
	}
	if err != nil {
		return nil, err
	}
	r.libsframe = l
	if withGlibc {
		g, err := consumer.NewGlibc(false)
		if err != nil {
			return nil, err
		}
		r.glibc = g
	}
	return r, nil
}

func (r *Runner) Close() {
	r.libsframe.Close()
	if r.glibc != nil {
		r.glibc.Close()
	}
}

// Outcome is a case's answers and the disagreements found in them.
type Outcome struct {
	Case    *Case
	Layout  *layout
	Builtin *Answer
	// Others are libsframe's answer and, when the section passes
	// validation and glibc reads its version and byte order, glibc's.
	Others        []*Answer
	Disagreements []Disagreement
}

// Run asks the case of every consumer and classifies each disagreement
// with the builtin consumer.
func (r *Runner) Run(c *Case) *Outcome {
	o := &Outcome{Case: c, Layout: readLayout(c.Section, c.Addr)}
	o.Builtin = ask(r.builtin, c)
	malformed := len(o.Layout.broken) > 0
	if malformed || r.dirty {
		r.libsframe.Close() // the next Load starts a fresh process
	}
	r.dirty = malformed
	lib := ask(r.libsframe, c)
	if malformed && !lib.Crashed {
		if err := r.libsframe.Load(headerOnly(c)); err != nil && isProcessFailure(err) {
			lib.Crashed, lib.CrashStep = true, AfterSteps
			lib.Crash = err.Error() + " [loading a header-only section after the case's steps: freeing what the case left]"
		}
	}
	o.Others = append(o.Others, lib)
	if r.glibc != nil && glibcReads(r.glibc, c, o.Layout) {
		o.Others = append(o.Others, ask(r.glibc, c))
	}
	for _, a := range o.Others {
		o.Disagreements = append(o.Disagreements, compare(o, a)...)
	}
	return o
}

// headerOnly is a section of c's target holding only a header, as GNU as
// would write it with no function.
func headerOnly(c *Case) *image.Image {
	h := make([]byte, 28)
	o := c.Target.ByteOrder()
	o.PutUint16(h, 0xdee2)
	h[2], h[3], h[4] = 3, 0x5, byte(c.Target)
	_, ra := sframe.DefaultFixedOffsets(sframe.ABI(c.Target))
	h[6] = byte(ra)
	return &image.Image{Target: c.Target, SFrame: h, SFrameAddr: c.Addr, SFrameVersion: 3, Producer: "difffuzz"}
}

// glibcReads says whether glibc gets the case: its decoder takes no
// length and reads through raw pointers, so only a section that passes
// validation, of a version and byte order it reads.
func glibcReads(g consumer.Consumer, c *Case, l *layout) bool {
	if len(l.sections) != 1 || g.Supports(c.Target, int(l.sections[0].version)) != nil {
		return false
	}
	return !validate.Invalid(validate.Section(c.Image()))
}

// ask loads the case's section into cons and unwinds every step. A batch
// that kills the process is asked again one step at a time up to the
// step that kills it; the steps after it are not asked.
func ask(cons consumer.Consumer, c *Case) *Answer {
	a := &Answer{Consumer: cons.Name(), CrashStep: -1}
	if err := cons.Load(c.Image()); err != nil {
		a.LoadErr = err
		a.Crashed = !isRefusal(err)
		if a.Crashed {
			a.Crash = err.Error()
		}
		return a
	}
	steps := make([]consumer.Step, len(c.Steps))
	for i, s := range c.Steps {
		steps[i] = consumer.Step{Index: i, Regs: &s.Regs, Mem: s, Snapshot: s}
	}
	a.Results = make([]consumer.Result, len(steps))
	if cons.BatchSize() <= 1 {
		for i := range steps {
			if err := cons.Unwind(steps[i:i+1], a.Results[i:i+1]); err != nil {
				a.Crashed, a.CrashStep, a.Crash = true, i, err.Error()
				return a
			}
			a.Asked++
		}
		return a
	}
	batchErr := cons.Unwind(steps, a.Results)
	if batchErr == nil {
		a.Asked = len(steps)
		return a
	}
	for i := range steps {
		if err := cons.Unwind(steps[i:i+1], a.Results[i:i+1]); err != nil {
			a.Crashed, a.CrashStep, a.Crash = true, i, err.Error()
			return a
		}
		a.Asked++
	}
	// The batch failed, no single step does: what the steps before left
	// in the process's memory matters (a read of freed or stray heap
	// bytes). The reproducer is the whole batch.
	a.Crashed, a.CrashStep = true, len(steps)
	a.Crash = batchErr.Error() + " [the whole batch; every step alone succeeded]"
	return a
}

// isRefusal tells a consumer's refusal of a section from a failure of its
// process: the exec consumers say "NAME refused the section: ...".
func isRefusal(err error) bool {
	return strings.Contains(err.Error(), " refused the section: ") || !isProcessFailure(err)
}

// isProcessFailure recognises what an exec consumer reports when its
// process dies, hangs or prints garbage.
func isProcessFailure(err error) bool {
	if errors.Is(err, consumer.ErrProtocol) {
		return true
	}
	s := err.Error()
	for _, m := range []string{"(process ", "killed by signal", "fatal signal", "no answer within", "closed its output"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// stopKind is how a backtrace ended, as the consumers' protocol says it.
func stopKind(err error) string {
	switch {
	case err == nil:
		return "complete"
	case errors.Is(err, frame.ErrNoInfo):
		return "noinfo"
	}
	return "failed"
}

// sameResult reports whether two results are the same backtrace: every
// frame's values and flags, and the kind of stop.
func sameResult(a, b consumer.Result) bool {
	if stopKind(a.Err) != stopKind(b.Err) || len(a.Frames) != len(b.Frames) {
		return false
	}
	for i := range a.Frames {
		if a.Frames[i] != b.Frames[i] {
			return false
		}
	}
	return true
}

func resultString(r consumer.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d frames", stopKind(r.Err), len(r.Frames))
	for _, f := range r.Frames {
		fmt.Fprintf(&b, " [pc=%#x sp=%#x fp=%#x cfa=%#x", f.PC, f.SP, f.FP, f.CFA)
		if f.Outermost {
			b.WriteString(" outermost")
		}
		if f.Partial {
			b.WriteString(" partial")
		}
		if f.Signal {
			b.WriteString(" signal")
		}
		b.WriteString("]")
	}
	if r.Err != nil {
		fmt.Fprintf(&b, " (%v)", r.Err)
	}
	return b.String()
}

// stepPC is the PC of step i of c.
func stepPC(c *Case, i int) uint64 {
	if i < 0 || i >= len(c.Steps) {
		return 0
	}
	return c.Steps[i].Regs.PC
}
