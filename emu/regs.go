package emu

import (
	"fmt"

	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// x86-64 DWARF numbers 0-15 (System V psABI, figure 3.36). 16 is the
// return-address column, which is the PC, not a register Unicorn holds
// apart from it.
var amd64Regs = []int{
	uc.X86_REG_RAX, uc.X86_REG_RDX, uc.X86_REG_RCX, uc.X86_REG_RBX,
	uc.X86_REG_RSI, uc.X86_REG_RDI, uc.X86_REG_RBP, uc.X86_REG_RSP,
	uc.X86_REG_R8, uc.X86_REG_R9, uc.X86_REG_R10, uc.X86_REG_R11,
	uc.X86_REG_R12, uc.X86_REG_R13, uc.X86_REG_R14, uc.X86_REG_R15,
}

// AArch64 DWARF 0-30 are x0-x30 and 31 is sp (AADWARF64). Unicorn numbers
// x29, x30 and sp apart from x0-x28.
var arm64Regs = func() []int {
	r := make([]int, 32)
	for i := 0; i <= 28; i++ {
		r[i] = uc.ARM64_REG_X0 + i
	}
	r[29], r[30], r[31] = uc.ARM64_REG_X29, uc.ARM64_REG_X30, uc.ARM64_REG_SP
	return r
}()

// s390x DWARF 0-15 are r0-r15; 16-31 are the FPRs in the ELF ABI's odd
// order f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,f14,f9,f11,f13,f15.
var s390xRegs = func() []int {
	r := make([]int, 32)
	for i := 0; i < 16; i++ {
		r[i] = uc.S390X_REG_R0 + i
	}
	fpr := []int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}
	for i, f := range fpr {
		r[16+i] = uc.S390X_REG_F0 + f
	}
	return r
}()

// cpu is what differs between the four ABIs.
type cpu struct {
	arch, mode int
	regs       []int // Unicorn register id by DWARF number
	base       []int // DWARF registers read at every step; base[0] is the SP
	pc         int   // Unicorn id of the PC
	bigEndian  bool  // data byte order
	maxInsn    int   // longest instruction in bytes
	// flags is the condition-code register and the value each run starts
	// with, so no run sees another's flags.
	flags, flagsInit int
}

func cpuOf(abi target.Target) (*cpu, error) {
	switch abi {
	case target.X86_64:
		return &cpu{arch: uc.ARCH_X86, mode: uc.MODE_64, regs: amd64Regs,
			base: []int{target.RegX86SP, target.RegX86FP}, pc: uc.X86_REG_RIP, maxInsn: 15,
			flags: uc.X86_REG_RFLAGS, flagsInit: 0x2}, nil // bit 1 always reads as one
	case target.AArch64, target.AArch64BE:
		t := &cpu{arch: uc.ARCH_ARM64, mode: uc.MODE_ARM, regs: arm64Regs,
			base: []int{target.RegAArch64SP, target.RegAArch64FP, target.RegAArch64LR}, pc: uc.ARM64_REG_PC, maxInsn: 4,
			flags: uc.ARM64_REG_NZCV}
		if abi == target.AArch64BE {
			t.mode |= uc.MODE_BIG_ENDIAN
			t.bigEndian = true
		}
		return t, nil
	case target.S390X:
		return &cpu{arch: uc.ARCH_S390X, mode: uc.MODE_BIG_ENDIAN, regs: s390xRegs,
			base: []int{target.RegS390XSP, target.RegS390XFP, target.RegS390XRA}, pc: uc.S390X_REG_PC,
			bigEndian: true, maxInsn: 6, flags: uc.S390X_REG_PSWM, flagsInit: pswAMode64}, nil
	}
	return nil, fmt.Errorf("emu: no emulator for ABI %d (%s)", uint8(abi), abi)
}

// ucReg maps a DWARF register number to Unicorn's id.
func (t *cpu) ucReg(abi target.Target, dwarf int) (int, error) {
	if dwarf < 0 || dwarf >= len(t.regs) || dwarf >= machine.MaxReg {
		return 0, fmt.Errorf("emu: %s has no DWARF register %d", abi.Name(), dwarf)
	}
	return t.regs[dwarf], nil
}
