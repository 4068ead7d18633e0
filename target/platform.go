package target

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// IsAArch64 reports whether t is AArch64 in either byte order: the two
// share an instruction set (little-endian instructions in both), the
// DWARF numbers, the assembler and pointer authentication; only the data
// order differs.
func (t Target) IsAArch64() bool { return t == AArch64 || t == AArch64BE }

// Arch is the first field of the target's GNU triple: x86_64, aarch64,
// aarch64_be, s390x.
func (t Target) Arch() string {
	switch t {
	case X86_64:
		return "x86_64"
	case AArch64:
		return "aarch64"
	case AArch64BE:
		return "aarch64_be"
	case S390X:
		return "s390x"
	}
	return ""
}

// Triple is the target's own GNU triple, as llvm-mc's -triple and a
// configured binutils spell it: aarch64_be-linux-gnu for AArch64BE.
func (t Target) Triple() string {
	if a := t.Arch(); a != "" {
		return a + "-linux-gnu"
	}
	return ""
}

// ToolTriple is the Debian triple of the cross toolchain that serves t:
// its tools are named <triple>-as, <triple>-gcc. Debian has no
// big-endian AArch64 toolchain: the aarch64 one serves AArch64BE with
// ToolFlags.
func (t Target) ToolTriple() string {
	if t == AArch64BE {
		return AArch64.Triple()
	}
	return t.Triple()
}

// ToolFlags are the flags GNU as and ld of ToolTriple need to make code
// for t (-EB for big-endian AArch64), nil when they make it by default.
func (t Target) ToolFlags() []string {
	if t == AArch64BE {
		return []string{"-EB"}
	}
	return nil
}

// ToolTriples lists the distinct ToolTriples of All, in All's order.
func ToolTriples() []string {
	var out []string
	for _, t := range All {
		if tt := t.ToolTriple(); !slices.Contains(out, tt) {
			out = append(out, tt)
		}
	}
	return out
}

// ServedBy lists, in All's order, the targets whose ToolTriple is triple.
func ServedBy(triple string) []Target {
	var out []Target
	for _, t := range All {
		if t.ToolTriple() == triple {
			out = append(out, t)
		}
	}
	return out
}

// ParseTriple maps a GNU triple in any of its spellings
// (x86_64-pc-linux-gnu, aarch64_be-unknown-linux-gnu, s390x-linux-gnu)
// to the target its first field names.
func ParseTriple(triple string) (Target, error) {
	arch, _, _ := strings.Cut(triple, "-")
	for _, t := range All {
		if arch == t.Arch() {
			return t, nil
		}
	}
	return 0, fmt.Errorf("triple %q: %w", triple, ErrNotATarget)
}

// ErrNotATarget: a triple or an ELF header that names none of the
// targets.
var ErrNotATarget = errors.New("not one of the targets (x86-64, aarch64, aarch64_be, s390x)")

// ELFMachine is the e_machine of the target's ELF files.
func (t Target) ELFMachine() elf.Machine {
	switch t {
	case X86_64:
		return elf.EM_X86_64
	case AArch64, AArch64BE:
		return elf.EM_AARCH64
	case S390X:
		return elf.EM_S390
	}
	return elf.EM_NONE
}

// BFDName is the name GNU BFD gives the target's ELF files, as objdump
// --help lists its "supported targets": elf64-x86-64, elf64-littleaarch64,
// elf64-bigaarch64, elf64-s390.
func (t Target) BFDName() string {
	switch t {
	case X86_64:
		return "elf64-x86-64"
	case AArch64:
		return "elf64-littleaarch64"
	case AArch64BE:
		return "elf64-bigaarch64"
	case S390X:
		return "elf64-s390"
	}
	return ""
}

// ELFData is the EI_DATA byte of the target's ELF files.
func (t Target) ELFData() elf.Data {
	if t.ByteOrder().Uint16([]byte{0, 1}) == 1 {
		return elf.ELFDATA2MSB
	}
	return elf.ELFDATA2LSB
}

// FromELF is the target of an ELF file with header h: its class must be
// 64-bit and its machine and byte order those of a target. The error wraps
// ErrNotATarget and names the header's values.
func FromELF(h elf.FileHeader) (Target, error) {
	if h.Class != elf.ELFCLASS64 {
		return 0, fmt.Errorf("ELF class %v, machine %v: every target is 64-bit: %w", h.Class, h.Machine, ErrNotATarget)
	}
	for _, t := range All {
		if t.ELFMachine() == h.Machine && t.ELFData() == h.Data {
			return t, nil
		}
	}
	return 0, fmt.Errorf("ELF machine %v (%v): %w", h.Machine, h.Data, ErrNotATarget)
}
