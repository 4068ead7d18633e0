package consumer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	Register(About{Kind: "exec", Setup: toolchain.NoSetup, NeedsArg: true,
		Summary: "exec:COMMAND, any program speaking the unwind protocol (docs/consumer-protocol.md)"}, func(name, arg string) (Consumer, error) {
		if strings.TrimSpace(arg) == "" {
			return nil, fmt.Errorf("consumer %q: exec needs a command, e.g. exec:'./my-unwinder --flag'", name)
		}
		return NewExec(name, arg), nil
	})
}

// DefaultExecTimeout bounds how long an external consumer may take over
// one batch (or its hello, or a load) before it is taken for hung;
// SFCONFORM_CONSUMER_TIMEOUT (Go duration syntax) overrides it.
const DefaultExecTimeout = 10 * time.Second

// ExecBatch is how many steps an external consumer gets at once.
const ExecBatch = 256

// MaxAnswerLine bounds one line a consumer writes: an answer longer than
// that is a protocol violation like any other, read no further.
const MaxAnswerLine = 1 << 20

// MaxConsecutiveFailures is how many batches (or loads) in a row a
// consumer may fail, each costing up to the timeout, before it is given
// up on: from then on every batch fails at once with ErrGaveUp.
const MaxConsecutiveFailures = 5

// ErrGaveUp is a consumer that failed MaxConsecutiveFailures batches in a
// row: it is not started again.
var ErrGaveUp = errors.New("gave up on the consumer")

// Exec is an external consumer: a program speaking the unwind protocol
// (docs/consumer-protocol.md) on its standard input and output, started by
// /bin/sh -c COMMAND. A consumer that crashes, hangs, stops, closes its
// output or prints anything but the protocol fails the batch it was given
// (every step ERROR, with what was read and its standard error attached)
// within the timeout; it is killed and started again for the next batch,
// with the section reloaded, until it has failed MaxConsecutiveFailures
// times in a row.
type Exec struct {
	name, command string
	timeout       time.Duration

	proc        *execProc
	peer        string // what the consumer's hello said after the version
	proto       int    // the protocol version the consumer answered with
	img         *image.Image
	supports    map[string]error
	failures    int   // consecutive failed exchanges
	giveUpAfter int   // failures in a row that end it; <= 0: never
	lastErr     error // the last of them
}

// execProc is one running instance of the command.
type execProc struct {
	cmd    *exec.Cmd
	in     *bufio.Writer
	stdin  *os.File // the write end of the consumer's standard input
	stdout *os.File // the read end of its standard output
	// lines carries what a reader goroutine reads from stdout, in
	// chunks: a line and the complete lines buffered after it, so that
	// a batch's answers cost a few channel receives, not one each
	// (each a goroutine switch: 15% of an exec consumer's run).
	lines   chan []lineOrErr
	pending []lineOrErr   // received, not yet read
	held    stackCopy     // the stack copy the consumer holds (version 4)
	quit    chan struct{} // closed by stop: the reader gives up
	stderr  *tailBuffer
	done    chan struct{} // closed when the process has been waited for
	exit    error
}

type lineOrErr struct {
	line string
	err  error
}

// NewExec makes an external consumer; the process starts on first use.
func NewExec(name, command string) *Exec {
	t := DefaultExecTimeout
	if v, err := time.ParseDuration(os.Getenv("SFCONFORM_CONSUMER_TIMEOUT")); err == nil && v > 0 {
		t = v
	}
	return &Exec{name: name, command: command, timeout: t, supports: map[string]error{}, giveUpAfter: MaxConsecutiveFailures}
}

// SetGiveUpAfter sets how many failures in a row end the consumer (n <= 0:
// never). The C consumers never give up: a crash of the library they wrap
// belongs to the section it was given, a finding per input, and the next
// section deserves its own answer.
func (e *Exec) SetGiveUpAfter(n int) { e.giveUpAfter = n }

func (e *Exec) Name() string   { return e.name }
func (e *Exec) BatchSize() int { return ExecBatch }

// Command is the shell command the consumer runs.
func (e *Exec) Command() string { return e.command }

// SetTimeout sets how long one exchange (hello, supports, load, a batch)
// may take; d <= 0 keeps the current one.
func (e *Exec) SetTimeout(d time.Duration) {
	if d > 0 {
		e.timeout = d
	}
}

// Protocol is the unwind protocol version the consumer speaks, once
// started (0 before).
func (e *Exec) Protocol() int { return e.proto }

