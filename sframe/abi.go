package sframe

import (
	"debug/elf"
	"fmt"
	"strings"
)

// Targets lists the four ABIs in the order reports print them.
var Targets = []ABI{ABIAMD64LE, ABIAArch64LE, ABIAArch64BE, ABIS390XBE}

// Name is the target's short name as used on the command line, in labels
// and in file names.
func (a ABI) Name() string {
	switch a {
	case ABIAMD64LE:
		return "x86-64"
	case ABIAArch64LE:
		return "aarch64"
	case ABIAArch64BE:
		return "aarch64_be"
	case ABIS390XBE:
		return "s390x"
	}
	return fmt.Sprintf("abi%d", uint8(a))
}

// ParseTarget maps a target name (as printed by Name) to its ABI.
func ParseTarget(name string) (ABI, error) {
	for _, a := range Targets {
		if strings.EqualFold(name, a.Name()) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("unknown target %q (want one of x86-64, aarch64, aarch64_be, s390x)", name)
}

// WordSize is the size of a stack slot and of a return address: every
// SFrame ABI is 64-bit.
const WordSize = 8

// The facts below are sframe's own copy of what package target knows
// about each machine (sframe imports nothing of the project, so that a
// third party can use it alone); TestSFrameCopyAgrees checks the two
// agree.

// IsAArch64 reports whether a is AArch64 in either byte order.
func (a ABI) IsAArch64() bool { return a == ABIAArch64LE || a == ABIAArch64BE }

// ELFMachine is the e_machine of the ABI's ELF files (System V gABI).
func (a ABI) ELFMachine() elf.Machine {
	switch a {
	case ABIAMD64LE:
		return elf.EM_X86_64
	case ABIAArch64LE, ABIAArch64BE:
		return elf.EM_AARCH64
	case ABIS390XBE:
		return elf.EM_S390
	}
	return elf.EM_NONE
}

// RegAMD64RA is the AMD64 return-address column: no register holds the
// return address.
const RegAMD64RA = 16

// RARegister is the DWARF number of the return address: the link
// register on AArch64 and s390x, the return-address column on AMD64.
func (a ABI) RARegister() int {
	if lr := linkRegister(a); lr >= 0 {
		return lr
	}
	return RegAMD64RA
}
