package sframe

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Decode parses buf, one SFrame section or several laid back to back, into
// a Table. base is the virtual address of buf[0]: it anchors function
// starts (with FlagFuncStartPCRel, start = address of the FDE's start
// field + value; without it, start = address of the section's first byte
// + value).
//
// Byte order: the first magic says which order buf is in (0xdee2 read in
// that order). Every later section must be in the same order and have the
// same ABI. The order is not required to be the ABI's own
// (ABI.ByteOrder): a swapped section decodes as well, as libsframe's
// foreign-endian path does.
//
// Versions 1 (17-byte FDEs), 2 (20-byte FDEs, with both errata: the PCREL
// flag, s390x with its CFA scaling and register-number data words, and
// data-word count 0 for an undefined RA) and 3 (16-byte FDE index entries
// and 5-byte attributes at the start of each function's FRE data) are
// read. An auxiliary header of any length is skipped (and kept in
// Header.AuxHeader); fdeoff and freoff count from its end.
//
// Several sections: a section occupies header + auxiliary header + freoff
// + fre_len bytes. The next section starts right there, or after zero
// padding of at most 7 bytes (a linker aligning .sframe input sections to
// 8 bytes leaves that much). Zero bytes to the end of buf are padding too.
// Anything else after a section is refused with ErrTrailingData (or
// ErrBadMagic when the magic is there in the other byte order). Alignment
// is counted from buf[0].
//
// Rows are translated into Rules as documented on Rule and Row:
//
//   - CFA: {RuleExpr, SP or FP register of the ABI, offset}; s390x stores
//     (offset-160)/8, Decode returns the offset. FLEX: the control word's
//     register, the displacement (s390x-scaled too) and its deref flag.
//   - RA, DEFAULT FDEs: AMD64 {RegCFA, header cfa_fixed_ra, Deref}; AArch64
//     and s390x take it from the second data word, a missing word or the
//     word 0 ("RA not saved", SFRAME_FRE_RA_OFFSET_INVALID) meaning
//     RuleSame (still in the link register).
//   - FP: third word on AArch64 and s390x, second on AMD64; missing means
//     RuleSame. The header's cfa_fixed_fp (0 in every known producer) is
//     not used.
//   - Versions 1 and 2, s390x: an odd RA or FP word is a DWARF register
//     number ((r<<1)|1); the rule is {RuleExpr, r, 0, Deref: false}.
//   - Data-word count 0: CFA and RA RuleUndefined (outermost frame), FP
//     RuleSame.
//   - FLEX (version 3): (control, displacement) pairs for CFA, RA, FP; a
//     lone control word 0 stands for "no rule": the ABI's default RA
//     (AMD64 the fixed CFA slot, else RuleSame) or FP RuleSame.
//   - Row.MangledRA is FRE info bit 7; PAuthKey and Signal come from the
//     FDE (Signal exists in version 3 only; bit 7 is unused before).
//
// What Decode refuses (each a *FormatError with the byte offset of the
// offending field, wrapping the sentinel named):
//
//   - ErrTruncated: buffer shorter than a header; a region the header
//     claims runs past the end of the buffer.
//   - ErrBadMagic, ErrBadVersion (not 1-3), ErrBadFlags (bits unknown to
//     the version), ErrBadABI (not 1-4, or differing between sections).
//   - ErrBadAuxHeader: auxiliary header past the end of the buffer.
//   - ErrBadSubsection: fdeoff > freoff, or the FDE table running into the
//     FRE sub-section.
//   - ErrCountMismatch: more FREs than the FRE sub-section can hold, or the
//     FDEs' FRE counts not adding up to the header's.
//   - ErrFDEOutOfBounds: a version 3 attribute outside the FRE sub-section;
//     a function whose last byte would lie past 2^64-1 (with the base
//     given, its start field puts it there).
//   - ErrFREOutOfBounds: an FRE outside the FRE sub-section.
//   - ErrBadFREType (> 2), ErrBadFDEType (> 1, version 3),
//     ErrBadRepSize (PCMASK with rep_size 0, versions 2 and 3),
//     ErrBadDataWordSize (code 3), ErrBadDataWordCount (more words than
//     the ABI or the FLEX layout uses, a FLEX CFA with fewer than 2 words,
//     a control word without its displacement), ErrBadFlexRule (FLEX CFA
//     control word without reg_p), ErrFREStartPastEnd (start >= function
//     size), ErrFREsNotIncreasing.
//
// What Decode accepts where the reference consumers disagree, and
// Table.Check reports: FDEs stored unsorted (the index is sorted anyway),
// overlapping functions (as in relocatable objects, whose start fields
// await relocation), an auxiliary header, versions 1 and 2, a missing
// PCREL flag, sections without FDEs or FREs. FRE bytes that no FDE
// refers to are not an error.
//
// Resources: every count is checked against the bytes that must hold it
// before anything is allocated, and every loop is bounded by those
// counts, so Decode's work is linear in len(buf). Memory is bounded by the
// expansion of the smallest encodings: a 2-byte FRE becomes a 112-byte
// Row, so a table takes at most about 60 times the input size.
func Decode(buf []byte, base uint64) (*Table, error) {
	if len(buf) < 2 {
		return nil, failAt(0, ErrTruncated, "%d bytes: not even a magic number", len(buf))
	}
	var order binary.ByteOrder
	switch {
	case binary.LittleEndian.Uint16(buf) == Magic:
		order = binary.LittleEndian
	case binary.BigEndian.Uint16(buf) == Magic:
		order = binary.BigEndian
	default:
		return nil, failAt(0, ErrBadMagic, "magic %#04x is 0xdee2 in neither byte order", binary.BigEndian.Uint16(buf))
	}
	d := decoder{c: cursor{buf: buf, order: order}, base: base}
	t := &Table{Order: order}
	nFDEs := 0
	off := 0
	for {
		s, err := d.section(off)
		if err != nil {
			return nil, err
		}
		if len(t.Sections) == 0 {
			t.ABI = s.Header.ABI
		} else if s.Header.ABI != t.ABI {
			return nil, failAt(off+4, ErrBadABI, "section ABI %v differs from the first section's %v", s.Header.ABI, t.ABI)
		}
		t.Sections = append(t.Sections, s)
		nFDEs += len(s.FDEs)
		next, err := d.nextSection(off + s.Size)
		if err != nil {
			return nil, err
		}
		if next < 0 {
			break
		}
		off = next
	}
	t.buildIndex(nFDEs)
	return t, nil
}

