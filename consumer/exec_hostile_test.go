package consumer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// hostileBound is the wall clock one batch may take against a consumer
// that breaks the protocol: far above the 2 s timeout these tests set, far
// below forever.
const hostileBound = time.Minute

// hostileSteps is a batch of n steps numbered from 100, so that an index
// echoed in hexadecimal differs from the decimal one.
func hostileSteps(n int) []Step {
	steps := make([]Step, n)
	for i := range steps {
		snap := &machine.Snapshot{StackAddr: 0x7ff8, Stack: []byte{0x05, 0x50, 0, 0, 0, 0, 0, 0}}
		snap.Regs.PC = 0x1004
		snap.Regs.Set(target.RegX86SP, 0x7ff8)
		steps[i] = Step{Index: 100 + i, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	return steps
}

// unwindWithin runs one batch and fails the test when it does not return
// within hostileBound: the harness would have hung.
func unwindWithin(t *testing.T, e *Exec, steps []Step, out []Result) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.Unwind(steps, out) }()
	select {
	case err := <-done:
		return err
	case <-time.After(hostileBound):
		t.Fatalf("no return within %v: a consumer breaking the protocol hung the harness", hostileBound)
		return nil
	}
}

// A consumer that answers every step with a line that does not parse, and
// more lines after it, fails its batch within the timeout (it used to hang
// the run: the reader goroutine blocked on a full channel while the
// failure waited for it). Each case is a misreading seen from consumers
// written from the protocol document.
func TestExecBadAnswersDoNotHang(t *testing.T) {
	t.Parallel()
	const frames = `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do echo "frame pc=1 sp=2 fp=3 cfa=4"; done`
	for _, c := range []struct{ name, answer, want string }{
		{"nframes not a number", `echo "result $1 a"; ` + frames, "bad result line"},
		{"more frames than NFRAMES", `echo "result $1 10"; ` + frames, "want \"result INDEX NFRAMES\""},
		{"index in hex", `printf 'result %x 0\n' $1; ` + frames, "asked for step"},
		{"one garbage line per step", `echo "lorem ipsum dolor sit amet"`, "want \"result INDEX NFRAMES\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := script(t, fmt.Sprintf(`echo "hello sfconform-unwind 1 hostile"
while read cmd rest; do
	case $cmd in
	load) echo ok ;;
	step) set -- $rest; %s ;;
	quit) exit 0 ;;
	esac
done
`, c.answer))
			e := NewExec("exec:hostile", cmd)
			e.timeout = 2 * time.Second
			defer e.Close()
			if err := e.Load(x86Image(t)); err != nil {
				t.Fatal(err)
			}
			steps := hostileSteps(200)
			out := make([]Result, len(steps))
			for batch := 0; batch < 2; batch++ {
				start := time.Now()
				err := unwindWithin(t, e, steps, out)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("batch %d: %v, want an error mentioning %q", batch, err, c.want)
				}
				if d := time.Since(start); d > e.timeout+5*time.Second {
					t.Errorf("batch %d took %v, more than the timeout %v and a kill", batch, d, e.timeout)
				}
			}
		})
	}
}

// A consumer that stops reading its input (here after its hello) leaves
// sfconform writing into a full pipe: the write deadline ends the load
// within the timeout, as a failure.
func TestExecConsumerThatStopsReading(t *testing.T) {
	t.Parallel()
	cmd := script(t, `echo "hello sfconform-unwind 1 deaf"; exec sleep 60`)
	e := NewExec("exec:deaf", cmd)
	e.timeout = 2 * time.Second
	defer e.Close()
	img := *x86Image(t)
	img.SFrame = make([]byte, 4<<20) // 8 MiB of hex: far more than a pipe holds
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- e.Load(&img) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sending the section") {
			t.Fatalf("load into a consumer that does not read: %v", err)
		}
		if d := time.Since(start); d > e.timeout+5*time.Second {
			t.Errorf("the load took %v", d)
		}
	case <-time.After(hostileBound):
		t.Fatalf("no return within %v: a consumer that stops reading hung the harness", hostileBound)
	}
}
