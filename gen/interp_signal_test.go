package gen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// The interpreter delivers the program's signals as the kernel does
// (package sigframe, checked against the C headers): before the chosen
// instruction's chosen execution it writes the signal frame from its own
// registers and flag, enters the handler with the registers the kernel
// sets and records a truth for the trampoline; rt_sigreturn in the
// trampoline loads everything back from the frame. The handler's rows are
// checked like any function's, by its entry; the trampoline's against
// what its CFI means for the interrupted context (sigTruth).

// interrupted is a signal's truth: the context it interrupted.
type interrupted struct {
	pc, sp, fp, lr uint64
	frame          uint64 // the signal frame (the handler's entry SP)
	record         uint64 // AArch64: the frame record above it
}

// sigState follows one run's signal.
type sigState struct {
	sig   *image.Signal
	seen  int  // executions of the interrupted instruction so far
	done  bool // delivered
	steps int  // instructions executed in the handler and trampoline
}

// pathSignal returns the signal of the path whose arguments are args, or,
// for other arguments, one of the program's signals: any of them may
// strike on any path.
func pathSignal(p *gen.Program, args []uint64) *sigState {
	sigs := p.Signals()
	if len(sigs) == 0 {
		return &sigState{}
	}
	k := -1
	for i, a := range p.ArgSets {
		if fmt.Sprint(a) == fmt.Sprint(args) {
			k = i
		}
	}
	if k < 0 {
		k = 0
		for _, a := range args {
			k += int(a & 3)
		}
	}
	s := sigs[k%len(sigs)]
	return &sigState{sig: &s}
}

// regName is the interpreter's name of DWARF register d, "" for none.
func regName(abi target.Target, d int) string {
	switch abi {
	case target.X86_64:
		if d < 8 {
			return dwarfName(abi, d)
		}
		if d < 16 {
			return fmt.Sprintf("r%d", d)
		}
	case target.S390X:
		if d < 16 {
			return fmt.Sprintf("r%d", d)
		}
		return fmt.Sprintf("f%d", sigframe.S390XFPROfDwarf[d-16])
	default:
		return dwarfName(abi, d)
	}
	return ""
}

// The condition the interpreter models, in each target's flags.
func zfFlags(abi target.Target, zf bool) uint64 {
	switch abi {
	case target.X86_64:
		if zf {
			return 1<<6 | 2
		}
		return 2
	case target.S390X:
		if zf {
			return 0 // CC 0
		}
		return 1 << (63 - 19) // CC 1
	}
	if zf {
		return 1 << 30 // Z
	}
	return 0
}

func zfOf(abi target.Target, flags uint64) bool {
	switch abi {
	case target.X86_64:
		return flags&(1<<6) != 0
	case target.S390X:
		return flags&(3<<(63-19)) == 0
	}
	return flags&(1<<30) != 0
}

func (m *machine) context() *sigframe.Context {
	c := &sigframe.Context{PC: m.pc, Flags: zfFlags(m.abi, m.zf)}
	for d := range c.Regs {
		if n := regName(m.abi, d); n != "" {
			c.Regs[d] = m.reg[n]
		}
	}
	return c
}

func (m *machine) setContext(c *sigframe.Context) {
	for d := range c.Regs {
		if n := regName(m.abi, d); n != "" {
			m.reg[n] = c.Regs[d]
		}
	}
	m.pc, m.zf = c.PC, zfOf(m.abi, c.Flags)
}

// deliver delivers the run's signal when the instruction about to execute
// is the interrupted one: the frame, the handler's registers, and two
// truths, the trampoline's (its context) and the handler's (its entry).
func (m *machine) deliver(p *gen.Program, s *sigState, stack []truth) []truth {
	if s.sig == nil || s.done || m.pc != s.sig.At {
		return stack
	}
	if s.seen++; s.seen < max(s.sig.Count, 1) {
		return stack
	}
	s.done = true
	l := sigframe.Of(m.abi)
	ctx := m.context()
	d := l.Deliver(ctx, s.sig.Signo, s.sig.Handler, s.sig.Restorer)
	o := m.abi.ByteOrder()
	for k := 0; k+8 <= len(d.Data); k += 8 {
		m.mem[d.Frame+uint64(k)] = o.Uint64(d.Data[k:])
	}
	in := &interrupted{pc: ctx.PC, sp: ctx.Regs[m.abi.SP()], fp: ctx.Regs[m.abi.FP()], frame: d.Frame}
	if m.abi.HasLinkRegister() {
		in.lr = ctx.Regs[m.abi.RA()]
	}
	if l.Record >= 0 {
		in.record = d.Frame + uint64(l.Record)
	}
	m.setContext(&d.Entry)
	tramp := findFunc(p, s.sig.Restorer)
	// The trampoline's CFA means nothing; the frame's address stands in,
	// as in the oracle, so that a signal taken on a fresh stack keeps the
	// interrupted frames when the handler returns (freshStack).
	return append(stack, truth{fn: tramp, cfa: d.Frame, sig: in}, m.entryTruth(findFunc(p, s.sig.Handler)))
}

