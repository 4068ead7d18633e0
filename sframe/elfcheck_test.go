package sframe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A truncated or corrupt ELF file is reported by structure and file
// offset, never as a bare "EOF": the cases cut or break the test binary
// itself, a real ELF file with program headers, sections and names.
func TestCheckELFNamesStructureAndOffset(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckELF(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	ef, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if ef.Class != elf.ELFCLASS64 || ef.ByteOrder != binary.LittleEndian {
		t.Skipf("the cases below are laid out for ELFCLASS64 little-endian, not %v %v", ef.Class, ef.ByteOrder)
	}
	phoff := int64(binary.LittleEndian.Uint64(good[32:]))
	shoff := int64(binary.LittleEndian.Uint64(good[40:]))
	shnum := int64(binary.LittleEndian.Uint16(good[60:]))
	shstrndx := int64(binary.LittleEndian.Uint16(good[62:]))
	// The last section with contents in the file, and where its header is.
	last := int64(-1)
	for i, s := range ef.Sections {
		if s.Type != elf.SHT_NOBITS && s.Size > 0 && (last < 0 || s.Offset > ef.Sections[last].Offset) {
			last = int64(i)
		}
	}
	put16 := func(b []byte, off int64, v uint16) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint16(b[off:], v)
		return b
	}
	put32 := func(b []byte, off int64, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	put64 := func(b []byte, off int64, v uint64) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	for _, c := range []struct {
		name      string
		file      []byte
		structure string
		off       int64
	}{
		{"e_ident cut", good[:10], "ELF header", 0},
		{"header cut", good[:40], "ELF header", 0},
		{"not ELF", append([]byte("\x7fEFL"), good[4:64]...), "ELF header", 0},
		{"section header table cut", good[:shoff+64*3+5], "section header table", shoff},
		{"section header table past the end", put64(good, 40, uint64(len(good))+100), "section header table", int64(len(good)) + 100},
		{"program header table past the end", put64(good, 32, uint64(len(good))-8), "program header table", int64(len(good)) - 8},
		{"segment past the end", put64(good, phoff+8, uint64(len(good))), "program header 0", phoff},
		{"section past the end", put64(good, shoff+last*64+24, uint64(len(good))), fmt.Sprintf("section header %d", last), shoff + last*64},
		{"string table index", put16(good, 62, uint16(shnum+3)), "ELF header", 62},
		{"name past the string table", put32(good, shoff+64, 1<<30), "section header 1", shoff + 64},
		{"string table not SHT_STRTAB", put32(good, shoff+shstrndx*64+4, uint32(elf.SHT_PROGBITS)), fmt.Sprintf("section header %d", shstrndx), shoff + shstrndx*64},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckELF(bytes.NewReader(c.file), int64(len(c.file)))
			var se *ELFStructError
			if !errors.As(err, &se) {
				t.Fatalf("%v, want an *ELFStructError", err)
			}
			if !strings.HasPrefix(se.Structure, c.structure) || se.Off != c.off {
				t.Errorf("%v: want %s at file offset %d", err, c.structure, c.off)
			}
			// Through ReadELF: the file, the structure and the offset.
			p := filepath.Join(t.TempDir(), "broken")
			if err := os.WriteFile(p, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = ReadELF(p)
			var ee *ELFError
			msg := fmt.Sprint(err)
			if !errors.As(err, &ee) || ee.FileOff != c.off || !strings.Contains(msg, p) || !strings.Contains(msg, c.structure) ||
				!strings.Contains(msg, fmt.Sprintf("file offset %d ", c.off)) || strings.HasSuffix(msg, ": EOF") {
				t.Errorf("ReadELF: %v", err)
			}
		})
	}
}
