package sframe

import (
	"debug/elf"
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
// the file.
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
// section's address (sh_addr) as the base of its function addresses. In a
// relocatable object the address is 0 and function starts stay unrelocated.
func ReadELF(path string) (*Table, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, &ELFError{Path: path, FileOff: -1, Err: fmt.Errorf("not a readable ELF file: %w", err)}
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