// sigreturn performs rt_sigreturn when text is the trampoline's system
// call: the registers and flag come back from the frame and the
// trampoline's truth goes. ok reports whether text was one.
func (m *machine) sigreturn(t *testing.T, where fmt.Stringer, text string, stack []truth) ([]truth, bool) {
	mn, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	rest = strings.TrimSpace(rest)
	var ok bool
	switch m.abi {
	case target.X86_64:
		ok = mn == "syscall" && m.reg["rax"] == sigframe.RtSigreturnX86_64
	case target.S390X:
		ok = mn == "svc" && rest == fmt.Sprint(sigframe.RtSigreturnS390X)
	default:
		ok = mn == "svc" && num(rest) == 0 && m.reg["x8"] == sigframe.RtSigreturnAArch64
	}
	if !ok {
		if mn == "syscall" || mn == "svc" && m.abi != target.S390X {
			t.Fatalf("%s: a system call that is not rt_sigreturn", where)
		}
		return stack, false
	}
	if len(stack) == 0 || stack[len(stack)-1].sig == nil {
		t.Fatalf("%s: rt_sigreturn outside a signal trampoline's frame", where)
	}
	l := sigframe.Of(m.abi)
	frame := l.ReturnFrame(m.reg[m.spName()])
	b := make([]byte, l.Size)
	o := m.abi.ByteOrder()
	for k := uint64(0); k < l.Size; k += 8 {
		o.PutUint64(b[k:], m.mem[frame+k])
	}
	next, err := l.Return(b, m.context())
	if err != nil {
		t.Fatal(err)
	}
	in := stack[len(stack)-1].sig
	m.setContext(&next)
	if m.pc != in.pc || m.reg[m.spName()] != in.sp {
		t.Fatalf("%s: rt_sigreturn resumes at pc 0x%x sp 0x%x, the signal struck at pc 0x%x sp 0x%x", where, m.pc, m.reg[m.spName()], in.pc, in.sp)
	}
	return stack[:len(stack)-1], true
}

// checkSignalRow checks a trampoline's row against what its CFI means:
// x86-64 (glibc's __restore_rt) the context itself, CFA the interrupted
// SP, RA the interrupted PC, FP the interrupted %rbp; AArch64 (the vDSO)
// the frame record above the signal frame, CFA its address, FP and RA
// the interrupted x29 and x30; s390x (the vDSO) the entry rules, the RA
// in %r14. The function must be marked a signal frame.
func checkSignalRow(t *testing.T, m *machine, where fmt.Stringer, row sframe.Row, in *interrupted) {
	t.Helper()
	if !row.Signal {
		t.Fatalf("%s: the signal trampoline's row is not a signal frame's: %+v", where, row)
	}
	cfa, okC := m.eval(row.CFA, 0, "")
	ra, okR := m.eval(row.RA, cfa, m.raName())
	fp, okF := m.eval(row.FP, cfa, m.fpName())
	var want [3]uint64
	switch m.abi {
	case target.X86_64:
		want = [3]uint64{in.sp, in.pc, in.fp}
	case target.S390X:
		want = [3]uint64{m.reg["r15"] + 160, m.reg["r14"], in.fp}
	default:
		want = [3]uint64{in.record, in.lr, in.fp}
	}
	if !okC || !okR || !okF || [3]uint64{cfa, ra, fp} != want {
		t.Fatalf("%s: trampoline row %+v gives CFA 0x%x RA 0x%x FP 0x%x (ok %v %v %v), its CFI means 0x%x 0x%x 0x%x",
			where, row, cfa, ra, fp, okC, okR, okF, want[0], want[1], want[2])
	}
}

// callDepth is the depth of the call chain, the signal's frames and what
// the handler calls left out.
func callDepth(stack []truth) int {
	for i, tr := range stack {
		if tr.sig != nil {
			return i
		}
	}
	return len(stack)
}

// TestSignalsDelivered: the interpreter delivers the signals of most
// paths of programs of the signal pattern (an instruction chosen off
// every path's track is not reached on some) and each one returns.
func TestSignalsDelivered(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		delivered, paths := 0, 0
		for _, seed := range testSeeds(t, 20) {
			p := mustGenerate(t, abi, seed, gen.Options{Patterns: []string{"signal"}})
			for _, args := range p.ArgSets {
				st := run(t, p, args)
				paths++
				if st.signalSteps > 0 {
					delivered++
				}
			}
		}
		t.Logf("%s: signals delivered on %d of %d paths", abi.Name(), delivered, paths)
		if delivered < paths/2 {
			t.Errorf("%s: signals delivered on %d of %d paths only", abi.Name(), delivered, paths)
		}
	}
}
