package consumer

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The chaos suite: an external consumer (internal/chaosconsumer) that
// serves the builtin consumer's answers and breaks the protocol on
// purpose. Whatever it does, every batch returns within the timeout and a
// kill, with either the right answers or an error saying what went wrong,
// and the run goes on. Run under the race detector by make test (a short
// slice) and the campaign (SFCONFORM_CHAOS_LONG=1).
//
// SFCONFORM_SEED fixes the random slice's seed (default: the clock,
// logged): the violations chosen; which batch a violation at the
// end of a batch fails can vary with timing. SFCONFORM_CHAOS_BATCH is its
// number of batches.

// chaosClasses are the violations chaosconsumer commits; it fails on a
// name it does not know.
var chaosClasses = []string{
	"syntax", "index", "nframes", "toomany", "toofew", "garbage", "overlong",
	"after", "closeout", "exit", "stop", "sleep", "floodstderr",
}

const chaosTimeout = time.Second

// chaosBound is the wall clock one batch may take: the timeout, the grace
// for an exit, the kill, and slack for a loaded machine.
const chaosBound = chaosTimeout + exitGrace + stopWait + 5*time.Second

var chaosBin struct {
	once sync.Once
	path string
	err  error
}

// chaosCommand builds chaosconsumer once per test binary and returns the
// command that runs it with env.
func chaosCommand(t *testing.T, env string) string {
	t.Helper()
	chaosBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "sfconform-chaos")
		if err != nil {
			chaosBin.err = err
			return
		}
		chaosBin.path = filepath.Join(dir, "chaosconsumer")
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", chaosBin.path,
			"github.com/sfconform/sfconform/consumer/internal/chaosconsumer").CombinedOutput()
		if err != nil {
			chaosBin.err = fmt.Errorf("building chaosconsumer: %v\n%s", err, out)
		}
	})
	if chaosBin.err != nil {
		t.Fatal(chaosBin.err)
	}
	return env + " exec " + toolchain.ShellQuote(chaosBin.path)
}