// LayoutsRead is what the consumer's registry entry declares it reads
// (LayoutsRead of its name) and, when it speaks protocol version 2 or later,
// images of several modules: the program is started to learn its version.
func (e *Exec) LayoutsRead() []string {
	out := slices.Clone(LayoutsRead(e.name))
	if e.start() == nil && e.proto >= ProtocolModules && !slices.Contains(out, "modules") {
		out = append(out, "modules")
	}
	return out
}

// Peer is what the consumer said of itself in its hello (name and
// version), once started.
func (e *Exec) Peer() string { return e.peer }

// ExactVersion is what the program said of itself in its hello, once
// started; its name (the command) before.
func (e *Exec) ExactVersion() string {
	if e.peer != "" {
		return e.peer
	}
	return e.name
}

// ErrCannotAsk is a consumer that did not answer whether it supports a
// target and version: it could not be started, crashed, hung or spoke
// garbage. That is a broken consumer, not an unsupported pair.
var ErrCannotAsk = errors.New("cannot be asked")

// Supports asks the consumer ("supports TARGET VERSION"); a consumer that
// cannot be asked returns an error wrapping ErrCannotAsk.
func (e *Exec) Supports(t target.Target, v int) error {
	key := fmt.Sprintf("%s %d", t.Name(), v)
	if err, ok := e.supports[key]; ok {
		return err
	}
	err := e.ask("supports "+key, func(line string) error {
		switch {
		case line == "yes":
			return nil
		case strings.HasPrefix(line, "no"):
			return errors.New(strings.TrimSpace(strings.TrimPrefix(line, "no")))
		}
		return protoErr("want yes or no to %q, got %q", "supports "+key, truncate(line))
	})
	var fail *execError
	if errors.As(err, &fail) {
		e.stop()
		return fmt.Errorf("%s %w: %w", e.name, ErrCannotAsk, err)
	}
	e.supports[key] = err
	return err
}

// Load sends the section; a refusal is returned as the consumer's reason.
func (e *Exec) Load(img *image.Image) error {
	e.img = img
	if err := e.gaveUp(); err != nil {
		return err
	}
	return e.load()
}

func (e *Exec) load() error {
	if err := e.start(); err != nil {
		return err
	}
	if len(e.img.Modules) > 0 && e.proto < ProtocolModules {
		// Not the consumer's failure: it was never given the image.
		return fmt.Errorf("%s: %w (it speaks version %d; the image has %d modules)", e.name, ErrModulesUnsupported, e.proto, len(e.img.Modules))
	}
	e.proc.stdin.SetWriteDeadline(time.Now().Add(e.timeout))
	e.proc.held.valid = false // a load forgets the stack copy
	if err := writeLoad(e.proc.in, e.img, e.proto); err != nil {
		return e.fail(fmt.Errorf("sending the section: %w", err))
	}
	line, err := e.readLine()
	if err != nil {
		return e.fail(fmt.Errorf("waiting for ok after load: %w", err))
	}
	switch {
	case line == "ok":
		return nil
	case strings.HasPrefix(line, "refused"):
		return fmt.Errorf("%s refused the section: %s", e.name, strings.TrimSpace(strings.TrimPrefix(line, "refused")))
	}
	return e.fail(protoErr("want ok or refused after load, got %q", truncate(line)))
}

// gaveUp is ErrGaveUp, with the last failure, once the consumer has
// failed too often in a row.
func (e *Exec) gaveUp() error {
	if e.giveUpAfter <= 0 || e.failures < e.giveUpAfter {
		return nil
	}
	return fmt.Errorf("%s: %w after %d failures in a row, not starting it again; the last: %v", e.name, ErrGaveUp, e.failures, e.lastErr)
}

// Unwind sends one batch and reads every answer. Any failure of the
// process is returned (the harness judges the batch ERROR) and the process
// is restarted for the next batch.
func (e *Exec) Unwind(steps []Step, out []Result) error {
	if e.img == nil {
		return errors.New("no section loaded")
	}
	if err := e.gaveUp(); err != nil {
		return err
	}
	if e.proc == nil {
		if err := e.load(); err != nil {
			return err
		}
	}
	if err := e.leftover(); err != nil {
		return e.fail(err)
	}
	// The steps go out while the answers come in: a consumer answers
	// each step as it reads it, and when its answers fill the pipe
	// before the batch has been sent, a writer that waited for the whole
	// batch to go out first would wait forever on a consumer waiting for
	// its answers to be read. The write deadline (and the kill, on a read
	// error) ends a writer that is stuck.
	deadline := time.Now().Add(e.timeout)
	e.proc.stdin.SetWriteDeadline(deadline)
	written := make(chan error, 1)
	in := e.proc.in
	var held *stackCopy
	if e.proto >= ProtocolDiff {
		held = &e.proc.held
	}
	go func() { written <- writeSteps(in, steps, held) }()
	for i := range steps {
		if err := e.readResult(deadline, steps[i].Index, &out[i]); err != nil {
			err = e.fail(fmt.Errorf("answer %d of %d (step %d): %w", i+1, len(steps), steps[i].Index, err))
			<-written
			return err
		}
	}
	if err := <-written; err != nil {
		return e.fail(fmt.Errorf("sending steps: %w", err))
	}
	e.failures, e.lastErr = 0, nil
	return nil
}

