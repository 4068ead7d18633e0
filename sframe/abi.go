package sframe

import (
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
