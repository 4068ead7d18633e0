package emu

/*
#cgo LDFLAGS: -lunicorn
#include <stdlib.h>
#include "hook.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// Machine is one Unicorn instance for one target, reused across runs. It is
// not safe for concurrent use; use one Machine per goroutine.
type Machine struct {
	abi target.Target
	t   *cpu
	u   uc.Unicorn
	h   *C.uc_engine
	st  *C.emu_state // C memory: the hooks write it while Go reads it
	// lastMap is the PC and address of the last page a lenient run mapped
	// (serve): the same fault right after it is not mapped again.
	lastMap [2]uint64
	// slot is the Machine's index in slotTable, which is how the C hook
	// finds it again (C may not hold Go pointers).
	slot int

	stack []byte   // host memory mapped at StackBase: ReadWord reads it directly
	vals  []uint64 // Go view of st.vals

	track     []int // extra DWARF registers asked for by Track
	dwarf     []int // DWARF number of st.ids[i]
	valid     uint64
	regsDirty bool
	trackErr  error

	// register reset: every register the target numbers in DWARF (index =
	// DWARF number), zeroed before each run, then the run's argument
	// registers and the SP; last, the flags register.
	resetIDs  []C.int
	resetVals []uint64

	sig signals // Run.Signal's delivery and rt_sigreturn

	served Served // what the last run's Lenient served

	step   Step
	onStep func(*Step) error
	cbErr  error

	scratch  []byte // the code region's old contents, compared with a new run's code
	lastExit uint64 // the Exit the cached translations were made for
	stackLow uint64 // lowest stack address the previous run may have written
	// noInvalidate skips the per-run cache invalidation: only benchmarks
	// comparing reuse strategies set it, and they write each run to fresh
	// addresses.
	noInvalidate bool
}

// Step is the machine state before one instruction executes. It is valid
// only during the callback that receives it.
type Step struct {
	// Index counts the instructions this run executed before this one.
	Index int
	// Regs holds the PC (the hook's address argument), the SP, the frame
	// pointer, the link register on AArch64 (x30) and s390x (r14), and any
	// register asked for by Track, all by DWARF number.
	Regs *machine.Registers
	m    *Machine
	regs machine.Registers
}

// ReadWord implements machine.Memory: the 8 bytes at addr in the target's
// byte order, as memory holds them before the current instruction runs.
// It fails outside mapped memory; the pages a lenient run mapped on demand
// are mapped memory until the run ends.
func (s *Step) ReadWord(addr uint64) (uint64, bool) {
	return s.m.readWord(addr)
}

// Stack returns the stack region's bytes from lo (clamped to StackBase) to
// StackTop, as memory holds them before the current instruction runs, and
// the address of the first byte. The slice aliases the live stack: it is
// valid only during the callback, and a caller that keeps it must copy.
func (s *Step) Stack(lo uint64) (addr uint64, b []byte) {
	lo = max(lo, StackBase)
	if lo >= StackTop {
		return StackTop, nil
	}
	return lo, s.m.stack[lo-StackBase:]
}

// BigEndian reports the target's data byte order.
func (s *Step) BigEndian() bool { return s.m.t.bigEndian }

func (m *Machine) readWord(addr uint64) (uint64, bool) {
	if off := addr - StackBase; off <= StackSize-8 {
		b := m.stack[off : off+8]
		if m.t.bigEndian {
			return binary.BigEndian.Uint64(b), true
		}
		return binary.LittleEndian.Uint64(b), true
	}
	if off, foff, loff := addr-CodeBase, addr-FarCodeBase, addr-LowCodeBase; off <= CodeSize-8 || foff <= FarCodeSize-8 || loff <= LowCodeSize-8 {
		var b [8]byte
		if m.u.MemReadInto(b[:], addr) != nil {
			return 0, false
		}
		if m.t.bigEndian {
			return binary.BigEndian.Uint64(b[:]), true
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	if m.st.npages > 0 {
		// A lenient run's pages mapped on demand (a stack an argument
		// moved the SP onto, pattern memory). Unicorn's x86-64 (2.1.4)
		// reports an access above 2^52 at its low 52 bits, and the page
		// was mapped there.
		if m.t.arch == uc.ARCH_X86 {
			addr &= 1<<52 - 1
		}
		var b [8]byte
		if m.u.MemReadInto(b[:], addr) != nil {
			return 0, false
		}
		if m.t.bigEndian {
			return binary.BigEndian.Uint64(b[:]), true
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	return 0, false
}

// Run is one execution of a program.
type Run struct {
	Code     []byte // machine code as it must be in memory (AArch64 instruction words little-endian in both modes)
	CodeAddr uint64 // where Code goes, inside the code region
	// Segments are further code (or data the code reads, such as a GOT),
	// each written at its own address inside the code region, the far
	// code region or the low code region.
	Segments []Segment
	Entry    uint64 // first instruction executed
	Exit     uint64 // the run ends cleanly when the PC reaches Exit, before executing it
	// Regs are initial register values by DWARF number (argument
	// registers). Every other register starts at zero, and the SP at
	// InitialSP.
	Regs   map[int]uint64
	Budget int // instructions allowed; running out is an error
	// Signal, when set, is a signal the run receives (see Signal); nil
	// costs nothing.
	Signal *Signal
	// Lenient, when set, runs code the caller did not build as if the
	// rest of a process were there (see Lenient); nil: every such event
	// is a fault.
	Lenient *Lenient
}

// Lenient is how a run treats what lies outside the code it was given:
//
//   - An instruction fetched outside Inside (unmapped, or mapped but not
//     the image's) is a call leaving the image: it returns at once to its
//     caller with 0 in the return register (x86-64: pops the return
//     address, %rax = 0; AArch64: to x30, x0 = 0; s390x: to %r14, %r2 =
//     0), neither counted nor reported as a step. A return address that
//     is itself outside Inside is a fault.
//   - A system call (x86-64 syscall and sysenter, AArch64 svc, s390x svc)
//     is skipped: the PC moves past it, the return register (%rax, x0,
//     %r2) is set to 0. rt_sigreturn of a run with a Signal is still
//     served as a signal return.
//   - An unmapped read or write maps the pages it touches, filled from
//     Fill, up to MaxPages pages a run; they are unmapped when the run
//     ends. s390x reports no address for an unmapped data access (see
//     Errors), so there the pages of [0, S390XWindow) are mapped and
//     filled when the run starts instead.
//
// Fill 0 makes zero pages; otherwise each 8-byte word holds its own
// address XOR Fill, in the target's byte order: with Fill below 4096 and
// a multiple of 8, a pointer into the same page, so a pointer chased
// through such memory stays in mapped memory.
type Lenient struct {
	Inside   []Range
	Fill     uint64
	MaxPages int // 0 means 256
}

// S390XWindow is the low memory a lenient s390x run maps at its start.
const S390XWindow = 64 << 10

// Range is the addresses [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// Served counts what the last run's Lenient served.
type Served struct {
	Externals int // calls that left the image and were returned from
	Syscalls  int // system calls skipped
	Pages     int // pages mapped on demand (s390x: the window's)
}

// Served is what Lenient served in the last run.
func (m *Machine) Served() Served { return m.served }

// Segment is code written at its own address.
type Segment struct {
	Addr uint64
	Code []byte
}

// slotTable maps a slot number to its Machine. The hook path reads it
// without locking; changes copy the slice under slotMu.
var (
	slotTable atomic.Pointer[[]*Machine]
	slotMu    sync.Mutex
)

func addSlot(m *Machine) int {
	slotMu.Lock()
	defer slotMu.Unlock()
	var old []*Machine
	if p := slotTable.Load(); p != nil {
		old = *p
	}
	tab := append([]*Machine(nil), old...)
	for i, x := range tab {
		if x == nil {
			tab[i] = m
			slotTable.Store(&tab)
			return i
		}
	}
	tab = append(tab, m)
	slotTable.Store(&tab)
	return len(tab) - 1
}

func dropSlot(i int) {
	slotMu.Lock()
	defer slotMu.Unlock()
	tab := append([]*Machine(nil), *slotTable.Load()...)
	tab[i] = nil
	slotTable.Store(&tab)
}

//export emuStep
func emuStep(slot C.int) C.int {
	m := (*slotTable.Load())[slot]
	return m.deliver()
}

// deliver runs the step callback for the instruction the C hook stopped
// at. A panic must not unwind through Unicorn's C frames, so it becomes the
// run's error.
func (m *Machine) deliver() (ret C.int) {
	defer func() {
		if p := recover(); p != nil {
			m.cbErr = fmt.Errorf("step callback panicked: %v\n%s", p, debug.Stack())
			ret = 1
		}
	}()
	st := m.st
	r := &m.step.regs
	r.PC = uint64(st.pc)
	for i, d := range m.dwarf {
		r.Regs[d] = m.vals[i]
	}
	r.Valid = m.valid
	m.step.Index = int(st.steps)
	m.step.Regs = r
	if err := m.onStep(&m.step); err != nil {
		m.cbErr = err
		return 1
	}
	return 0
}

// New makes a Machine for abi with the memory map of this package mapped,
// and the CPU features the patterns use enabled: pointer authentication on
// AArch64, floating point on s390x.
func New(abi target.Target) (*Machine, error) {
	t, err := cpuOf(abi)
	if err != nil {
		return nil, err
	}
	u, err := uc.NewUnicorn(t.arch, t.mode)
	if err != nil {
		major, minor := uc.Version()
		return nil, fmt.Errorf("emu: %s: opening Unicorn (core %d.%d, binding %d.%d): %w",
			abi.Name(), major, minor, uc.API_MAJOR, uc.API_MINOR, err)
	}
	m := &Machine{abi: abi, t: t, u: u, h: (*C.uc_engine)(unsafe.Pointer(u.Handle())), slot: -1}
	if err := m.setup(); err != nil {
		m.Close()
		return nil, fmt.Errorf("emu: %s: %w", abi.Name(), err)
	}
	return m, nil
}

// tcgBufferSize is the translated-code buffer of an instance. Unicorn's
// default (1 GiB of address space) makes every new translation land on
// fresh pages, and since each run retranslates at least its last block
// the kernel keeps zeroing new huge pages; a small buffer is reused
// instead, at the price of a full flush when it fills. See BenchmarkReuse.
var tcgBufferSize uint32 = 8 << 20

func (m *Machine) setup() error {
	if tcgBufferSize != 0 {
		if err := ucErr(C.emu_set_tcg_buffer(m.h, C.uint32_t(tcgBufferSize))); err != nil {
			return fmt.Errorf("setting the translation buffer size: %w", err)
		}
	}
	if m.t.arch == uc.ARCH_ARM64 {
		// Must precede the first emulation: the CPU is created lazily.
		if err := m.u.SetCPUModel(uc.CPU_ARM64_MAX); err != nil {
			return fmt.Errorf("selecting CPU model MAX: %w", err)
		}
	}
	// Writable: on s390x a read-only code region makes the CPU raise an
	// exception (measured with 2.1.4), and MemWrite into a read-only
	// region toggles its protection twice per run.
	if err := m.u.MemMap(CodeBase, CodeSize); err != nil {
		return fmt.Errorf("mapping code region: %w", err)
	}
	if err := m.u.MemMap(FarCodeBase, FarCodeSize); err != nil {
		return fmt.Errorf("mapping far code region: %w", err)
	}
	if err := m.u.MemMap(LowCodeBase, LowCodeSize); err != nil {
		return fmt.Errorf("mapping low code region: %w", err)
	}
	stack, err := syscall.Mmap(-1, 0, StackSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return fmt.Errorf("allocating stack: %w", err)
	}
	m.stack = stack
	if err := m.u.MemMapPtr(StackBase, StackSize, uc.PROT_READ|uc.PROT_WRITE, unsafe.Pointer(&stack[0])); err != nil {
		return fmt.Errorf("mapping stack region: %w", err)
	}
	m.st = (*C.emu_state)(C.calloc(1, C.sizeof_emu_state))
	if m.st == nil {
		return errors.New("allocating hook state")
	}
	C.emu_init(m.st, m.h)
	m.vals = unsafe.Slice((*uint64)(unsafe.Pointer(&m.st.vals[0])), C.EMU_MAXREGS)
	m.slot = addSlot(m)
	m.st.slot = C.int(m.slot)
	m.st.pc_reg = C.int(m.t.pc)
	if m.t.arch == uc.ARCH_X86 {
		m.st.x86 = 1
	}
	m.step.m = m

	for d := range m.t.regs {
		m.resetIDs = append(m.resetIDs, C.int(m.t.regs[d]))
	}
	m.resetIDs = append(m.resetIDs, C.int(m.t.flags))
	m.resetVals = make([]uint64, len(m.resetIDs))
	m.setupSignals()

	switch m.abi {
	case target.AArch64, target.AArch64BE:
		if err := m.enablePAuth(); err != nil {
			return err
		}
	case target.S390X:
		if err := m.enableAFP(); err != nil {
			return err
		}
	}
	// Hooks go in after the setup stubs, whose translations are dropped
	// below: a translation made without a hook would skip it forever.
	if err := ucErr(C.emu_add_hooks(m.st)); err != nil {
		return fmt.Errorf("adding hooks: %w", err)
	}
	m.regsDirty = true
	m.stackLow = StackBase
	return nil
}

// AArch64 system registers as (op0, op1, CRn, CRm, op2).
var (
	sysSCR_EL3   = [5]uint32{3, 6, 1, 1, 0}
	sysHCR_EL2   = [5]uint32{3, 4, 1, 1, 0}
	sysSCTLR_EL1 = [5]uint32{3, 0, 1, 0, 0}
	sysAPIBKeyLo = [5]uint32{3, 0, 2, 1, 2}
)

// apibKey is the low half of instruction key B. Both keys start at zero,
// which makes pacibsp sign exactly like paciasp; a key of its own makes a
// key mix-up (signed with B, authenticated with A) fail as on hardware.
const apibKey = 0x5346_4b65_7942_0001

const (
	scrNS, scrRW, scrAPK, scrAPI = 1 << 0, 1 << 10, 1 << 16, 1 << 17
	hcrRW, hcrAPK, hcrAPI        = 1 << 31, 1 << 40, 1 << 41
	sctlrEnIA, sctlrEnIB         = 1 << 31, 1 << 30
)

// pauthStub sets SCTLR_EL1.EnIA and EnIB (instruction keys A and B: the
// paciasp and pacibsp families) from inside the CPU; writing SCTLR_EL1
// through the register API does not take effect. Little-endian words, as
// AArch64 fetches them in both data byte orders.
var pauthStub = []byte{
	0x00, 0x10, 0x38, 0xd5, // mrs x0, sctlr_el1
	0x00, 0x04, 0x62, 0xb2, // orr x0, x0, #0xc0000000
	0x00, 0x10, 0x18, 0xd5, // msr sctlr_el1, x0
	0xdf, 0x3f, 0x03, 0xd5, // isb
}

// afpStub sets CR0's AFP-register control bit (bit 45, byte 5 bit 0x04),
// without which floating-point instructions raise a data exception.
var afpStub = []byte{
	0xeb, 0x00, 0xf0, 0x00, 0x00, 0x25, // stctg %c0,%c0,0(%r15)
	0x96, 0x04, 0xf0, 0x05, // oi 5(%r15),4
	0xeb, 0x00, 0xf0, 0x00, 0x00, 0x2f, // lctlg %c0,%c0,0(%r15)
}

func (m *Machine) sysReg(r [5]uint32, set uint64) (uint64, error) {
	var v C.uint64_t
	err := ucErr(C.emu_cp_or(m.h, C.uint32_t(r[0]), C.uint32_t(r[1]), C.uint32_t(r[2]), C.uint32_t(r[3]), C.uint32_t(r[4]), C.uint64_t(set), &v))
	return uint64(v), err
}

func (m *Machine) enablePAuth() error {
	if _, err := m.sysReg(sysSCR_EL3, scrNS|scrRW|scrAPK|scrAPI); err != nil {
		return fmt.Errorf("setting SCR_EL3: %w", err)
	}
	if _, err := m.sysReg(sysHCR_EL2, hcrRW|hcrAPK|hcrAPI); err != nil {
		return fmt.Errorf("setting HCR_EL2: %w", err)
	}
	if _, err := m.sysReg(sysAPIBKeyLo, apibKey); err != nil {
		return fmt.Errorf("setting APIBKeyLo_EL1: %w", err)
	}
	if err := m.runStub(pauthStub); err != nil {
		return fmt.Errorf("enabling pointer authentication: %w", err)
	}
	sctlr, err := m.sysReg(sysSCTLR_EL1, 0)
	if err != nil {
		return fmt.Errorf("reading SCTLR_EL1: %w", err)
	}
	if sctlr&(sctlrEnIA|sctlrEnIB) != sctlrEnIA|sctlrEnIB {
		return fmt.Errorf("pointer authentication stayed off for key A or B (SCTLR_EL1 %#x)", sctlr)
	}
	return nil
}

// pswAMode64 is the PSW's extended and basic addressing-mode bits (31 and
// 32): Unicorn's s390x CPU starts with a zero PSW mask, in 24-bit mode,
// where a data access above 16 MiB (the stack) raises a program
// interruption.
const pswAMode64 = 1<<(63-31) | 1<<(63-32)

func (m *Machine) enableAFP() error {
	if err := m.u.RegWrite(uc.S390X_REG_PSWM, pswAMode64); err != nil {
		return fmt.Errorf("setting 64-bit addressing: %w", err)
	}
	if err := m.u.RegWrite(uc.S390X_REG_R15, InitialSP); err != nil {
		return err
	}
	if err := m.runStub(afpStub); err != nil {
		return fmt.Errorf("enabling floating point: %w", err)
	}
	clear(m.stack[InitialSP-StackBase:][:8])
	return nil
}

// runStub runs code at CodeBase once, then removes it and its translation.
func (m *Machine) runStub(code []byte) error {
	if err := m.u.MemWrite(CodeBase, code); err != nil {
		return err
	}
	end := uint64(CodeBase + len(code))
	runErr := ucErr(C.emu_run(m.st, CodeBase, C.uint64_t(end)))
	if pc, err := m.u.RegRead(m.t.pc); runErr == nil && (err != nil || pc != end) {
		runErr = fmt.Errorf("setup code stopped at pc %#x, not %#x", pc, end)
	}
	if err := m.u.MemWrite(CodeBase, make([]byte, len(code))); err != nil {
		return err
	}
	if err := ucErr(C.emu_invalidate(m.h, CodeBase, C.uint64_t(end+1))); err != nil {
		return err
	}
	return runErr
}

func ucErr(e C.uc_err) error {
	if e != C.UC_ERR_OK {
		return uc.UcError(e)
	}
	return nil
}

// Close releases the Unicorn instance and the stack memory.
func (m *Machine) Close() error {
	if m.u == nil {
		return nil
	}
	err := m.u.Close()
	m.u, m.h = nil, nil
	if m.slot >= 0 {
		dropSlot(m.slot)
		m.slot = -1
	}
	if m.st != nil {
		C.free(unsafe.Pointer(m.st))
		m.st = nil
		m.vals = nil
	}
	if m.stack != nil {
		if e := syscall.Munmap(m.stack); err == nil {
			err = e
		}
		m.stack = nil
	}
	return err
}

// ABI is the target the Machine emulates.
func (m *Machine) ABI() target.Target { return m.abi }

// Track asks for more registers, by DWARF number, at every step from the
// next run on: e.g. the s390x FPRs 16-31 that may hold a saved FP or RA,
// or x86-64 r10 when a function realigns its stack through a DRAP
// register. An unknown number makes Execute fail from then on.
func (m *Machine) Track(dwarf ...int) {
	m.track = append(m.track, dwarf...)
	m.regsDirty = true
}

// SetTrack replaces the registers Track asked for. It costs nothing when
// the set is the same as before.
func (m *Machine) SetTrack(dwarf ...int) {
	if slices.Equal(m.track, dwarf) {
		return
	}
	m.track = append(m.track[:0], dwarf...)
	m.regsDirty = true
}

// setupRegs recomputes the registers read at every step.
func (m *Machine) setupRegs() error {
	m.dwarf = m.dwarf[:0]
	m.valid = 0
	var ids []C.int
	for _, d := range append(append([]int(nil), m.t.base...), m.track...) {
		id, err := m.t.ucReg(m.abi, d)
		if err != nil {
			return err
		}
		if m.valid&(1<<uint(d)) != 0 {
			continue
		}
		m.valid |= 1 << uint(d)
		m.dwarf = append(m.dwarf, d)
		ids = append(ids, C.int(id))
	}
	C.emu_set_regs(m.st, &ids[0], C.int(len(ids)))
	m.regsDirty = false
	return nil
}

// Reg reads a register by DWARF number from the machine as it is now:
// after a run, the state at its end.
func (m *Machine) Reg(dwarf int) (uint64, error) {
	if m.u == nil {
		return 0, fmt.Errorf("emu: %s: machine is closed", m.abi.Name())
	}
	id, err := m.t.ucReg(m.abi, dwarf)
	if err != nil {
		return 0, err
	}
	return m.u.RegRead(id)
}

// CoreVersion is the installed Unicorn library's version, e.g. "2.1.4".
func CoreVersion() string {
	v := uint32(C.emu_version())
	return fmt.Sprintf("%d.%d.%d", v>>24, v>>16&0xff, v>>8&0xff)
}