// maxPadding is the most zero padding accepted between two sections.
const maxPadding = 7

// nextSection returns where the section after one ending at end starts,
// or -1 when only zero padding remains.
func (d *decoder) nextSection(end int) (int, error) {
	buf := d.c.buf
	p := end
	for p < len(buf) && buf[p] == 0 {
		p++
	}
	if p == len(buf) {
		return -1, nil
	}
	if p-end > maxPadding {
		return 0, failAt(end, ErrTrailingData, "%d zero bytes then more data after the section ending here; padding between sections is at most %d bytes", p-end, maxPadding)
	}
	if p+2 <= len(buf) {
		switch m := d.c.order.Uint16(buf[p:]); uint16(Magic) {
		case m:
			return p, nil
		case swap16(m):
			return 0, failAt(p, ErrBadMagic, "a section in the other byte order follows; sections in one buffer share one byte order")
		}
	}
	return 0, failAt(p, ErrTrailingData, "byte %#02x after the section ending at offset %d is neither zero padding nor the magic of another section", buf[p], end)
}

func swap16(v uint16) uint16 { return v<<8 | v>>8 }

// decoder holds what every section of one buffer shares.
type decoder struct {
	c    cursor
	base uint64
}

// sizes of the FRE start-offset field by FRE type.
var freStartSize = [3]int{1, 2, 4}

// knownFlags by version (index).
var knownFlags = [4]Flags{0, flagsKnownV1, flagsKnownV2, flagsKnownV3}

