package sframe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ELFStructError is an ELF file whose headers do not hold together: it
// names the structure (ELF header, program header table, program header
// N, section header table, section header N, section name string table)
// and the file offset where it is, or where it was to be read.
type ELFStructError struct {
	Structure string
	Off       int64
	Err       error
}

func (e *ELFStructError) Error() string {
	return fmt.Sprintf("%s at file offset %d (0x%x): %v", e.Structure, e.Off, e.Off, e.Err)
}

func (e *ELFStructError) Unwrap() error { return e.Err }

// OpenELF opens an ELF file after CheckELF has found its headers sound:
// debug/elf alone reports a truncated file as "EOF". Errors are
// *ELFError naming the file, and for a structure that does not hold
// together the structure and its file offset (FileOff).
func OpenELF(path string) (*elf.File, error) {
	if err := CheckELFFile(path); err != nil {
		var se *ELFStructError
		if !errors.As(err, &se) {
			return nil, &ELFError{Path: path, FileOff: -1, Err: err}
		}
		e := &ELFError{Path: path, FileOff: -1, Err: fmt.Errorf("not a readable ELF file: %w", err)}
		e.FileOff = se.Off
		return nil, e
	}
	ef, err := elf.Open(path)
	if err != nil {
		return nil, &ELFError{Path: path, FileOff: -1, Err: fmt.Errorf("not a readable ELF file: %w", err)}
	}
	return ef, nil
}

// CheckELFFile is CheckELF on the file at path; an error opening it is
// returned as it is.
func CheckELFFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return CheckELF(f, st.Size())
}