// leftover is a violation when the consumer wrote anything after its last
// answer (output after a result ends).
func (e *Exec) leftover() error {
	p := e.proc
	if len(p.pending) == 0 {
		select {
		case chunk, ok := <-p.lines:
			if !ok {
				return fmt.Errorf("between two exchanges: %w", io.EOF)
			}
			p.pending = chunk
		default:
			return nil
		}
	}
	l := p.pending[0]
	if l.err != nil {
		return fmt.Errorf("between two exchanges: %w", l.err)
	}
	return protoErr("output after the last answer: %q", truncate(l.line))
}

// Close asks the consumer to quit and waits for it briefly.
func (e *Exec) Close() error {
	if e.proc == nil {
		return nil
	}
	e.proc.stdin.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintln(e.proc.in, "quit")
	e.proc.in.Flush()
	e.proc.stdin.Close()
	select {
	case <-e.proc.done:
	case <-time.After(2 * time.Second):
	}
	e.stop()
	return nil
}

// execError is a failure of the process (not an answer of the consumer):
// it carries the consumer's standard error.
type execError struct {
	err    error
	stderr string
}

func (x *execError) Error() string {
	if x.stderr == "" {
		return x.err.Error()
	}
	return fmt.Sprintf("%v; its standard error ends with: %s", x.err, x.stderr)
}

func (x *execError) Unwrap() error { return x.err }

// fail kills the process, counts the failure and wraps err with the
// process's standard error.
func (e *Exec) fail(err error) error {
	p := e.proc
	e.stop()
	x := &execError{err: fmt.Errorf("%s: %w", e.name, err)}
	if p != nil {
		x.stderr = strings.ToValidUTF8(strings.TrimSpace(p.stderr.String()), "?")
		if p.exit != nil {
			x.err = fmt.Errorf("%s: %w (process %s)", e.name, err, exitReport(p.exit))
		}
	}
	e.failures++
	e.lastErr = x
	return x
}

// exitReport says how the process ended, naming the signal of a crash:
// also when /bin/sh ran the command as a child and reports its death by
// signal N as exit status 128+N.
func exitReport(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err.Error()
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return err.Error()
	case ws.Signaled():
		return fmt.Sprintf("killed by signal %d, %s", int(ws.Signal()), ws.Signal())
	case ws.ExitStatus() > 128 && ws.ExitStatus() < 128+65:
		sig := syscall.Signal(ws.ExitStatus() - 128)
		return fmt.Sprintf("exit status %d: a shell's report of a command killed by signal %d, %s", ws.ExitStatus(), int(sig), sig)
	}
	return err.Error()
}

// stopWait bounds how long stop waits for a killed process to be reaped:
// SIGKILL cannot be ignored, so only a process stuck in the kernel takes
// longer, and the harness does not wait for it.
const stopWait = 5 * time.Second

// stop kills the process and everything it started, and unblocks every
// goroutine that talks to it. It never waits longer than stopWait.
func (e *Exec) stop() {
	p := e.proc
	if p == nil {
		return
	}
	e.proc = nil
	close(p.quit)
	if p.cmd.Process != nil {
		// The shell and whatever it started: a process group. A
		// stopped process dies of SIGKILL too.
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		p.cmd.Process.Kill()
	}
	// A descendant that left the group may still hold the pipes: the
	// deadlines end a reader or writer blocked on them.
	now := time.Now()
	p.stdin.SetWriteDeadline(now)
	p.stdout.SetReadDeadline(now)
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(stopWait):
	}
}

