package consumer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// With SFCONFORM_TEST_SERVE=1 the test binary is a protocol server backed
// by the builtin consumer: the exec consumer's tests talk to it as to any
// external unwinder.
func TestMain(m *testing.M) {
	if v := os.Getenv("SFCONFORM_TEST_SERVE"); v == "1" || v == "v1" {
		var in io.Reader = os.Stdin
		if v == "v1" {
			// A consumer of protocol version 1: whatever sfconform
			// offers, Serve is offered version 1 and speaks it.
			r := bufio.NewReader(os.Stdin)
			if _, err := r.ReadString('\n'); err != nil {
				os.Exit(1)
			}
			in = io.MultiReader(strings.NewReader("hello "+ProtocolName+" 1\n"), r)
		}
		if err := Serve(in, os.Stdout, NewBuiltin()); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serverCommand(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "SFCONFORM_TEST_SERVE=1 exec " + exe
}

// steps builds unwind steps with snapshots for the x86-64 image of
// x86Image: one inside the function with a caller that has no FDE
// (noinfo), one whose return address is unreadable (failed), one at an
// address no FDE covers (noinfo at frame 0).
func protocolSteps() []Step {
	mk := func(index int, pc uint64, stack []byte) Step {
		snap := &machine.Snapshot{StackAddr: 0x7ff8, Stack: stack}
		snap.Regs.PC = pc
		snap.Regs.Set(target.RegX86SP, 0x7ff8)
		snap.Regs.Set(target.RegX86FP, 0xaaaa)
		return Step{Index: index, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	ra := []byte{0x05, 0x50, 0, 0, 0, 0, 0, 0} // 0x5005, little-endian
	return []Step{mk(3, 0x1004, ra), mk(4, 0x1004, nil), mk(9, 0x9000, ra)}
}

// An external consumer speaking the protocol gives the same results as
// the consumer it serves, frame for frame, error kind for error kind.
func TestExecMatchesInProcess(t *testing.T) {
	t.Parallel()
	img := x86Image(t)
	ref := NewBuiltin()
	if err := ref.Load(img); err != nil {
		t.Fatal(err)
	}
	steps := protocolSteps()
	want := make([]Result, len(steps))
	for i := range steps {
		if err := ref.Unwind(steps[i:i+1], want[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	e := NewExec("exec:test", serverCommand(t))
	defer e.Close()
	if err := e.Supports(target.S390X, 3); err != nil {
		t.Fatalf("Supports: %v", err)
	}
	if err := e.Supports(target.X86_64, 9); err == nil {
		t.Fatal("the server claims SFrame v9")
	}
	if err := e.Load(img); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.Peer(), "builtin") {
		t.Errorf("peer %q", e.Peer())
	}
	got := make([]Result, len(steps))
	if err := e.Unwind(steps, got); err != nil {
		t.Fatal(err)
	}
	for i := range steps {
		if !reflect.DeepEqual(got[i].Frames, want[i].Frames) {
			t.Errorf("step %d: frames\n got %v\nwant %v", steps[i].Index, got[i].Frames, want[i].Frames)
		}
		if errors.Is(got[i].Err, frame.ErrNoInfo) != errors.Is(want[i].Err, frame.ErrNoInfo) || (got[i].Err == nil) != (want[i].Err == nil) {
			t.Errorf("step %d: error %v, want %v", steps[i].Index, got[i].Err, want[i].Err)
		}
	}
	if !errors.Is(got[0].Err, frame.ErrNoInfo) || got[1].Err == nil || errors.Is(got[1].Err, frame.ErrNoInfo) {
		t.Errorf("error kinds: %v / %v", got[0].Err, got[1].Err)
	}
	// A refused section is the consumer's answer, not a process failure.
	bad := *img
	bad.SFrame = []byte{1, 2, 3}
	if err := e.Load(&bad); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("malformed section: %v", err)
	}
}

// script writes a shell script that plays a broken consumer.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "consumer.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A consumer that crashes, hangs or prints garbage fails its batch with
// its standard error attached, and the next batch runs on a restarted
// process.
func TestExecFailures(t *testing.T) {
	t.Parallel()
	img := x86Image(t)
	// Each script behaves badly on the first batch only (a marker file
	// remembers), then serves properly.
	good := serverCommand(t)
	for _, c := range []struct {
		name, bad, want string
	}{
		{"crash", `echo "hello sfconform-unwind 1 crashy"; read l; read l; echo ok; read l; echo "segfault at 0x0" >&2; exit 139`, "closed its output"},
		{"killed", `echo "hello sfconform-unwind 1 killed"; read l; read l; echo ok; read l; echo "about to die" >&2; kill -SEGV $$`, "closed its output"},
		{"hang", `echo "hello sfconform-unwind 1 sleepy"; read l; read l; echo ok; read l; echo "stuck" >&2; exec sleep 60`, "no answer within"},
		{"garbage", `echo "hello sfconform-unwind 1 noisy"; read l; read l; echo ok; read l; echo "lorem ipsum"; echo "oops" >&2; sleep 1`, "want \"result INDEX NFRAMES\""},
		{"wrong index", `echo "hello sfconform-unwind 1 off"; read l; read l; echo ok; read l; read l; echo "result 77 0"; sleep 1`, "asked for step"},
		{"bad hello", `echo "HTTP/1.1 400 Bad Request"; sleep 1`, "hello"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			cmd := script(t, fmt.Sprintf("if [ -e %s ]; then %s; fi\ntouch %s\n%s\n", marker, good, marker, c.bad))
			e := NewExec("exec:"+c.name, cmd)
			e.timeout = 2 * time.Second
			defer e.Close()
			steps := protocolSteps()[:1]
			out := make([]Result, 1)
			err := e.Load(img)
			if err == nil {
				err = e.Unwind(steps, out)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("first batch: %v, want an error mentioning %q", err, c.want)
			}
			var x *execError
			if !errors.As(err, &x) {
				t.Fatalf("first batch: %T, want a process failure", err)
			}
			if c.name == "crash" && !strings.Contains(err.Error(), "segfault at 0x0") {
				t.Errorf("standard error not attached: %v", err)
			}
			if c.name == "crash" && !strings.Contains(err.Error(), "signal 11, segmentation fault") {
				t.Errorf("exit status 139 not reported as signal 11: %v", err)
			}
			if c.name == "killed" && !strings.Contains(err.Error(), "killed by signal 11, segmentation fault") {
				t.Errorf("death by SIGSEGV not reported: %v", err)
			}
			// The run goes on: a restarted consumer answers the next batch.
			if err := e.Load(img); err != nil {
				t.Fatalf("reload after the failure: %v", err)
			}
			if err := e.Unwind(steps, out); err != nil || len(out[0].Frames) != 2 {
				t.Fatalf("second batch: %v, %v", err, out[0].Frames)
			}
		})
	}
}

func TestExecNeedsACommand(t *testing.T) {
	t.Parallel()
	if _, err := New("exec:"); err == nil {
		t.Fatal("exec without a command accepted")
	}
	c, err := New("exec:/nonexistent/unwinder")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Supports(target.X86_64, 3); err == nil {
		t.Fatal("a consumer that cannot start supports SFrame v3")
	}
}

// A consumer whose answers to a batch fill the pipe before the batch has
// been sent (long messages, large stack copies) is read while it is still
// being written to.
func TestExecLongAnswersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	cmd := script(t, `echo "hello sfconform-unwind 1 verbose"
while read cmd rest; do
	case $cmd in
	load) echo ok ;;
	step) set -- $rest; echo "result $1 0 failed $(printf '%02000d' 0)" ;;
	quit) exit 0 ;;
	esac
done
`)
	e := NewExec("exec:verbose", cmd)
	defer e.Close()
	if err := e.Load(x86Image(t)); err != nil {
		t.Fatal(err)
	}
	steps := make([]Step, ExecBatch)
	for i := range steps {
		snap := &machine.Snapshot{StackAddr: 0x7000, Stack: make([]byte, 8192)}
		snap.Regs.PC = 0x1004
		snap.Regs.Set(target.RegX86SP, 0x7ff8)
		steps[i] = Step{Index: i, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	out := make([]Result, len(steps))
	done := make(chan error, 1)
	go func() { done <- e.Unwind(steps, out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		// Not e.stop: it waits for a reader that is stuck too.
		syscall.Kill(-e.proc.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatal("a batch of long answers deadlocked the exec consumer")
	}
	if out[ExecBatch-1].Err == nil || len(out[ExecBatch-1].Err.Error()) < 2000 {
		t.Fatalf("last answer: %v", out[ExecBatch-1].Err)
	}
}
