package check

import (
	"debug/elf"
	"fmt"
)

// objectCode lays a relocatable object's allocated sections out as the
// static checks do (layOut, from relLayoutBase) and applies the RELA
// relocations of every allocated section but the unwind ones (whose
// relocated copies the checks already hold) for a run at base: what a
// static link at that address would write. Symbols the object does not
// define resolve to external, the stand-in that returns 0 at once; a GOT
// made after the last section holds one slot per symbol a GOT-relative
// relocation names. It returns the bytes from relLayoutBase and that
// address.
//
// Only x86-64 is supported: its code relocations are whole 32- or 64-bit
// fields. AArch64 (page and low-12-bit pairs written into instruction
// fields) and s390x (halfword-scaled PC-relative fields) are not, and such
// an object is not run (the report says so).
func (c *checker) objectCode(base, external uint64) ([]byte, uint64, error) {
	f := c.l.File
	if f.Machine != elf.EM_X86_64 {
		return nil, 0, fmt.Errorf("a relocatable object is run only on x86-64: its code's %v relocations are not applied; link it to check it dynamically", f.Machine)
	}
	lo := uint64(relLayoutBase)
	hi := lo
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 {
			hi = max(hi, s.Addr+s.Size)
		}
	}
	got := (hi + 7) &^ 7
	syms, err := f.Symbols()
	if err != nil {
		return nil, 0, fmt.Errorf("reading the symbol table: %v", err)
	}
	end := got + 8*uint64(len(syms)+1)
	if err := fits(end - lo); err != nil {
		return nil, 0, err
	}
	code := make([]byte, end-lo)
	delta := base - lo
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		if _, err := s.ReadAt(code[s.Addr-lo:s.Addr-lo+s.Size], 0); err != nil {
			return nil, 0, fmt.Errorf("reading %s: %v", s.Name, err)
		}
	}
	// value is a symbol's address in the run.
	value := func(idx uint64) (uint64, error) {
		if idx == 0 {
			return 0, nil
		}
		if idx > uint64(len(syms)) {
			return 0, fmt.Errorf("bad symbol index %d", idx)
		}
		s := syms[idx-1]
		switch {
		case s.Section == elf.SHN_UNDEF:
			return external, nil
		case s.Section == elf.SHN_ABS:
			return s.Value, nil
		case s.Section >= elf.SHN_LORESERVE || int(s.Section) >= len(f.Sections):
			return 0, fmt.Errorf("symbol %s in section %d (common or reserved)", s.Name, s.Section)
		}
		return f.Sections[s.Section].Addr + s.Value + delta, nil
	}
	bo := f.ByteOrder
	for _, rela := range f.Sections {
		if rela.Type != elf.SHT_RELA || int(rela.Info) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[rela.Info]
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Type == elf.SHT_NOBITS || unwindSection(sec.Name) {
			continue
		}
		data, err := rela.Data()
		if err != nil {
			return nil, 0, fmt.Errorf("reading %s: %v", rela.Name, err)
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off, info, addend := bo.Uint64(data[i:]), bo.Uint64(data[i+8:]), bo.Uint64(data[i+16:])
			typ, idx := elf.R_X86_64(uint32(info)), info>>32
			where := fmt.Sprintf("%s entry %d (%s offset 0x%x)", rela.Name, i/24, sec.Name, off)
			if off+8 > sec.Size && !(off+4 <= sec.Size && typ != elf.R_X86_64_64 && typ != elf.R_X86_64_PC64) {
				return nil, 0, fmt.Errorf("%s: past the section end", where)
			}
			S, err := value(idx)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %v", where, err)
			}
			P := sec.Addr + off + delta
			at := code[sec.Addr-lo+off:]
			switch typ {
			case elf.R_X86_64_NONE:
			case elf.R_X86_64_PC32, elf.R_X86_64_PLT32:
				bo.PutUint32(at, uint32(S+addend-P))
			case elf.R_X86_64_PC64:
				bo.PutUint64(at, S+addend-P)
			case elf.R_X86_64_64:
				bo.PutUint64(at, S+addend)
			case elf.R_X86_64_32, elf.R_X86_64_32S:
				bo.PutUint32(at, uint32(S+addend))
			case elf.R_X86_64_GOTPCREL, elf.R_X86_64_GOTPCRELX, elf.R_X86_64_REX_GOTPCRELX:
				slot := got + 8*idx
				bo.PutUint64(code[slot-lo:], S)
				bo.PutUint32(at, uint32(slot+delta+addend-P))
			default:
				return nil, 0, fmt.Errorf("%s: relocation %v is not applied", where, typ)
			}
		}
	}
	return code, lo, nil
}

// unwindSection reports whether name is a section whose relocations the
// static checks apply to their own copy.
func unwindSection(name string) bool {
	return name == ".sframe" || name == ".eh_frame" || name == ".debug_frame"
}
