package consumer

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// docs/consumer-protocol.md is what authors of consumers in other
// languages write from: these tests hold it to the code.

func protocolDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/consumer-protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The document's example session, replayed against the reference
// implementation (Serve around the builtin consumer), gives exactly the
// answers the document shows.
func TestProtocolDocExample(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	_, ex, ok := strings.Cut(doc, "## Example")
	if !ok {
		t.Fatal("no Example section")
	}
	m := regexp.MustCompile("(?s)```\n(.*?)```").FindStringSubmatch(ex)
	if m == nil {
		t.Fatal("no code block in the Example section")
	}
	var in, want bytes.Buffer
	for _, l := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "> "):
			in.WriteString(l[2:] + "\n")
		case strings.HasPrefix(l, "< "):
			want.WriteString(l[2:] + "\n")
		default:
			t.Fatalf("example line %q is neither > nor <", l)
		}
	}
	// The example's section is the one the exec tests use.
	var load bytes.Buffer
	w := newLineWriter(&load)
	if err := writeLoad(w, x86Image(t), ProtocolVersion); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(in.String(), load.String()) {
		t.Errorf("the example's load line is not x86Image's:\n%s", load.String())
	}
	var got bytes.Buffer
	if err := Serve(&in, &got, NewBuiltin()); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("the reference implementation answers the example\n%s\nthe document says\n%s", got.String(), want.String())
	}
}

// The register table: SP, FP and link register of every target, and the
// registers every step carries.
func TestProtocolDocRegisters(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	names := map[target.Target][3]string{
		target.X86_64:    {"rsp", "rbp", ""},
		target.AArch64:   {"sp", "x29", "x30"},
		target.AArch64BE: {"sp", "x29", "x30"},
		target.S390X:     {"r15", "r11", "r14"},
	}
	for _, tg := range target.All {
		n := names[tg]
		lr := "none (16 is the return-address column; never sent)"
		sent := fmt.Sprintf("%d, %d", tg.SP(), tg.FP())
		if tg.HasLinkRegister() {
			lr = fmt.Sprintf("%d (%s)", tg.RA(), n[2])
			sent += fmt.Sprintf(", %d", tg.RA())
		}
		row := fmt.Sprintf("| `%s` | %d (%s) | %d (%s) | %s | %s |", tg.Name(), tg.SP(), n[0], tg.FP(), n[1], lr, sent)
		if !strings.Contains(doc, row+"\n") {
			t.Errorf("the register table lacks the row\n%s", row)
		}
	}
	// The s390x FPR order is the one the signal context restores.
	if !strings.Contains(doc, "16-23 are f0, f2, f4, f6, f1, f3, f5, f7 and\n24-31 are f8, f10, f12, f14, f9, f11, f13, f15") {
		t.Error("the s390x FPR numbering is missing")
	}
}

type identityMemory struct{}

func (identityMemory) ReadWord(a uint64) (uint64, bool) { return a, true }

// signalRow is the document's row of the signal context table for tg, made
// from where sframe's unwinder reads each register (reading through a
// memory whose every word is its own address).
func signalRow(t *testing.T, tg target.Target) string {
	u := &sframe.Unwinder{Table: &sframe.Table{ABI: sframe.ABI(tg)}}
	var out sframe.RegisterFile
	f := &sframe.Frame{SP: 1 << 40}
	if err := u.SignalContext(f, 1, identityMemory{}, &out); err != nil {
		t.Fatal(err)
	}
	var regs []string
	for r := 0; r < sframe.MaxReg; r++ {
		if out.Valid&(1<<r) != 0 {
			regs = append(regs, fmt.Sprintf("%d: %d", r, out.Regs[r]-f.SP))
		}
	}
	return fmt.Sprintf("| `%s` | %d | %s |", tg.Name(), out.PC-f.SP, strings.Join(regs, ", "))
}

// The signal context table matches where the unwinder reads.
func TestProtocolDocSignalContext(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	for _, tg := range target.All {
		if row := signalRow(t, tg); !strings.Contains(doc, row+"\n") {
			t.Errorf("the signal context table lacks the row\n%s", row)
		}
	}
}

// The numbers the document states are the code's.
func TestProtocolDocLimits(t *testing.T) {
	t.Parallel()
	doc := protocolDoc(t)
	for _, want := range []string{
		fmt.Sprintf("hello %s %d", ProtocolName, ProtocolVersion),
		fmt.Sprintf("N is at most %d", ExecBatch),
		fmt.Sprintf("%d s per exchange by default", int(DefaultExecTimeout.Seconds())),
		fmt.Sprintf("fails %d batches (or loads) in a row", MaxConsecutiveFailures),
		"SFCONFORM_CONSUMER_TIMEOUT",
		"longer than 1 MiB",
		"NFRAMES is at most 4096",
		"(the last 4 KiB)",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document does not say %q", want)
		}
	}
	if stderrTail != 4<<10 {
		t.Errorf("stderrTail is %d, the document says 4 KiB", stderrTail)
	}
	if MaxAnswerLine != 1<<20 {
		t.Errorf("MaxAnswerLine is %d, the document says 1 MiB", MaxAnswerLine)
	}
}

func newLineWriter(b *bytes.Buffer) *bufio.Writer { return bufio.NewWriter(b) }
