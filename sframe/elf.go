package sframe

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// SectionName is the name of the SFrame section in ELF files.
const SectionName = ".sframe"

// ErrNoSection means an ELF file has no .sframe section.
var ErrNoSection = errors.New("sframe: no .sframe section")

// ELFError reports a failure to read the SFrame section of an ELF file. When
// the section is malformed, Err is the decoder's *FormatError (whose offset
// counts from the section start) and FileOff is the same byte's offset in
// the file. When the ELF headers do not hold together (OpenELF), Err wraps
// an *ELFStructError and FileOff is where the structure is.
type ELFError struct {
	Path    string
	FileOff int64 // -1 when the error has no byte offset
	Err     error
}

func (e *ELFError) Error() string {
	var fe *FormatError
	if errors.As(e.Err, &fe) && e.FileOff >= 0 {
		return fmt.Sprintf("%s: %s section byte offset %d (0x%x), file offset %d (0x%x): %v",
			e.Path, SectionName, fe.Off, fe.Off, e.FileOff, e.FileOff, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *ELFError) Unwrap() error { return e.Err }

// ReadELF decodes the .sframe section of the ELF file at path, with the
// section's address (sh_addr) as the base of its function addresses.
//
// In a relocatable object (ET_REL) the function start fields are left to
// relocations against the text sections. When the section declares
// PC-relative starts (FlagFuncStartPCRel: version 3, version 2 erratum 1)
// ReadELF applies them, so starts read as offsets in their text section,
// as objdump 2.45 and later print them. Without the flag the fields stay
// as stored (gas fills them with PC-relative relocations that mean nothing
// under the section-relative reading), which is what objdump 2.40-2.44
// print too.
func ReadELF(path string) (*Table, error) {
	f, err := OpenELF(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(SectionName)
	if sec == nil {
		return nil, &ELFError{Path: path, FileOff: -1, Err: ErrNoSection}
	}
	if sec.Type == elf.SHT_NOBITS {
		return nil, &ELFError{Path: path, FileOff: -1, Err: fmt.Errorf("%w: the section has no contents in the file (SHT_NOBITS)", ErrNoSection)}
	}
	data, err := sec.Data()
	if err != nil {
		return nil, &ELFError{Path: path, FileOff: -1, Err: fmt.Errorf("reading %s at file offset %d (0x%x): %w", SectionName, sec.Offset, sec.Offset, err)}
	}
	magic := len(data) > 3 && (binary.LittleEndian.Uint16(data) == Magic || binary.BigEndian.Uint16(data) == Magic)
	if f.Type == elf.ET_REL && magic && Flags(data[3])&FlagFuncStartPCRel != 0 {
		if data, err = ApplyRelocations(f, sec, data); err != nil {
			return nil, &ELFError{Path: path, FileOff: -1, Err: err}
		}
	}
	t, err := Decode(data, sec.Addr)
	if err != nil {
		e := &ELFError{Path: path, FileOff: -1, Err: err}
		var fe *FormatError
		if errors.As(err, &fe) && sec.Flags&elf.SHF_COMPRESSED == 0 {
			e.FileOff = int64(sec.Offset) + int64(fe.Off)
		}
		return nil, e
	}
	return t, nil
}

// ApplyRelocations applies the RELA relocations that target sec, a
// section of the relocatable file f, to a copy of data (sec's contents),
// with every section at the address its header gives (0 in a relocatable
// file, unless the caller laid the sections out). It knows the data
// relocations GNU as emits into .sframe, .eh_frame and .debug_frame on the
// four SFrame targets (32- and 64-bit, absolute and PC-relative); any other
// type is an error naming the relocation entry.
func ApplyRelocations(f *elf.File, sec *elf.Section, data []byte) ([]byte, error) {
	var rela *elf.Section
	for _, r := range f.Sections {
		if int(r.Info) >= len(f.Sections) || f.Sections[r.Info] != sec {
			continue
		}
		switch r.Type {
		case elf.SHT_RELA:
			rela = r
		case elf.SHT_REL:
			return nil, fmt.Errorf("%s: REL relocations (%s) are not supported", sec.Name, r.Name)
		}
	}
	if rela == nil {
		return data, nil
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: relocations of a 32-bit ELF file are not supported", sec.Name)
	}
	relData, err := rela.Data()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rela.Name, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading the symbol table for %s: %w", rela.Name, err)
	}
	out := append([]byte(nil), data...)
	bo := f.ByteOrder
	const entSize = 24 // Elf64_Rela
	for i := 0; i+entSize <= len(relData); i += entSize {
		e := relData[i:]
		off, info, addend := bo.Uint64(e), bo.Uint64(e[8:]), int64(bo.Uint64(e[16:]))
		symIdx, typ := info>>32, uint32(info)
		where := fmt.Sprintf("%s entry %d (%s offset %d (0x%x))", rela.Name, i/entSize, sec.Name, off, off)
		size, pcrel, ok := relocKind(f.Machine, typ)
		if !ok {
			if typ == 0 { // R_*_NONE
				continue
			}
			return nil, fmt.Errorf("%s: unsupported relocation type %d for %v", where, typ, f.Machine)
		}
		var S uint64
		if symIdx > 0 {
			if symIdx > uint64(len(syms)) {
				return nil, fmt.Errorf("%s: bad symbol index %d", where, symIdx)
			}
			sym := syms[symIdx-1] // Symbols omits the null symbol
			S = sym.Value
			if sym.Section > 0 && sym.Section < elf.SHN_LORESERVE && int(sym.Section) < len(f.Sections) {
				S += f.Sections[sym.Section].Addr
			}
		}
		v := S + uint64(addend)
		if pcrel {
			v -= sec.Addr + off
		}
		if off+uint64(size) > uint64(len(out)) {
			return nil, fmt.Errorf("%s: relocation past the section end (%d bytes)", where, len(out))
		}
		if size == 4 {
			bo.PutUint32(out[off:], uint32(v))
		} else {
			bo.PutUint64(out[off:], v)
		}
	}
	return out, nil
}

// relocKind gives the width and PC-relativity of a data relocation.
func relocKind(m elf.Machine, typ uint32) (size int, pcrel, ok bool) {
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(typ) {
		case elf.R_X86_64_PC32:
			return 4, true, true
		case elf.R_X86_64_PC64:
			return 8, true, true
		case elf.R_X86_64_32, elf.R_X86_64_32S:
			return 4, false, true
		case elf.R_X86_64_64:
			return 8, false, true
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(typ) {
		case elf.R_AARCH64_PREL32:
			return 4, true, true
		case elf.R_AARCH64_PREL64:
			return 8, true, true
		case elf.R_AARCH64_ABS32:
			return 4, false, true
		case elf.R_AARCH64_ABS64:
			return 8, false, true
		}
	case elf.EM_S390:
		switch elf.R_390(typ) {
		case elf.R_390_PC32:
			return 4, true, true
		case elf.R_390_PC64:
			return 8, true, true
		case elf.R_390_32:
			return 4, false, true
		case elf.R_390_64:
			return 8, false, true
		}
	}
	return 0, false, false
}