// section decodes the section whose header is at off.
func (d *decoder) section(off int) (*Section, error) {
	buf := d.c.buf
	if len(buf)-off < HeaderSize {
		return nil, failAt(off, ErrTruncated, "section header needs %d bytes, %d left", HeaderSize, len(buf)-off)
	}
	c := &d.c
	c.region(off, len(buf), ErrTruncated, "section header")
	if m := c.u16(); m != Magic {
		if swap16(m) == Magic {
			return nil, failAt(off, ErrBadMagic, "a section in the other byte order; sections in one buffer share one byte order")
		}
		return nil, failAt(off, ErrBadMagic, "magic %#04x, want 0xdee2", m)
	}
	var h Header
	h.Version = Version(c.u8())
	if h.Version < Version1 || h.Version > Version3 {
		return nil, failAt(off+2, ErrBadVersion, "version %d, want 1, 2 or 3", h.Version)
	}
	h.Flags = Flags(c.u8())
	if bad := h.Flags &^ knownFlags[h.Version]; bad != 0 {
		return nil, failAt(off+3, ErrBadFlags, "flags %#02x: bits %#02x are not defined in version %d", uint8(h.Flags), uint8(bad), h.Version)
	}
	h.ABI = ABI(c.u8())
	if h.ABI < ABIAArch64BE || h.ABI > ABIS390XBE {
		return nil, failAt(off+4, ErrBadABI, "ABI/arch identifier %d, want 1-4", uint8(h.ABI))
	}
	h.CFAFixedFP = int8(c.u8())
	h.CFAFixedRA = int8(c.u8())
	auxLen := int(c.u8())
	h.NumFDEs = c.u32()
	h.NumFREs = c.u32()
	h.FRELen = c.u32()
	h.FDEOff = c.u32()
	h.FREOff = c.u32()
	hdrEnd := off + HeaderSize + auxLen
	if hdrEnd > len(buf) {
		return nil, failAt(off+7, ErrBadAuxHeader, "auxiliary header of %d bytes runs past the end of the buffer (%d bytes)", auxLen, len(buf))
	}
	if auxLen > 0 {
		h.AuxHeader = append([]byte(nil), buf[off+HeaderSize:hdrEnd]...)
	}
	if h.FDEOff > h.FREOff {
		return nil, failAt(off+20, ErrBadSubsection, "fdeoff %d is past freoff %d", h.FDEOff, h.FREOff)
	}
	fdeSize := uint64(fdeSizeV2)
	switch h.Version {
	case Version1:
		fdeSize = fdeSizeV1
	case Version3:
		fdeSize = fdeSizeV3
	}
	avail := uint64(len(buf) - hdrEnd)
	if fdeEnd := uint64(h.FDEOff) + uint64(h.NumFDEs)*fdeSize; fdeEnd > uint64(h.FREOff) {
		return nil, failAt(off+8, ErrBadSubsection, "%d FDEs of %d bytes from fdeoff %d end at %d, past freoff %d", h.NumFDEs, fdeSize, h.FDEOff, fdeEnd, h.FREOff)
	}
	if uint64(h.FREOff) > avail {
		return nil, failAt(off+24, ErrTruncated, "freoff %d is past the end of the buffer (%d bytes after the header)", h.FREOff, avail)
	}
	if uint64(h.FREOff)+uint64(h.FRELen) > avail {
		return nil, failAt(off+16, ErrTruncated, "FRE sub-section of %d bytes at freoff %d runs past the end of the buffer (%d bytes after the header)", h.FRELen, h.FREOff, avail)
	}
	// Every FRE takes at least 2 bytes, every version 3 attribute 5: this
	// bounds what the counts may make Decode allocate.
	minFRE := uint64(h.NumFREs) * 2
	if h.Version == Version3 {
		minFRE += uint64(h.NumFDEs) * fdeAttrSizeV3
	}
	if minFRE > uint64(h.FRELen) {
		return nil, failAt(off+12, ErrCountMismatch, "%d FREs (and %d FDEs) cannot fit in an FRE sub-section of %d bytes", h.NumFREs, h.NumFDEs, h.FRELen)
	}
	s := &Section{
		Header: h,
		Order:  c.order,
		Offset: off,
		Size:   HeaderSize + auxLen + int(h.FREOff) + int(h.FRELen),
		Base:   d.base + uint64(off),
		FDEs:   make([]FDE, h.NumFDEs),
	}
	f := fdeReader{
		d:       d,
		s:       s,
		fdeBase: hdrEnd + int(h.FDEOff),
		freBase: hdrEnd + int(h.FREOff),
		freEnd:  hdrEnd + int(h.FREOff) + int(h.FRELen),
		fdeSize: int(fdeSize),
		rows:    make([]Row, 0, h.NumFREs),
	}
	for i := range s.FDEs {
		if err := f.fde(i); err != nil {
			return nil, err
		}
	}
	if f.total != uint64(h.NumFREs) {
		return nil, failAt(off+12, ErrCountMismatch, "header counts %d FREs, the FDEs %d", h.NumFREs, f.total)
	}
	return s, nil
}

