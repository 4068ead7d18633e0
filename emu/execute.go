package emu

/*
#include "hook.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"syscall"

	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// redZone is how far below the lowest SP seen a run is assumed to have
// written (the x86-64 red zone is 128 bytes; leave room for more).
const redZone = 4096

// Execute writes r.Code, resets the registers and the stack, and runs from
// r.Entry until the PC reaches r.Exit. Before every instruction it calls
// onStep (nil: just run); an error from onStep ends the run. It returns
// how many instructions completed. A fault, a callback error or running
// out of budget ends the run with a *RunError; the Machine stays usable.
// onStep may read the Step and call Track, but not Execute or Close.
func (m *Machine) Execute(r *Run, onStep func(*Step) error) (steps int, err error) {
	if m.u == nil {
		return 0, fmt.Errorf("emu: %s: machine is closed", m.abi.Name())
	}
	if m.onStep != nil {
		return 0, fmt.Errorf("emu: %s: Execute called from a step callback", m.abi.Name())
	}
	if err := m.checkRun(r); err != nil {
		return 0, fmt.Errorf("emu: %s: %w", m.abi.Name(), err)
	}
	if m.regsDirty {
		if err := m.setupRegs(); err != nil {
			return 0, err
		}
	}
	if err := m.load(r); err != nil {
		return 0, fmt.Errorf("emu: %s: loading code at %#x: %w", m.abi.Name(), r.CodeAddr, err)
	}
	if err := m.resetState(r); err != nil {
		return 0, fmt.Errorf("emu: %s: %w", m.abi.Name(), err)
	}

	st := m.st
	st.steps = 0
	st.budget = C.uint64_t(r.Budget)
	st.min_sp = InitialSP
	st.stop = C.EMU_STOP_NONE
	st.mem_type = 0
	st.fault_addr = 0
	st.intno = 0
	st.skip = 0
	m.lastMap = [2]uint64{}
	st.deliver = 0
	if onStep != nil {
		st.deliver = 1
	}
	m.onStep, m.cbErr = onStep, nil
	m.armSignal(r)
	if err := m.armLenient(r); err != nil {
		m.onStep = nil
		m.dropPages()
		return 0, fmt.Errorf("emu: %s: %w", m.abi.Name(), err)
	}
	runErr := ucErr(C.emu_run(st, C.uint64_t(r.Entry), C.uint64_t(r.Exit)))
	for {
		// A signal's delivery and rt_sigreturn, and what Lenient serves
		// (a call leaving the image, a system call), stop the emulation;
		// it resumes where they leave the PC.
		pc, ok, err := m.resume(r, runErr)
		if err != nil {
			c, ok := err.(*cause)
			if !ok {
				c = &cause{ErrFault, err.Error()}
			}
			m.cbErr = c
			st.stop = C.EMU_STOP_CALLBACK
			break
		}
		if !ok {
			break // the run ended some other way
		}
		st.stop, st.intno, st.fault_addr, st.mem_type = C.EMU_STOP_NONE, 0, 0, 0
		runErr = ucErr(C.emu_run(st, C.uint64_t(pc), C.uint64_t(r.Exit)))
	}
	m.dropPages()
	m.onStep = nil

	rerr := m.outcome(r, runErr)
	m.stackLow = StackBase
	if rerr == nil {
		// Only a run that ended cleanly has every SP change observed.
		m.stackLow = max(uint64(st.min_sp), StackBase+redZone) - redZone
		return int(st.steps), nil
	}
	return rerr.Index, rerr
}

// resume serves the event that stopped the emulation, if it is one to
// serve, and returns the PC to go on from.
func (m *Machine) resume(r *Run, runErr error) (uint64, bool, error) {
	st := m.st
	if r.Signal != nil && runErr == nil {
		if st.stop == C.EMU_STOP_SIGNAL {
			pc, err := m.deliverSignal()
			return pc, err == nil, err
		}
		if pc, ok, err := m.sigreturn(); ok || err != nil {
			return pc, ok, err
		}
	}
	return m.serve(r)
}

func (m *Machine) checkRun(r *Run) error {
	end := r.CodeAddr + uint64(len(r.Code))
	switch {
	case r.CodeAddr < CodeBase || end > CodeBase+CodeSize || end < r.CodeAddr:
		return fmt.Errorf("code [%#x, %#x) is outside the code region [%#x, %#x)", r.CodeAddr, end, CodeBase, CodeBase+CodeSize)
	case r.Entry < CodeBase || r.Entry >= CodeBase+CodeSize:
		return fmt.Errorf("entry %#x is outside the code region [%#x, %#x)", r.Entry, CodeBase, CodeBase+CodeSize)
	case r.Exit < CodeBase || r.Exit >= CodeBase+CodeSize:
		return fmt.Errorf("exit %#x is outside the code region [%#x, %#x)", r.Exit, CodeBase, CodeBase+CodeSize)
	case r.Budget <= 0:
		return fmt.Errorf("instruction budget %d is not positive", r.Budget)
	case r.Lenient != nil && len(r.Lenient.Inside) > C.EMU_MAXINSIDE:
		return fmt.Errorf("%d inside ranges, at most %d", len(r.Lenient.Inside), C.EMU_MAXINSIDE)
	}
	for _, s := range r.Segments {
		end := s.Addr + uint64(len(s.Code))
		inNear := s.Addr >= CodeBase && end <= CodeBase+CodeSize
		inFar := s.Addr >= FarCodeBase && end <= FarCodeBase+FarCodeSize
		inLow := s.Addr >= LowCodeBase && end <= LowCodeBase+LowCodeSize
		if end < s.Addr || !(inNear || inFar || inLow) {
			return fmt.Errorf("segment [%#x, %#x) is outside the code regions [%#x, %#x), [%#x, %#x) and [%#x, %#x)",
				s.Addr, end, CodeBase, CodeBase+CodeSize, FarCodeBase, FarCodeBase+FarCodeSize, LowCodeBase, LowCodeBase+LowCodeSize)
		}
	}
	return nil
}

// load writes the code and drops every translation it could make stale:
// the written range, and the instructions at the old and new exits, since
// Unicorn compiles the stop at the exit into the translated block.
//
// Code already in memory byte for byte (the same image run again) is left
// alone, and so are its translations: every write to the code region is
// either ours, followed by an invalidation, or the guest's, which Unicorn
// catches itself.
func (m *Machine) load(r *Run) error {
	if err := m.write(r.CodeAddr, r.Code); err != nil {
		return err
	}
	for _, s := range r.Segments {
		if err := m.write(s.Addr, s.Code); err != nil {
			return err
		}
	}
	if r.Exit != m.lastExit {
		for _, x := range [2]uint64{m.lastExit, r.Exit} {
			if x != 0 {
				if err := m.invalidate(x, x+1); err != nil {
					return err
				}
			}
		}
		m.lastExit = r.Exit
	}
	return nil
}

// write puts code at addr and invalidates the range, unless memory holds
// those bytes already.
func (m *Machine) write(addr uint64, code []byte) error {
	if cap(m.scratch) < len(code) {
		m.scratch = make([]byte, len(code))
	}
	old := m.scratch[:len(code)]
	if len(code) > 0 && (m.u.MemReadInto(old, addr) != nil || !bytes.Equal(old, code)) {
		if err := m.u.MemWrite(addr, code); err != nil {
			return err
		}
		if err := m.invalidate(addr, addr+uint64(len(code))); err != nil {
			return err
		}
	}
	return nil
}

func (m *Machine) invalidate(begin, end uint64) error {
	if m.noInvalidate {
		return nil
	}
	return ucErr(C.emu_invalidate(m.h, C.uint64_t(begin), C.uint64_t(end)))
}

// flushAll drops every translation; the fresh-address strategy needs it
// when it wraps around the code region.
func (m *Machine) flushAll() error { return ucErr(C.emu_flush(m.h)) }

// resetState zeroes the part of the stack the previous run used and sets
// every register: zero, the run's arguments, and the SP.
func (m *Machine) resetState(r *Run) error {
	m.clearStack(m.stackLow)
	vals := m.resetVals[:len(m.resetIDs)]
	clear(vals)
	for d, v := range r.Regs {
		if _, err := m.t.ucReg(m.abi, d); err != nil {
			return fmt.Errorf("initial registers: %w", err)
		}
		if d == m.t.base[0] {
			return fmt.Errorf("initial registers: the SP (DWARF %d) is set by emu", d)
		}
		vals[d] = v
	}
	vals[m.t.base[0]] = InitialSP
	vals[len(vals)-1] = uint64(m.t.flagsInit)
	return ucErr(C.emu_write_regs(m.h, &m.resetIDs[0], (*C.uint64_t)(&vals[0]), C.int(len(vals))))
}

// clearDirect is how much of the top of the stack clearStack zeroes
// itself; below, it returns whole pages to the kernel.
const clearDirect = 64 << 10

// clearStack zeroes the stack from low to the top. The top clearDirect
// bytes, where every run writes, are cleared in place; the pages below
// them are handed back to the kernel (MADV_DONTNEED on the private
// anonymous mapping: the next access maps a zero page), which costs what
// the run touched there rather than the size of the range. A program with
// a frame of megabytes writes a few words of it and used to pay for
// zeroing all of it after every run (5% of BenchmarkPipeline's CPU time).
func (m *Machine) clearStack(low uint64) {
	off := low - StackBase
	if top := uint64(StackSize - clearDirect); off < top {
		lo := off &^ (C.EMU_PAGE - 1)
		if syscall.Madvise(m.stack[lo:top], syscall.MADV_DONTNEED) == nil {
			off = top
		}
	}
	clear(m.stack[off:])
}

// outcome turns how the emulation ended into the run's error.
func (m *Machine) outcome(r *Run, runErr error) *RunError {
	st := m.st
	steps := int(st.steps)
	pc := uint64(st.pc)
	// started: the faulting instruction went through the code hook, so it
	// is counted in steps but did not complete.
	started := func() int { return max(steps-1, 0) }
	switch st.stop {
	case C.EMU_STOP_CALLBACK:
		return m.runError(pc, steps, m.cbErr)
	case C.EMU_STOP_BUDGET:
		return m.runError(pc, steps, &cause{ErrBudget, fmt.Sprintf("%d instructions without reaching exit %#x", r.Budget, r.Exit)})
	case C.EMU_STOP_INTR:
		text := m.interruptText(uint32(st.intno))
		// On s390x a jump to unmapped memory is a program interruption with
		// the PSW at the target, not an unmapped-fetch event.
		if at := uint64(st.fault_addr); at != pc && !m.mapped(at) {
			return m.runError(at, steps, &cause{ErrFault, fmt.Sprintf("%s fetching from unmapped %#x after pc %#x", text, at, pc)})
		}
		return m.runError(pc, started(), &cause{ErrFault, text})
	case C.EMU_STOP_MEM:
		typ := int(st.mem_type)
		text := fmt.Sprintf("%s at %#x", memTypeText(typ), uint64(st.fault_addr))
		if typ == uc.MEM_FETCH_UNMAPPED || typ == uc.MEM_FETCH_PROT {
			if pc != uint64(st.fault_addr) {
				text += fmt.Sprintf(" after pc %#x", pc)
			}
			return m.runError(uint64(st.fault_addr), steps, &cause{ErrFault, text})
		}
		text += fmt.Sprintf(" (%d bytes)", int(st.fault_size))
		return m.runError(pc, started(), &cause{ErrFault, text})
	case C.EMU_STOP_INVALID:
		at := uint64(st.fault_addr)
		if steps > 0 && at == pc {
			return m.runError(at, started(), &cause{ErrFault, "invalid instruction"})
		}
		return m.runError(at, steps, &cause{ErrFault, "invalid instruction"})
	}
	if runErr != nil {
		return m.runError(pc, started(), &cause{ErrFault, runErr.Error()})
	}
	end, err := m.u.RegRead(m.t.pc)
	if err != nil {
		return m.runError(pc, steps, &cause{ErrFault, "reading the final pc: " + err.Error()})
	}
	if end != r.Exit {
		// Stopped by the last instruction hooked (x86 hlt, for one).
		return m.runError(pc, started(), &cause{ErrFault, fmt.Sprintf("emulation stopped at pc %#x before reaching exit %#x", end, r.Exit)})
	}
	return nil
}

func memTypeText(t int) string {
	switch t {
	case uc.MEM_READ_UNMAPPED:
		return "unmapped read"
	case uc.MEM_WRITE_UNMAPPED:
		return "unmapped write"
	case uc.MEM_FETCH_UNMAPPED:
		return "unmapped fetch"
	case uc.MEM_READ_PROT:
		return "read of protected memory"
	case uc.MEM_WRITE_PROT:
		return "write to protected memory"
	case uc.MEM_FETCH_PROT:
		return "fetch from non-executable memory"
	}
	return fmt.Sprintf("invalid access (type %d)", t)
}

// mapped reports whether addr is inside a mapped region.
func (m *Machine) mapped(addr uint64) bool {
	return addr-CodeBase < CodeSize || addr-FarCodeBase < FarCodeSize || addr-LowCodeBase < LowCodeSize || addr-StackBase < StackSize
}
