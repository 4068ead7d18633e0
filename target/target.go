package target

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Target is one of the four machines. Its value is the machine's SFrame
// ABI identifier.
type Target uint8

const (
	AArch64BE Target = 1 // AArch64, big-endian data
	AArch64   Target = 2 // AArch64, little-endian
	X86_64    Target = 3 // x86-64 (AMD64)
	S390X     Target = 4 // s390x (z/Architecture), big-endian
)

// All lists the targets in the order reports print them.
var All = []Target{X86_64, AArch64, AArch64BE, S390X}

// WordSize is the size in bytes of a stack slot, a return address and a
// register on every target.
const WordSize = 8

// DWARF register numbers the pipeline refers to by name.
const (
	RegX86FP     = 6  // rbp
	RegX86SP     = 7  // rsp
	RegX86RA     = 16 // the return-address column; no register holds it
	RegAArch64FP = 29 // x29
	RegAArch64LR = 30 // x30, the link register
	RegAArch64SP = 31 // sp
	RegS390XFP   = 11 // r11, the preferred frame pointer
	RegS390XRA   = 14 // r14, the return-address register
	RegS390XSP   = 15 // r15
)

// Valid reports whether t is one of the four targets.
func (t Target) Valid() bool { return t >= AArch64BE && t <= S390X }

// Name is the target's short name as used on the command line, in labels
// and in file names.
func (t Target) Name() string {
	switch t {
	case X86_64:
		return "x86-64"
	case AArch64:
		return "aarch64"
	case AArch64BE:
		return "aarch64_be"
	case S390X:
		return "s390x"
	}
	return fmt.Sprintf("target%d", uint8(t))
}

func (t Target) String() string { return t.Name() }

// Parse maps a name as printed by Name to its target.
func Parse(name string) (Target, error) {
	for _, t := range All {
		if strings.EqualFold(name, t.Name()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown target %q (want one of x86-64, aarch64, aarch64_be, s390x)", name)
}

// MarshalText and UnmarshalText store a target by name.
func (t Target) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("target: %d is not a target", uint8(t))
	}
	return []byte(t.Name()), nil
}

func (t *Target) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// ByteOrder is the order the target keeps data in memory. AArch64
// instructions are little-endian in both variants; this is the data order.
func (t Target) ByteOrder() binary.ByteOrder {
	if t == AArch64BE || t == S390X {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// SP is the DWARF number of the stack pointer.
func (t Target) SP() int {
	switch t {
	case X86_64:
		return RegX86SP
	case S390X:
		return RegS390XSP
	}
	return RegAArch64SP
}

// FP is the DWARF number of the frame pointer.
func (t Target) FP() int {
	switch t {
	case X86_64:
		return RegX86FP
	case S390X:
		return RegS390XFP
	}
	return RegAArch64FP
}

// RA is the DWARF number of the return address: the link register on
// AArch64 and s390x, the return-address column (no register) on x86-64.
func (t Target) RA() int {
	switch t {
	case X86_64:
		return RegX86RA
	case S390X:
		return RegS390XRA
	}
	return RegAArch64LR
}

// HasLinkRegister reports whether a call leaves the return address in a
// register (RA) rather than on the stack.
func (t Target) HasLinkRegister() bool { return t != X86_64 }