// fdeReader decodes the FDEs and FREs of one section.
type fdeReader struct {
	d                        *decoder
	s                        *Section
	fdeBase, freBase, freEnd int
	fdeSize                  int
	rows                     []Row // backing store for every FDE's Rows
	total                    uint64
}

// fde decodes FDE i with its FREs.
func (r *fdeReader) fde(i int) error {
	h := &r.s.Header
	c := &r.d.c
	fo := r.fdeBase + i*r.fdeSize
	c.region(fo, fo+r.fdeSize, ErrFDEOutOfBounds, "FDE")
	var start int64
	if h.Version == Version3 {
		start = int64(c.u64())
	} else {
		start = int64(int32(c.u32()))
	}
	size := c.u32()
	freOff := c.u32()
	var num uint32
	var info, info2, rep uint8
	var numAt, infoAt, info2At, repAt int
	frePos := 0
	if h.Version == Version3 {
		if uint64(freOff)+fdeAttrSizeV3 > uint64(r.freEnd-r.freBase) {
			return failAt(fo+12, ErrFDEOutOfBounds, "FDE %d: attribute at FRE offset %d does not fit in the FRE sub-section of %d bytes", i, freOff, h.FRELen)
		}
		at := r.freBase + int(freOff)
		c.region(at, r.freEnd, ErrFDEOutOfBounds, "FDE attribute")
		num = uint32(c.u16())
		info, info2, rep = c.u8(), c.u8(), c.u8()
		numAt, infoAt, info2At, repAt = at, at+2, at+3, at+4
		frePos = at + fdeAttrSizeV3
	} else {
		numAt = c.off
		num = c.u32()
		infoAt = c.off
		info = c.u8()
		if h.Version == Version2 {
			repAt = c.off
			rep = c.u8()
			_ = c.u16() // padding
		}
		if uint64(freOff) > uint64(r.freEnd-r.freBase) {
			return failAt(fo+8, ErrFREOutOfBounds, "FDE %d: FREs at offset %d, past the FRE sub-section of %d bytes", i, freOff, h.FRELen)
		}
		frePos = r.freBase + int(freOff)
	}
	if c.err != nil {
		return c.err
	}
	fde := &r.s.FDEs[i]
	fde.Offset = fo
	fde.version = h.Version
	fde.Size = size
	if h.Flags&FlagFuncStartPCRel != 0 {
		fde.Start = r.d.base + uint64(fo) + uint64(start)
	} else {
		fde.Start = r.s.Base + uint64(start)
	}
	if size > 0 && fde.Start+uint64(size)-1 < fde.Start {
		return failAt(fo, ErrFDEOutOfBounds, "FDE %d: function at %#x of %d bytes runs past the top of the address space", i, fde.Start, size)
	}
	fde.FREType = FREType(info & 0xf)
	if fde.FREType > FREAddr4 {
		return failAt(infoAt, ErrBadFREType, "FDE %d: FRE type %d, want 0-2", i, fde.FREType)
	}
	fde.PCType = PCType(info >> 4 & 1)
	fde.PAuthKey = PAuthKey(info >> 5 & 1)
	fde.RepSize = rep
	if h.Version == Version3 {
		fde.Signal = info&0x80 != 0
		fde.Type = FDEType(info2 & 0x1f)
		if fde.Type > FDETypeFlex {
			return failAt(info2At, ErrBadFDEType, "FDE %d: FDE type %d, want 0 (DEFAULT) or 1 (FLEX)", i, fde.Type)
		}
	}
	if fde.PCType == PCMask && h.Version >= Version2 && rep == 0 {
		return failAt(repAt, ErrBadRepSize, "FDE %d: PCMASK with rep_size 0", i)
	}
	r.total += uint64(num)
	if r.total > uint64(h.NumFREs) {
		return failAt(numAt, ErrCountMismatch, "FDE %d: %d FREs bring the total past the header's %d", i, num, h.NumFREs)
	}
	first := len(r.rows)
	if err := r.fres(fde, i, frePos, int(num)); err != nil {
		return err
	}
	fde.Rows = r.rows[first:len(r.rows):len(r.rows)]
	return nil
}

