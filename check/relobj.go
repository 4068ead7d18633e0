package check

import (
	"debug/elf"
	"encoding/binary"
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
// applyReloc knows the relocations GCC's code and GNU as's data carry on
// the four targets; any other stops the run with its name.
func (c *checker) objectCode(base, external uint64) ([]byte, uint64, error) {
	f := c.l.File
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
			idx := info >> 32
			where := fmt.Sprintf("%s entry %d (%s offset 0x%x)", rela.Name, i/24, sec.Name, off)
			if off+2 > sec.Size {
				return nil, 0, fmt.Errorf("%s: past the section end", where)
			}
			S, err := value(idx)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %v", where, err)
			}
			P := sec.Addr + off + delta
			at := code[sec.Addr-lo+off:]
			slot := func() uint64 { // the symbol's GOT slot, filled
				a := got + 8*idx
				bo.PutUint64(code[a-lo:], S)
				return a + delta
			}
			if err := applyReloc(f.Machine, uint32(info), at, bo, S, addend, P, slot); err != nil {
				return nil, 0, fmt.Errorf("%s: %v", where, err)
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

// applyReloc writes relocation typ of machine m at at: S the symbol's
// address, A the addend, P the place's, slot the symbol's GOT slot's.
// AArch64 instructions are little-endian in both byte orders; data
// follows bo.
func applyReloc(m elf.Machine, typ uint32, at []byte, bo binary.ByteOrder, S, A, P uint64, slot func() uint64) error {
	need := func(n int) error {
		if len(at) < n {
			return fmt.Errorf("relocation %d past the section end", typ)
		}
		return nil
	}
	put32 := func(v uint64) error {
		if err := need(4); err != nil {
			return err
		}
		bo.PutUint32(at, uint32(v))
		return nil
	}
	put64 := func(v uint64) error {
		if err := need(8); err != nil {
			return err
		}
		bo.PutUint64(at, v)
		return nil
	}
	// insn rewrites the bits mask of an AArch64 instruction with v.
	insn := func(v, mask uint32) error {
		if err := need(4); err != nil {
			return err
		}
		w := binary.LittleEndian.Uint32(at)
		binary.LittleEndian.PutUint32(at, w&^mask|v&mask)
		return nil
	}
	page := func(x uint64) uint64 { return x &^ 0xfff }
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(typ) {
		case elf.R_X86_64_NONE:
			return nil
		case elf.R_X86_64_PC32, elf.R_X86_64_PLT32:
			return put32(S + A - P)
		case elf.R_X86_64_PC64:
			return put64(S + A - P)
		case elf.R_X86_64_64:
			return put64(S + A)
		case elf.R_X86_64_32, elf.R_X86_64_32S:
			return put32(S + A)
		case elf.R_X86_64_GOTPCREL, elf.R_X86_64_GOTPCRELX, elf.R_X86_64_REX_GOTPCRELX:
			return put32(slot() + A - P)
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(typ) {
		case elf.R_AARCH64_NONE:
			return nil
		case elf.R_AARCH64_PREL32:
			return put32(S + A - P)
		case elf.R_AARCH64_PREL64:
			return put64(S + A - P)
		case elf.R_AARCH64_ABS64:
			return put64(S + A)
		case elf.R_AARCH64_ABS32:
			return put32(S + A)
		case elf.R_AARCH64_CALL26, elf.R_AARCH64_JUMP26:
			return insn(uint32((S+A-P)>>2), 0x03ffffff)
		case elf.R_AARCH64_CONDBR19:
			return insn(uint32((S+A-P)>>2)<<5, 0x7ffff<<5)
		case elf.R_AARCH64_TSTBR14:
			return insn(uint32((S+A-P)>>2)<<5, 0x3fff<<5)
		case elf.R_AARCH64_ADR_PREL_PG_HI21, elf.R_AARCH64_ADR_PREL_PG_HI21_NC, elf.R_AARCH64_ADR_GOT_PAGE:
			target := S + A
			if elf.R_AARCH64(typ) == elf.R_AARCH64_ADR_GOT_PAGE {
				target = slot() + A
			}
			d := uint32((page(target) - page(P)) >> 12)
			return insn((d&3)<<29|(d>>2&0x7ffff)<<5, 3<<29|0x7ffff<<5)
		case elf.R_AARCH64_ADD_ABS_LO12_NC, elf.R_AARCH64_LDST8_ABS_LO12_NC:
			return insn(uint32((S+A)&0xfff)<<10, 0xfff<<10)
		case elf.R_AARCH64_LDST16_ABS_LO12_NC:
			return insn(uint32((S+A)&0xfff>>1)<<10, 0xfff<<10)
		case elf.R_AARCH64_LDST32_ABS_LO12_NC:
			return insn(uint32((S+A)&0xfff>>2)<<10, 0xfff<<10)
		case elf.R_AARCH64_LDST64_ABS_LO12_NC:
			return insn(uint32((S+A)&0xfff>>3)<<10, 0xfff<<10)
		case elf.R_AARCH64_LDST128_ABS_LO12_NC:
			return insn(uint32((S+A)&0xfff>>4)<<10, 0xfff<<10)
		case elf.R_AARCH64_LD64_GOT_LO12_NC:
			return insn(uint32((slot()+A)&0xfff>>3)<<10, 0xfff<<10)
		}
	case elf.EM_S390:
		switch elf.R_390(typ) {
		case elf.R_390_NONE:
			return nil
		case elf.R_390_PC32:
			return put32(S + A - P)
		case elf.R_390_PC64:
			return put64(S + A - P)
		case elf.R_390_64:
			return put64(S + A)
		case elf.R_390_32:
			return put32(S + A)
		case elf.R_390_PC32DBL, elf.R_390_PLT32DBL:
			return put32((S + A - P) >> 1)
		case elf.R_390_PC16DBL, elf.R_390_PLT16DBL:
			if err := need(2); err != nil {
				return err
			}
			bo.PutUint16(at, uint16((S+A-P)>>1))
			return nil
		case elf.R_390_GOTENT:
			return put32((slot() + A - P) >> 1)
		}
	}
	return fmt.Errorf("relocation type %d of %v is not applied", typ, m)
}