// CheckELF checks that the headers of the ELF file r (size bytes) hold
// together: the ELF header, the program header table and each segment's
// extent, the section header table and each section's extent, and the
// section name string table and every name's offset in it. The first
// problem is returned as an *ELFStructError.
func CheckELF(r io.ReaderAt, size int64) error {
	bad := func(what string, off int64, format string, args ...any) error {
		return &ELFStructError{Structure: what, Off: off, Err: fmt.Errorf(format, args...)}
	}
	var ident [elf.EI_NIDENT]byte
	if n, _ := r.ReadAt(ident[:], 0); n < len(ident) {
		return bad("ELF header", 0, "the file has %d bytes, fewer than the %d of e_ident (not an ELF file, or truncated)", size, len(ident))
	}
	if !bytes.Equal(ident[:4], []byte(elf.ELFMAG)) {
		return bad("ELF header", 0, "magic %q, want %q (not an ELF file)", ident[:4], elf.ELFMAG)
	}
	var bo binary.ByteOrder
	switch elf.Data(ident[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return bad("ELF header", elf.EI_DATA, "unknown byte order %d", ident[elf.EI_DATA])
	}
	is64 := false
	switch elf.Class(ident[elf.EI_CLASS]) {
	case elf.ELFCLASS32:
	case elf.ELFCLASS64:
		is64 = true
	default:
		return bad("ELF header", elf.EI_CLASS, "unknown class %d", ident[elf.EI_CLASS])
	}
	hdrSize, phEnt, shEnt := int64(52), int64(32), int64(40)
	if is64 {
		hdrSize, phEnt, shEnt = 64, 56, 64
	}
	hdr := make([]byte, hdrSize)
	if n, _ := r.ReadAt(hdr, 0); int64(n) < hdrSize {
		return bad("ELF header", 0, "the file has %d bytes, fewer than the %d of the header (truncated?)", size, hdrSize)
	}
	var phoff, shoff int64
	var rest []byte
	if is64 {
		phoff, shoff, rest = int64(bo.Uint64(hdr[32:])), int64(bo.Uint64(hdr[40:])), hdr[52:]
	} else {
		phoff, shoff, rest = int64(bo.Uint32(hdr[28:])), int64(bo.Uint32(hdr[32:])), hdr[40:]
	}
	phentsize, phnum := int64(bo.Uint16(rest[2:])), int64(bo.Uint16(rest[4:]))
	shentsize, shnum, shstrndx := int64(bo.Uint16(rest[6:])), int64(bo.Uint16(rest[8:])), int64(bo.Uint16(rest[10:]))

	// The program header table and the segments' extents in the file,
	// after the sections: a cut file is told by the table a reader of
	// .sframe needs.
	segments := func() error {
		if phnum == 0 {
			return nil
		}
		if phentsize < phEnt {
			return bad("ELF header", hdrSize-12, "program header entries of %d bytes, want at least %d", phentsize, phEnt)
		}
		if end := phoff + phnum*phentsize; phoff < 0 || end > size || end < phoff {
			return bad("program header table", phoff, "%d entries of %d bytes end at %d, past the end of the file (%d bytes; truncated?)", phnum, phentsize, end, size)
		}
		ph := make([]byte, phentsize)
		for i := int64(0); i < phnum; i++ {
			at := phoff + i*phentsize
			if _, err := r.ReadAt(ph, at); err != nil {
				return bad(fmt.Sprintf("program header %d", i), at, "%v", err)
			}
			var typ uint32
			var off, filesz int64
			if is64 {
				typ, off, filesz = bo.Uint32(ph), int64(bo.Uint64(ph[8:])), int64(bo.Uint64(ph[32:]))
			} else {
				typ, off, filesz = bo.Uint32(ph), int64(bo.Uint32(ph[4:])), int64(bo.Uint32(ph[16:]))
			}
			if end := off + filesz; filesz > 0 && (off < 0 || end > size || end < off) {
				return bad(fmt.Sprintf("program header %d (%v)", i, elf.ProgType(typ)), at,
					"its segment's %d bytes at file offset %d end past the end of the file (%d bytes; truncated?)", filesz, off, size)
			}
		}
		return nil
	}

	// The section header table, its count (extended numbering: entry 0
	// holds it when e_shnum is 0), every section's extent.
	if shoff == 0 {
		if shnum != 0 {
			return bad("ELF header", hdrSize-4, "%d section headers but no section header table offset", shnum)
		}
		return segments()
	}
	if shentsize < shEnt {
		return bad("ELF header", hdrSize-6, "section header entries of %d bytes, want at least %d", shentsize, shEnt)
	}
	if shoff < 0 || shoff+shentsize > size || shoff+shentsize < shoff {
		return bad("section header table", shoff, "starts past the end of the file (%d bytes; truncated?)", size)
	}
	sh := make([]byte, shentsize)
	type section struct {
		name, typ uint32
		off, size int64
		link      uint32
	}
	read := func(i int64) (section, error) {
		at := shoff + i*shentsize
		if _, err := r.ReadAt(sh, at); err != nil {
			return section{}, bad(fmt.Sprintf("section header %d", i), at, "%v", err)
		}
		if is64 {
			return section{bo.Uint32(sh), bo.Uint32(sh[4:]), int64(bo.Uint64(sh[24:])), int64(bo.Uint64(sh[32:])), bo.Uint32(sh[40:])}, nil
		}
		return section{bo.Uint32(sh), bo.Uint32(sh[4:]), int64(bo.Uint32(sh[16:])), int64(bo.Uint32(sh[20:])), bo.Uint32(sh[24:])}, nil
	}
	if shnum == 0 || shstrndx == int64(elf.SHN_XINDEX) {
		s0, err := read(0)
		if err != nil {
			return err
		}
		if shnum == 0 {
			shnum = s0.size
		}
		if shstrndx == int64(elf.SHN_XINDEX) {
			shstrndx = int64(s0.link)
		}
	}
	if end := shoff + shnum*shentsize; shnum < 0 || end > size || end < shoff {
		return bad("section header table", shoff, "%d entries of %d bytes end at %d, past the end of the file (%d bytes; truncated?)", shnum, shentsize, end, size)
	}
	secs := make([]section, shnum)
	for i := range secs {
		s, err := read(int64(i))
		if err != nil {
			return err
		}
		if end := s.off + s.size; elf.SectionType(s.typ) != elf.SHT_NOBITS && s.size > 0 && (s.off < 0 || end > size || end < s.off) {
			return bad(fmt.Sprintf("section header %d", i), shoff+int64(i)*shentsize,
				"its contents' %d bytes at file offset %d end past the end of the file (%d bytes; truncated?)", s.size, s.off, size)
		}
		secs[i] = s
	}
	if shstrndx == int64(elf.SHN_UNDEF) {
		return segments()
	}
	if shstrndx >= shnum {
		return bad("ELF header", hdrSize-2, "the section name string table is section %d, but there are %d sections", shstrndx, shnum)
	}
	str := secs[shstrndx]
	if elf.SectionType(str.typ) != elf.SHT_STRTAB {
		return bad(fmt.Sprintf("section header %d", shstrndx), shoff+shstrndx*shentsize,
			"the section name string table has type %v, want SHT_STRTAB", elf.SectionType(str.typ))
	}
	for i, s := range secs {
		if int64(s.name) >= str.size && (s.name != 0 || i != 0) {
			return bad(fmt.Sprintf("section header %d", i), shoff+int64(i)*shentsize,
				"its name is at offset %d of the section name string table, which has %d bytes (at file offset %d)", s.name, str.size, str.off)
		}
	}
	return segments()
}
