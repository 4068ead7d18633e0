package emu

/*
#include "hook.h"
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/target"
)

// Sentinels a RunError's Cause wraps.
var (
	// ErrFault: an unmapped or protected access, an invalid instruction, an
	// interrupt or exception, or emulation stopping short of the exit.
	ErrFault = errors.New("fault")
	// ErrBudget: the run used its instruction budget without reaching
	// the exit.
	ErrBudget = errors.New("instruction budget exhausted")
	// ErrExit: a lenient run made the exit or exit_group system call,
	// which ends a process: nothing after it runs.
	ErrExit = errors.New("exit system call")
)

// RunError is how a run ends early. Cause is a fault or budget error
// (errors.Is ErrFault or ErrBudget), or the step callback's error as it
// returned it.
type RunError struct {
	Target target.Target
	PC     uint64 // the instruction that could not run
	Insn   []byte // its bytes, when readable
	Text   string // its disassembly
	Index  int    // instructions completed before it
	Cause  error
}

func (e *RunError) Error() string {
	what := "stopped"
	switch {
	case errors.Is(e.Cause, ErrBudget):
		what = "budget exhausted"
	case errors.Is(e.Cause, ErrFault):
		what = "fault"
	case errors.Is(e.Cause, ErrExit):
		what = "exited"
	}
	insn := "unreadable"
	if len(e.Insn) > 0 {
		insn = fmt.Sprintf("%s; bytes % x", e.Text, e.Insn)
	}
	return fmt.Sprintf("%s: %s at pc %#x (%s) after %d instructions: %v", e.Target.Name(), what, e.PC, insn, e.Index, e.Cause)
}

func (e *RunError) Unwrap() error { return e.Cause }

// cause is a fault or budget message that errors.Is its kind.
type cause struct {
	kind error
	text string
}

func (c *cause) Error() string { return c.text }
func (c *cause) Unwrap() error { return c.kind }

func (m *Machine) runError(pc uint64, index int, err error) *RunError {
	e := &RunError{Target: m.abi, PC: pc, Index: index, Cause: err}
	e.Insn, e.Text = m.instructionAt(pc)
	return e
}

// instructionAt reads and disassembles the instruction at pc.
func (m *Machine) instructionAt(pc uint64) ([]byte, string) {
	var buf []byte
	for n := m.t.maxInsn; n > 0; n-- {
		b := make([]byte, n)
		if m.u.MemReadInto(b, pc) == nil {
			buf = b
			break
		}
	}
	if buf == nil {
		return nil, ""
	}
	return Disassemble(m.abi, pc, buf)
}

// Disassemble decodes the instruction at the start of code (located at
// pc) in GNU syntax, and returns its bytes and text. Undecodable bytes
// give "(bad)" and the target's minimum instruction length.
func Disassemble(abi target.Target, pc uint64, code []byte) ([]byte, string) {
	text, n, err := disasm.Instruction(abi, code, pc)
	if err != nil {
		minLen := map[target.Target]int{target.X86_64: 1, target.AArch64: 4, target.AArch64BE: 4, target.S390X: 2}[abi]
		return code[:min(max(minLen, 1), len(code))], "(bad)"
	}
	return code[:n], text
}

// interruptText names an interrupt number as the target's Unicorn port
// reports it.
func (m *Machine) interruptText(n uint32) string {
	if n == C.EMU_INTNO_SYSCALL {
		return "system call instruction"
	}
	var name string
	switch m.abi {
	case target.X86_64:
		names := map[uint32]string{0: "divide error", 1: "debug", 3: "breakpoint", 4: "overflow", 5: "bound range", 6: "invalid opcode", 13: "general protection", 14: "page fault"}
		name = names[n]
	case target.AArch64, target.AArch64BE:
		// QEMU's EXCP_* numbers.
		names := map[uint32]string{1: "undefined instruction", 2: "supervisor call", 3: "prefetch abort", 4: "data abort", 7: "breakpoint", 11: "hypervisor call", 12: "hypervisor trap", 13: "secure monitor call"}
		name = names[n]
	case target.S390X:
		names := map[uint32]string{1: "external", 2: "supervisor call", 3: "program interruption", 4: "restart", 5: "stop", 7: "I/O", 8: "machine check"}
		name = names[n]
	}
	if name == "" {
		return fmt.Sprintf("interrupt %d", n)
	}
	return fmt.Sprintf("interrupt %d (%s)", n, name)
}
