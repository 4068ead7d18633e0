package sframe

// MaxReg bounds the DWARF register numbers a RegisterFile holds: x86-64
// uses 0-16, AArch64 0-31, s390x 0-31 (16-31 are FPRs).
const MaxReg = 48

// RegisterFile is the machine state an unwind starts from. Registers are
// indexed by DWARF number; Valid has bit n set when Regs[n] is known.
type RegisterFile struct {
	PC    uint64
	Regs  [MaxReg]uint64
	Valid uint64
}

// Set stores a register value and marks it valid.
func (r *RegisterFile) Set(dwarf int, v uint64) {
	r.Regs[dwarf] = v
	r.Valid |= 1 << uint(dwarf)
}

// Get returns a register value and whether it is known.
func (r *RegisterFile) Get(dwarf int) (uint64, bool) {
	if dwarf < 0 || dwarf >= MaxReg || r.Valid&(1<<uint(dwarf)) == 0 {
		return 0, false
	}
	return r.Regs[dwarf], true
}

// Memory reads the unwound process's memory. ReadWord returns the 8-byte
// word at addr in the target's byte order, or false when unreadable.
type Memory interface {
	ReadWord(addr uint64) (uint64, bool)
}