// fres decodes the n FREs of fde (index i) starting at pos.
func (r *fdeReader) fres(fde *FDE, i, pos, n int) error {
	c := &r.d.c
	c.region(pos, r.freEnd, ErrFREOutOfBounds, "FRE")
	startSize := freStartSize[fde.FREType]
	var u [15]uint32
	var w [15]int64
	for j := 0; j < n; j++ {
		at := c.off
		var start uint32
		switch startSize {
		case 1:
			start = uint32(c.u8())
		case 2:
			start = uint32(c.u16())
		default:
			start = c.u32()
		}
		infoAt := c.off
		info := c.u8()
		if c.err != nil {
			c.err.Msg = fmt.Sprintf("FDE %d, FRE %d: %s", i, j, c.err.Msg)
			return c.err
		}
		if j > 0 && start <= r.rows[len(r.rows)-1].Start {
			return failAt(at, ErrFREsNotIncreasing, "FDE %d, FRE %d: start %#x, previous FRE starts at %#x", i, j, start, r.rows[len(r.rows)-1].Start)
		}
		if start >= fde.Size {
			return failAt(at, ErrFREStartPastEnd, "FDE %d, FRE %d: start %#x, function size %#x", i, j, start, fde.Size)
		}
		count := int(info >> 1 & 0xf)
		code := info >> 5 & 3
		if code == 3 {
			return failAt(infoAt, ErrBadDataWordSize, "FDE %d, FRE %d: data word size code 3", i, j)
		}
		wordsAt := c.off
		for k := 0; k < count; k++ {
			u[k], w[k] = c.word(1 << code)
		}
		if c.err != nil {
			c.err.Msg = fmt.Sprintf("FDE %d, FRE %d: %s", i, j, c.err.Msg)
			return c.err
		}
		row := Row{Start: start, MangledRA: info&0x80 != 0, PAuthKey: fde.PAuthKey, Signal: fde.Signal}
		var err *FormatError
		switch {
		case count == 0:
			row.CFA = Rule{Kind: RuleUndefined}
			row.RA = Rule{Kind: RuleUndefined}
			row.FP = Rule{Kind: RuleSame}
		case fde.Type == FDETypeFlex:
			err = r.flexRow(&row, u[:count], w[:count], wordsAt, 1<<code)
		default:
			err = r.defaultRow(&row, info, u[:count], w[:count], infoAt)
		}
		if err != nil {
			err.Msg = fmt.Sprintf("FDE %d, FRE %d: %s", i, j, err.Msg)
			return err
		}
		r.rows = append(r.rows, row)
	}
	return nil
}

// saved is the rule of a value saved on the stack at CFA+off.
func saved(off int64) Rule { return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: off, Deref: true} }

// s390xCFA undoes the s390x CFA offset encoding: (offset - 160) / 8.
func s390xCFA(w int64) int64 { return w*8 + 160 }

