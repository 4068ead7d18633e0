package emu

/*
#include "hook.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/target"
)

// defaultMaxPages bounds the pages a lenient run maps on demand.
const defaultMaxPages = 256

// armLenient sets up the C hooks' lenient state for r (none when r has
// no Lenient), and on s390x maps the low window.
func (m *Machine) armLenient(r *Run) error {
	st := m.st
	m.served = Served{}
	st.lenient, st.ninside, st.npages = 0, 0, 0
	l := r.Lenient
	if l == nil {
		return nil
	}
	st.lenient = 1
	for i, rg := range l.Inside {
		st.inside_lo[i], st.inside_hi[i] = C.uint64_t(rg.Lo), C.uint64_t(rg.Hi)
	}
	st.ninside = C.int(len(l.Inside))
	st.fill = C.uint64_t(l.Fill)
	st.big_endian = 0
	if m.t.bigEndian {
		st.big_endian = 1
	}
	pages := l.MaxPages
	if pages <= 0 {
		pages = defaultMaxPages
	}
	if m.abi == target.S390X {
		pages += S390XWindow / C.EMU_PAGE
	}
	st.max_pages = C.int(min(pages, C.EMU_MAXPAGES))
	if m.abi == target.S390X {
		if !bool(C.emu_map_pages(st, 0, S390XWindow)) {
			return fmt.Errorf("mapping the low window [0, %#x)", S390XWindow)
		}
	}
	return nil
}

// dropPages unmaps the pages the run mapped on demand.
func (m *Machine) dropPages() {
	st := m.st
	for i := 0; i < int(st.npages); i++ {
		m.u.MemUnmap(uint64(st.pages[i]), C.EMU_PAGE)
	}
	m.served.Pages = int(st.npages)
	st.npages, st.lenient = 0, 0
}

// serve does what Lenient asks for the event that stopped the emulation:
// it returns the PC to resume at, or false when the event is not one it
// serves (the run then ends as without Lenient).
func (m *Machine) serve(r *Run) (uint64, bool, error) {
	st := m.st
	if r.Lenient == nil {
		return 0, false, nil
	}
	switch {
	case st.stop == C.EMU_STOP_MAP:
		// The page the instruction at pc reads or writes, mapped here
		// and not in the hook; the instruction runs again, not
		// counted again. The same fault again at the same place
		// (s390x names no data address) is the fault it is.
		at := [2]uint64{uint64(st.pc), uint64(st.fault_addr)}
		if at == m.lastMap || !bool(C.emu_map_pages(st, st.fault_addr, st.fault_size)) {
			st.stop = C.EMU_STOP_MEM
			return 0, false, nil
		}
		m.lastMap = at
		st.skip, st.skip_pc = 1, st.pc
		return uint64(st.pc), true, nil
	case st.stop == C.EMU_STOP_EXTERN:
		return m.returnFromExternal(r, uint64(st.fault_addr))
	case st.stop == C.EMU_STOP_INTR && uint64(st.fault_addr) != uint64(st.pc) && !m.mapped(uint64(st.fault_addr)):
		// AArch64 and s390x: a jump to unmapped memory is an interrupt
		// (prefetch abort, program interruption) with the PC at the
		// target.
		return m.returnFromExternal(r, uint64(st.fault_addr))
	case st.stop == C.EMU_STOP_INTR:
		if n := m.syscallLen(uint32(st.intno), uint64(st.pc)); n > 0 {
			if nr, ok := m.exitCall(uint64(st.pc)); ok {
				return 0, false, &cause{ErrExit, fmt.Sprintf("system call %d (exit) at %#x", nr, uint64(st.pc))}
			}
			if err := m.setReturnValue(); err != nil {
				return 0, false, err
			}
			m.served.Syscalls++
			return uint64(st.pc) + n, true, nil
		}
	}
	return 0, false, nil
}

// syscallLen is the length of the system call instruction at pc that
// raised intno, 0 if it is none.
func (m *Machine) syscallLen(intno uint32, pc uint64) uint64 {
	var insn [4]byte
	if m.u.MemReadInto(insn[:], pc) != nil {
		return 0
	}
	switch m.abi {
	case target.X86_64:
		if intno == C.EMU_INTNO_SYSCALL && insn[0] == 0x0f && (insn[1] == 0x05 || insn[1] == 0x34) {
			return 2 // syscall, sysenter
		}
	case target.AArch64, target.AArch64BE:
		if intno == excpSupervisorCall && binary.LittleEndian.Uint32(insn[:])&0xffe0001f == 0xd4000001 {
			return 4 // svc #imm16
		}
	case target.S390X:
		if intno == excpSupervisorCall && insn[0] == s390Svc {
			return 2 // svc I
		}
	}
	return 0
}

// exitCall reports whether the system call instruction at pc is exit or
// exit_group, by the number the kernel reads: x86-64 %rax (60, 231),
// AArch64 x8 (93, 94), s390x the svc's immediate, or %r1 for svc 0 (1,
// 248).
func (m *Machine) exitCall(pc uint64) (uint64, bool) {
	var nr uint64
	var err error
	switch m.abi {
	case target.X86_64:
		nr, err = m.Reg(0)
	case target.AArch64, target.AArch64BE:
		nr, err = m.Reg(8)
	case target.S390X:
		var insn [2]byte
		if m.u.MemReadInto(insn[:], pc) != nil {
			return 0, false
		}
		if nr = uint64(insn[1]); nr == 0 {
			nr, err = m.Reg(1)
		}
		return nr, err == nil && (nr == 1 || nr == 248)
	}
	return nr, err == nil && (nr == 60 || nr == 231 || nr == 93 || nr == 94) && (m.abi == target.X86_64) == (nr == 60 || nr == 231)
}

// Return registers, link registers (DWARF numbers).
func (m *Machine) setReturnValue() error {
	return m.setReg(m.abi.RetReg(), 0)
}

func (m *Machine) setReg(dwarf int, v uint64) error {
	id, err := m.t.ucReg(m.abi, dwarf)
	if err != nil {
		return err
	}
	return m.u.RegWrite(id, v)
}

// returnFromExternal returns from a call that went to at, outside the
// image, as if the callee had returned 0 at once.
func (m *Machine) returnFromExternal(r *Run, at uint64) (uint64, bool, error) {
	var ret uint64
	switch m.abi {
	case target.X86_64:
		sp, err := m.Reg(m.abi.SP())
		if err != nil {
			return 0, false, err
		}
		w, ok := m.readWord(sp)
		if !ok {
			return 0, false, fmt.Errorf("fetch at %#x outside the image: no return address at SP %#x", at, sp)
		}
		if err := m.setReg(m.abi.SP(), sp+8); err != nil {
			return 0, false, err
		}
		ret = w
	default:
		w, err := m.Reg(m.abi.RA()) // the link register: x30, r14
		if err != nil {
			return 0, false, err
		}
		ret = w
	}
	if !inside(r.Lenient.Inside, ret) {
		return 0, false, fmt.Errorf("fetch at %#x outside the image, and its return address %#x is outside it too", at, ret)
	}
	if m.served.Externals++; m.served.Externals > r.Budget {
		return 0, false, fmt.Errorf("%d calls left the image", m.served.Externals)
	}
	if err := m.setReturnValue(); err != nil {
		return 0, false, err
	}
	return ret, true, nil
}

func inside(rs []Range, pc uint64) bool {
	for _, r := range rs {
		if pc >= r.Lo && pc < r.Hi {
			return true
		}
	}
	return false
}
