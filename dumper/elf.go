package dumper

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
)

// ELF returns a minimal ELF64 executable holding section as .sframe at
// virtual address addr, in the byte order and with the e_machine of abi:
// what objdump --sframe, readelf --sframe and llvm-readobj --sframe need to
// print a section, and nothing else. The file has no program headers and
// no code: the dumpers read the section by name and take function
// addresses from the section's own address (sh_addr), as they do in a
// linked executable.
//
// Layout: the 64-byte ELF header, the section bytes (at file offset 64,
// the 8-byte alignment the section asks for), the section name table,
// then three section headers: the null one, .sframe and .shstrtab.
// .sframe is SHT_GNU_SFRAME (0x6ffffff4, the type binutils 2.45 and later
// give it; older tools go by the name); order says the byte order of the
// whole file, which a dumper uses for the section too.
func ELF(abi sframe.ABI, order binary.ByteOrder, section []byte, addr uint64) ([]byte, error) {
	machine := abi.ELFMachine()
	if machine == elf.EM_NONE {
		return nil, fmt.Errorf("dumper: no ELF machine for ABI %v", abi)
	}
	const (
		ehdrSize = 64
		shdrSize = 64
	)
	shstrtab := []byte("\x00.sframe\x00.shstrtab\x00")
	const nameSFrame, nameShstrtab = 1, 9
	secOff := ehdrSize
	strOff := secOff + len(section)
	shOff := align(strOff+len(shstrtab), 8)
	out := make([]byte, shOff+3*shdrSize)

	// e_ident
	copy(out, elf.ELFMAG)
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if order == binary.BigEndian {
		out[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	out[elf.EI_OSABI] = byte(elf.ELFOSABI_NONE)
	h := out[16:ehdrSize]
	order.PutUint16(h[0:], uint16(elf.ET_EXEC))
	order.PutUint16(h[2:], uint16(machine))
	order.PutUint32(h[4:], uint32(elf.EV_CURRENT))
	order.PutUint64(h[8:], 0)              // e_entry
	order.PutUint64(h[16:], 0)             // e_phoff
	order.PutUint64(h[24:], uint64(shOff)) // e_shoff
	order.PutUint32(h[32:], 0)             // e_flags
	order.PutUint16(h[36:], ehdrSize)      // e_ehsize
	order.PutUint16(h[38:], 56)            // e_phentsize
	order.PutUint16(h[40:], 0)             // e_phnum
	order.PutUint16(h[42:], shdrSize)      // e_shentsize
	order.PutUint16(h[44:], 3)             // e_shnum
	order.PutUint16(h[46:], 2)             // e_shstrndx

	copy(out[secOff:], section)
	copy(out[strOff:], shstrtab)

	sh := func(i int, name uint32, typ elf.SectionType, flags elf.SectionFlag, addr uint64, off, size int, align uint64) {
		b := out[shOff+i*shdrSize:]
		order.PutUint32(b[0:], name)
		order.PutUint32(b[4:], uint32(typ))
		order.PutUint64(b[8:], uint64(flags))
		order.PutUint64(b[16:], addr)
		order.PutUint64(b[24:], uint64(off))
		order.PutUint64(b[32:], uint64(size))
		order.PutUint32(b[40:], 0) // sh_link
		order.PutUint32(b[44:], 0) // sh_info
		order.PutUint64(b[48:], align)
		order.PutUint64(b[56:], 0) // sh_entsize
	}
	sh(1, nameSFrame, shtGNUSFrame, elf.SHF_ALLOC, addr, secOff, len(section), 8)
	sh(2, nameShstrtab, elf.SHT_STRTAB, 0, 0, strOff, len(shstrtab), 1)
	return out, nil
}

// shtGNUSFrame is the section type binutils gives .sframe since 2.45.
const shtGNUSFrame elf.SectionType = 0x6ffffff4

func align(n, a int) int { return (n + a - 1) / a * a }