// defaultRow translates the data words of a DEFAULT FRE.
func (r *fdeReader) defaultRow(row *Row, info uint8, u []uint32, w []int64, infoAt int) *FormatError {
	h := &r.s.Header
	abi := h.ABI
	reg := abi.FPRegister()
	if info&1 != 0 {
		reg = abi.SPRegister()
	}
	cfa := w[0]
	if abi == ABIS390XBE {
		cfa = s390xCFA(cfa)
	}
	row.CFA = Rule{Kind: RuleExpr, Reg: reg, Offset: cfa}
	row.RA = Rule{Kind: RuleSame}
	row.FP = Rule{Kind: RuleSame}
	switch abi {
	case ABIAMD64LE:
		if len(w) > 2 {
			return failAt(infoAt, ErrBadDataWordCount, "%d data words; AMD64 uses at most 2 (CFA, FP)", len(w))
		}
		row.RA = saved(int64(h.CFAFixedRA))
		if len(w) == 2 {
			row.FP = saved(w[1])
		}
		return nil
	}
	if len(w) > 3 {
		return failAt(infoAt, ErrBadDataWordCount, "%d data words; %v uses at most 3 (CFA, RA, FP)", len(w), abi)
	}
	// Versions 1 and 2 on s390x: an odd RA or FP word is a register number.
	regWords := abi == ABIS390XBE && h.Version <= Version2
	slot := func(k int) Rule {
		if regWords && w[k]&1 != 0 {
			return Rule{Kind: RuleExpr, Reg: int(u[k] >> 1)}
		}
		return saved(w[k])
	}
	if len(w) >= 2 && w[1] != 0 {
		row.RA = slot(1)
	}
	if len(w) == 3 {
		row.FP = slot(2)
	}
	return nil
}

// flexRow translates the (control, displacement) pairs of a FLEX FRE.
func (r *fdeReader) flexRow(row *Row, u []uint32, w []int64, wordsAt, wsize int) *FormatError {
	h := &r.s.Header
	if len(w) < 2 {
		return failAt(wordsAt, ErrBadDataWordCount, "FLEX FRE with %d data word; the CFA needs a control word and a displacement", len(w))
	}
	ctl := u[0]
	if ctl&1 == 0 {
		return failAt(wordsAt, ErrBadFlexRule, "CFA control word %#x has reg_p clear; a CFA needs a base register", ctl)
	}
	cfa := w[1]
	if h.ABI == ABIS390XBE {
		cfa = s390xCFA(cfa)
	}
	row.CFA = Rule{Kind: RuleExpr, Reg: int(ctl >> 3), Offset: cfa, Deref: ctl&2 != 0}
	if h.ABI == ABIAMD64LE {
		row.RA = saved(int64(h.CFAFixedRA))
	} else {
		row.RA = Rule{Kind: RuleSame}
	}
	row.FP = Rule{Kind: RuleSame}
	k := 2
	for _, dst := range [2]*Rule{&row.RA, &row.FP} {
		if k == len(w) {
			break
		}
		ctl := u[k]
		if ctl == 0 {
			k++ // padding: no rule, the default holds
			continue
		}
		if k+1 == len(w) {
			return failAt(wordsAt+k*wsize, ErrBadDataWordCount, "control word %#x without its displacement", ctl)
		}
		*dst = Rule{Kind: RuleExpr, Reg: RegCFA, Offset: w[k+1], Deref: ctl&2 != 0}
		if ctl&1 != 0 {
			dst.Reg = int(ctl >> 3)
		}
		k += 2
	}
	if k != len(w) {
		return failAt(wordsAt+k*wsize, ErrBadDataWordCount, "%d data words, %d left over after the CFA, RA and FP rules", len(w), len(w)-k)
	}
	return nil
}

// buildIndex sorts every FDE of every section by start address.
func (t *Table) buildIndex(n int) {
	t.index = make([]*FDE, 0, n)
	for _, s := range t.Sections {
		for i := range s.FDEs {
			t.index = append(t.index, &s.FDEs[i])
		}
	}
	byStart := func(a, b *FDE) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(t.index, byStart) {
		slices.SortStableFunc(t.index, byStart)
	}
	t.starts = make([]uint64, len(t.index))
	for i, f := range t.index {
		t.starts[i] = f.Start
	}
	t.ends = nil
	var maxEnd uint64
	for i, f := range t.index {
		if i > 0 && f.Start < maxEnd {
			t.ends = make([]uint64, len(t.index))
			break
		}
		maxEnd = max(maxEnd, satEnd(f))
	}
	if t.ends != nil {
		maxEnd = 0
		for i, f := range t.index {
			maxEnd = max(maxEnd, satEnd(f))
			t.ends[i] = maxEnd
		}
	}
}
