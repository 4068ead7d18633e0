package emu

/*
#include "hook.h"
*/
import "C"

import (
	"bytes"
	"fmt"

	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// Signal is a signal a run receives. Before the instruction at At
// executes for the Count-th time (Count 0 counts as 1), the emulator
// delivers signal Signo to Handler as the Linux kernel does (package
// sigframe): it writes the frame, with the interrupted registers, flags
// and PC, below the SP, sets the registers the handler starts with and
// continues at Handler, which returns to Restorer. When the rt_sigreturn
// system call executes after that, the registers are loaded back from the
// frame and the interrupted instruction runs. A run delivers at most one
// signal; a run that never reaches At the Count-th time receives none.
type Signal struct {
	At       uint64
	Count    int
	Signo    int
	Handler  uint64
	Restorer uint64
}

// signals is a Machine's machinery for Run.Signal.
type signals struct {
	layout *sigframe.Layout
	// ids are the Unicorn registers of a sigframe.Context: the DWARF
	// registers dwarf[i] for ids[i], then the PC, the flags and (s390x) the
	// access registers; vals holds their values.
	ids   []C.int
	dwarf []int
	vals  []uint64
	// per run
	sig       *Signal
	delivered bool
}

func (m *Machine) setupSignals() {
	s := &m.sig
	s.layout = sigframe.Of(m.abi)
	for d, id := range m.t.regs {
		if _, ok := s.layout.Reg(d); ok {
			s.ids = append(s.ids, C.int(id))
			s.dwarf = append(s.dwarf, d)
		}
	}
	s.ids = append(s.ids, C.int(m.t.pc), C.int(m.t.flags))
	if m.abi == target.S390X {
		for i := 0; i < 16; i++ {
			s.ids = append(s.ids, C.int(uc.S390X_REG_A0+i))
		}
	}
	s.vals = make([]uint64, len(s.ids))
}

// armSignal prepares the C hook for the run's signal.
func (m *Machine) armSignal(r *Run) {
	s := &m.sig
	s.sig, s.delivered = r.Signal, false
	m.st.sig_pc, m.st.sig_count = 0, 0
	if r.Signal != nil {
		m.st.sig_pc = C.uint64_t(r.Signal.At)
		m.st.sig_count = C.uint64_t(max(r.Signal.Count, 1))
	}
}

// readContext reads the machine state the layout saves.
func (m *Machine) readContext(ctx *sigframe.Context) error {
	s := &m.sig
	if err := ucErr(C.emu_read_regs(m.h, &s.ids[0], (*C.uint64_t)(&s.vals[0]), C.int(len(s.ids)))); err != nil {
		return err
	}
	n := len(s.dwarf)
	for i, d := range s.dwarf {
		ctx.Regs[d] = s.vals[i]
	}
	ctx.PC, ctx.Flags = s.vals[n], s.vals[n+1]
	for i := range s.vals[n+2:] {
		ctx.Access[i] = uint32(s.vals[n+2+i])
	}
	return nil
}

// writeContext sets the machine state the layout saves.
func (m *Machine) writeContext(ctx *sigframe.Context) error {
	s := &m.sig
	n := len(s.dwarf)
	for i, d := range s.dwarf {
		s.vals[i] = ctx.Regs[d]
	}
	s.vals[n], s.vals[n+1] = ctx.PC, ctx.Flags
	for i := range s.vals[n+2:] {
		s.vals[n+2+i] = uint64(ctx.Access[i])
	}
	return ucErr(C.emu_write_regs(m.h, &s.ids[0], (*C.uint64_t)(&s.vals[0]), C.int(len(s.ids))))
}

// inStack reports whether [addr, addr+n) lies in the stack region.
func inStack(addr, n uint64) bool {
	return addr >= StackBase && addr <= StackTop && n <= StackTop-addr
}

// deliverSignal delivers the run's signal before the instruction the C
// hook stopped at, and returns where execution continues: the handler.
func (m *Machine) deliverSignal() (uint64, error) {
	s := &m.sig
	var ctx sigframe.Context
	if err := m.readContext(&ctx); err != nil {
		return 0, fmt.Errorf("reading the interrupted registers: %w", err)
	}
	// The hook's address, as every step reports it: Unicorn 2.0 reported
	// the block start from a register read on s390x.
	ctx.PC = uint64(m.st.pc)
	d := s.layout.Deliver(&ctx, s.sig.Signo, s.sig.Handler, s.sig.Restorer)
	if !inStack(d.Frame, uint64(len(d.Data))) {
		return 0, fmt.Errorf("the signal frame [%#x, +%d) does not fit the stack [%#x, %#x)", d.Frame, len(d.Data), StackBase, StackTop)
	}
	copy(m.stack[d.Frame-StackBase:], d.Data)
	if err := m.writeContext(&d.Entry); err != nil {
		return 0, fmt.Errorf("setting the handler's registers: %w", err)
	}
	m.st.min_sp = min(m.st.min_sp, C.uint64_t(d.Frame))
	s.delivered = true
	return d.Entry.PC, nil
}

// sigreturn performs rt_sigreturn when the system call the run stopped at
// is one, after a signal was delivered: ok reports whether it was, and pc
// is where execution continues, the interrupted instruction.
func (m *Machine) sigreturn() (pc uint64, ok bool, err error) {
	s := &m.sig
	if !s.delivered || m.st.stop != C.EMU_STOP_INTR {
		return 0, false, nil
	}
	var cur sigframe.Context
	if err := m.readContext(&cur); err != nil {
		return 0, false, fmt.Errorf("reading the registers at the system call: %w", err)
	}
	if !m.isSigreturn(uint32(m.st.intno), uint64(m.st.pc), &cur) {
		return 0, false, nil
	}
	frame := s.layout.ReturnFrame(cur.Regs[m.abi.SP()])
	if !inStack(frame, s.layout.Size) {
		return 0, false, fmt.Errorf("rt_sigreturn: the signal frame at %#x is outside the stack", frame)
	}
	next, err := s.layout.Return(m.stack[frame-StackBase:], &cur)
	if err != nil {
		return 0, false, err
	}
	if err := m.writeContext(&next); err != nil {
		return 0, false, fmt.Errorf("rt_sigreturn: loading the registers: %w", err)
	}
	return next.PC, true, nil
}

// Instructions that enter the kernel, by target.
var (
	x86Syscall = []byte{0x0f, 0x05}             // syscall
	a64Svc0    = []byte{0x01, 0x00, 0x00, 0xd4} // svc #0, little-endian in both modes
	s390Svc    = byte(0x0a)                     // svc I: the number is the second byte
)

// QEMU's exception numbers for a supervisor call: AArch64 EXCP_SWI, s390x
// EXCP_SVC.
const excpSupervisorCall = 2

// isSigreturn reports whether the system call instruction at pc, which
// raised interrupt intno with the registers cur, is rt_sigreturn.
func (m *Machine) isSigreturn(intno uint32, pc uint64, cur *sigframe.Context) bool {
	var insn [4]byte
	if m.u.MemReadInto(insn[:], pc) != nil {
		return false
	}
	switch m.abi {
	case target.X86_64:
		return intno == C.EMU_INTNO_SYSCALL && bytes.Equal(insn[:2], x86Syscall) && cur.Regs[0] == sigframe.RtSigreturnX86_64
	case target.AArch64, target.AArch64BE:
		return intno == excpSupervisorCall && bytes.Equal(insn[:], a64Svc0) && cur.Regs[8] == sigframe.RtSigreturnAArch64
	case target.S390X:
		return intno == excpSupervisorCall && insn[0] == s390Svc && insn[1] == sigframe.RtSigreturnS390X
	}
	return false
}
