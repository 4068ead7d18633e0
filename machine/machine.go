package machine

import (
	"encoding/binary"
	"fmt"
)

// MaxReg bounds the DWARF register numbers a register file holds: x86-64
// numbers 0-16, AArch64 0-31, s390x 0-31 (16-31 are FPRs).
const MaxReg = 48

// Registers is a register file indexed by DWARF number; Valid has bit n
// set when Regs[n] is known. PC is kept apart because no DWARF number of
// every target names it.
type Registers struct {
	PC    uint64         `json:"pc"`
	Regs  [MaxReg]uint64 `json:"regs"`
	Valid uint64         `json:"valid"`
}

// Set stores a register value and marks it valid.
func (r *Registers) Set(dwarf int, v uint64) {
	r.Regs[dwarf] = v
	r.Valid |= 1 << uint(dwarf)
}

// Get returns a register value and whether it is known.
func (r *Registers) Get(dwarf int) (uint64, bool) {
	if dwarf < 0 || dwarf >= MaxReg || r.Valid&(1<<uint(dwarf)) == 0 {
		return 0, false
	}
	return r.Regs[dwarf], true
}

// Memory reads the stopped machine's memory. ReadWord returns the 8-byte
// word at addr in the target's byte order, or false when unreadable.
type Memory interface {
	ReadWord(addr uint64) (uint64, bool)
}

// Snapshot is a copy of the registers and of a range of the stack, taken
// at one instruction: everything an unwinder may read, in a form that
// survives the instruction and can be serialised. Stack holds the bytes
// of [StackAddr, StackAddr+len(Stack)) as memory holds them, in the
// target's byte order (BigEndian says which).
type Snapshot struct {
	Regs      Registers `json:"registers"`
	StackAddr uint64    `json:"stack_addr"`
	Stack     []byte    `json:"stack"`
	BigEndian bool      `json:"big_endian"`
}

// ReadWord implements Memory over the copied range; any address whose 8
// bytes all lie inside it is readable.
func (s *Snapshot) ReadWord(addr uint64) (uint64, bool) {
	off := addr - s.StackAddr
	if addr < s.StackAddr || off > uint64(len(s.Stack)) || uint64(len(s.Stack))-off < 8 {
		return 0, false
	}
	b := s.Stack[off : off+8]
	if s.BigEndian {
		return binary.BigEndian.Uint64(b), true
	}
	return binary.LittleEndian.Uint64(b), true
}

// Validate checks what ReadWord relies on: the copied range does not wrap
// around the address space.
func (s *Snapshot) Validate() error {
	if end := s.StackAddr + uint64(len(s.Stack)); end < s.StackAddr {
		return fmt.Errorf("machine: snapshot stack [%#x, +%d) wraps around the address space", s.StackAddr, len(s.Stack))
	}
	return nil
}