// chaosSteps is a batch of n steps from index first: each unwinds to two
// frames, the second partial (see protocolSteps).
func chaosSteps(first, n int) []Step {
	steps := make([]Step, n)
	for i := range steps {
		snap := &machine.Snapshot{StackAddr: 0x7ff8, Stack: []byte{0x05, 0x50, 0, 0, 0, 0, 0, 0}}
		snap.Regs.PC = 0x1004
		snap.Regs.Set(target.RegX86SP, 0x7ff8)
		snap.Regs.Set(target.RegX86FP, 0xaaaa)
		steps[i] = Step{Index: first + i, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	return steps
}

// chaosBatch runs one batch within chaosBound and, when it succeeds,
// checks its answers against the builtin consumer's.
func chaosBatch(t *testing.T, e *Exec, ref *Builtin, steps []Step) error {
	t.Helper()
	out := make([]Result, len(steps))
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- e.Unwind(steps, out) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(chaosBound):
		buf := make([]byte, 1<<20)
		t.Fatalf("no return within %v: the consumer hung the harness\n%s", chaosBound, buf[:runtime.Stack(buf, true)])
	}
	if d := time.Since(start); d > chaosTimeout+exitGrace+stopWait+2*time.Second {
		t.Errorf("a batch took %v", d)
	}
	if err != nil {
		var x *execError
		if !errors.As(err, &x) && !errors.Is(err, ErrGaveUp) {
			t.Errorf("a failed batch is not a process failure: %T %v", err, err)
		}
		return err
	}
	want := make([]Result, 1)
	for i := range steps {
		if err := ref.Unwind(steps[i:i+1], want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out[i].Frames, want[0].Frames) || (out[i].Err == nil) != (want[0].Err == nil) {
			t.Errorf("step %d: a batch that succeeded answered %v (%v), want %v (%v)",
				steps[i].Index, out[i].Frames, out[i].Err, want[0].Frames, want[0].Err)
		}
	}
	return nil
}

// Each violation, committed once at the second answer of a batch of 100, fails
// that batch (except a flood of standard error, which is allowed) with an
// error naming what was read, within the bound; the restarted consumer
// answers the next batch right.
func TestChaosEachClass(t *testing.T) {
	t.Parallel()
	img := x86Image(t)
	for _, class := range chaosClasses {
		t.Run(class, func(t *testing.T) {
			t.Parallel()
			once := filepath.Join(t.TempDir(), "committed")
			e := NewExec("exec:chaos", chaosCommand(t, fmt.Sprintf("CHAOS_CLASS=%s CHAOS_AT=2 CHAOS_ONCE=%s", class, toolchain.ShellQuote(once))))
			e.SetTimeout(chaosTimeout)
			defer e.Close()
			ref := NewBuiltin()
			if err := ref.Load(img); err != nil {
				t.Fatal(err)
			}
			if err := e.Load(img); err != nil {
				t.Fatal(err)
			}
			err := chaosBatch(t, e, ref, chaosSteps(10, 100))
			if _, statErr := os.Stat(once); statErr != nil {
				t.Fatalf("the consumer did not commit %s: %v", class, statErr)
			}
			switch {
			case class == "floodstderr" && err != nil:
				t.Errorf("a flood of standard error failed the batch: %v", err)
			case class != "floodstderr" && err == nil:
				t.Errorf("%s went unnoticed", class)
			default:
				t.Logf("%s: %v", class, err)
			}
			if err := e.Load(img); err != nil {
				t.Fatalf("reload after %s: %v", class, err)
			}
			if err := chaosBatch(t, e, ref, chaosSteps(20, 3)); err != nil {
				t.Errorf("the batch after %s: %v", class, err)
			}
		})
	}
}

// Random violations at random answers, batch after batch: no batch ever
// hangs, every batch is either right or a process failure.
func TestChaosRandom(t *testing.T) {
	t.Parallel()
	seed := testenv.Seed(t, uint64(time.Now().UnixNano()))
	batches := 30
	if os.Getenv("SFCONFORM_CHAOS_LONG") != "" {
		batches = 1000
	}
	if v, err := strconv.Atoi(os.Getenv("SFCONFORM_CHAOS_BATCH")); err == nil && v > 0 {
		batches = v
	}
	t.Logf("%d batches", batches)
	img := x86Image(t)
	ref := NewBuiltin()
	if err := ref.Load(img); err != nil {
		t.Fatal(err)
	}
	cmd := chaosCommand(t, fmt.Sprintf("CHAOS_CLASS=random CHAOS_RATE=0.08 CHAOS_SEED=%d", seed))
	newExec := func() *Exec {
		e := NewExec("exec:chaos", cmd)
		e.SetTimeout(chaosTimeout)
		if err := e.Load(img); err != nil && !errors.As(err, new(*execError)) {
			t.Fatal(err)
		}
		return e
	}
	e := newExec()
	defer func() { e.Close() }()
	failed, slowest := 0, time.Duration(0)
	for b := 0; b < batches; b++ {
		start := time.Now()
		err := chaosBatch(t, e, ref, chaosSteps(b*4, 4))
		slowest = max(slowest, time.Since(start))
		if errors.Is(err, ErrGaveUp) {
			e.Close()
			e = newExec()
		}
		if err != nil {
			failed++
		}
	}
	t.Logf("%d of %d batches failed; the slowest took %v (timeout %v)", failed, batches, slowest.Round(time.Millisecond), chaosTimeout)
}

// A consumer that fails every batch is given up on after
// MaxConsecutiveFailures, and says so; it then costs nothing.
func TestChaosGivesUp(t *testing.T) {
	t.Parallel()
	img := x86Image(t)
	e := NewExec("exec:chaos", chaosCommand(t, "CHAOS_CLASS=garbage CHAOS_RATE=1"))
	e.SetTimeout(chaosTimeout)
	defer e.Close()
	if err := e.Load(img); err != nil {
		t.Fatal(err)
	}
	out := make([]Result, 2)
	for i := 0; i < MaxConsecutiveFailures; i++ {
		err := e.Unwind(chaosSteps(0, 2), out)
		if err == nil || errors.Is(err, ErrGaveUp) {
			t.Fatalf("batch %d: %v, want a process failure", i, err)
		}
	}
	start := time.Now()
	err := e.Unwind(chaosSteps(0, 2), out)
	if !errors.Is(err, ErrGaveUp) {
		t.Fatalf("after %d failures: %v, want ErrGaveUp", MaxConsecutiveFailures, err)
	}
	if err := e.Load(img); !errors.Is(err, ErrGaveUp) {
		t.Errorf("load after giving up: %v", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("giving up took %v", d)
	}
	t.Log(err)
}