// start runs the command and exchanges hellos.
func (e *Exec) start() error {
	if e.proc != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", e.command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The pipes are made here, not by exec.Cmd, so that they take
	// deadlines and Wait never waits on them.
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	p := &execProc{cmd: cmd, stdin: inW, stdout: outR, in: bufio.NewWriterSize(inW, 1<<20),
		lines: make(chan []lineOrErr, 4), quit: make(chan struct{}),
		stderr: &tailBuffer{max: stderrTail}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	// The copy of standard error ends this long after the process, even
	// when a descendant holds it open.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("%s: starting %q: %w", e.name, e.command, err)
	}
	e.proc = p
	go p.read()
	go func() {
		p.exit = cmd.Wait()
		close(p.done)
	}()
	p.stdin.SetWriteDeadline(time.Now().Add(e.timeout))
	fmt.Fprintf(p.in, "hello %s %d\n", ProtocolName, ProtocolVersion)
	if err := p.in.Flush(); err != nil {
		return e.fail(fmt.Errorf("sending hello: %w", err))
	}
	line, err := e.readLine()
	if err != nil {
		return e.fail(fmt.Errorf("waiting for hello: %w", err))
	}
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "hello" || f[1] != ProtocolName {
		return e.fail(protoErr("want \"hello %s VERSION NAME\", got %q", ProtocolName, truncate(line)))
	}
	v, err := strconv.Atoi(f[2])
	if err != nil || v < 1 || v > ProtocolVersion {
		return e.fail(protoErr("consumer speaks version %q, want 1 to %d", f[2], ProtocolVersion))
	}
	e.peer, e.proto = strings.Join(f[3:], " "), v
	return nil
}

// read passes the consumer's output lines on until the first error (end
// of output, a line longer than MaxAnswerLine, a closed pipe) or until
// stop gives up on the process: it never blocks on a reader that has gone.
func (p *execProc) read() {
	defer p.stdout.Close()
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	for {
		// One line, waiting for it, then the complete lines already
		// buffered: a chunk ends at an error or at a line not yet
		// complete, so no line waits for later output.
		line, err := readLineMax(r, MaxAnswerLine)
		chunk := make([]lineOrErr, 1, 16)
		chunk[0] = lineOrErr{line, err}
		for err == nil && len(chunk) < maxChunk && lineBuffered(r) {
			line, err = readLineMax(r, MaxAnswerLine)
			chunk = append(chunk, lineOrErr{line, err})
		}
		select {
		case p.lines <- chunk:
		case <-p.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

// maxChunk bounds the lines the reader passes on at once.
const maxChunk = 512

// lineBuffered reports whether r holds a whole line: reading it does not
// wait for the consumer.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// ask sends one line and interprets the one-line answer.
func (e *Exec) ask(q string, answer func(string) error) error {
	if err := e.start(); err != nil {
		return err
	}
	if err := e.leftover(); err != nil {
		return e.fail(err)
	}
	e.proc.stdin.SetWriteDeadline(time.Now().Add(e.timeout))
	fmt.Fprintln(e.proc.in, q)
	if err := e.proc.in.Flush(); err != nil {
		return e.fail(err)
	}
	line, err := e.readLine()
	if err != nil {
		return e.fail(err)
	}
	if err := answer(line); errors.Is(err, ErrProtocol) {
		return e.fail(err)
	} else {
		return err
	}
}

func (e *Exec) readLine() (string, error) {
	return e.readLineBy(time.Now().Add(e.timeout))
}

// exitGrace is how long a consumer that closed its output gets to exit
// by itself, so that its exit status is reported rather than our kill.
const exitGrace = 500 * time.Millisecond

func (e *Exec) readLineBy(deadline time.Time) (string, error) {
	p := e.proc
	if len(p.pending) == 0 {
		// A timer only when the answer is not there yet.
		select {
		case chunk, ok := <-p.lines:
			if !ok {
				return e.closed()
			}
			p.pending = chunk
		default:
			timer := time.NewTimer(time.Until(deadline))
			select {
			case chunk, ok := <-p.lines:
				timer.Stop()
				if !ok {
					return e.closed()
				}
				p.pending = chunk
			case <-timer.C:
				return "", fmt.Errorf("no answer within %v (hung?)", e.timeout)
			}
		}
	}
	l := p.pending[0]
	p.pending = p.pending[1:]
	if errors.Is(l.err, io.EOF) {
		return e.closed()
	}
	return l.line, l.err
}

// closed is readLineBy's answer at the end of the consumer's output,
// given once the process has exited (or exitGrace has passed), so that
// its exit status is in the failure.
func (e *Exec) closed() (string, error) {
	select {
	case <-e.proc.done:
	case <-time.After(exitGrace):
	}
	return "", errors.New("the consumer closed its output")
}

// readResult reads one step's answer from the reader goroutine's lines.
func (e *Exec) readResult(deadline time.Time, index int, out *Result) error {
	return readResult(func() (string, error) { return e.readLineBy(deadline) }, index, out)
}

// stderrTail is how much of a consumer's standard error is kept and
// attached to a failure: the end of it.
const stderrTail = 4 << 10

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) > t.max {
		t.buf.Reset()
		t.buf.Write(p[len(p)-t.max:])
		return len(p), nil
	}
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
