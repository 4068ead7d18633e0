package sframe

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
)

// Decode parses buf, one SFrame section or several laid back to back, into
// a Table. base is the virtual address of buf[0]: it anchors function
// starts (with FlagFuncStartPCRel, start = address of the FDE's start
// field + value; without it, start = address of the section's first byte
// + value).
//
// Decode is lazy and zero-copy: it checks every header, every FDE (index
// entry) and, in version 3, every FDE attribute, and indexes the
// functions by start address; it reads no frame row entry. The Table
// refers to buf, which must not change while the Table is in use. FREs
// are decoded where they lie when asked for: a lookup (Table.FindRow,
// Func.FindRow) reads the FREs of one function up to the row it returns,
// checking each as it goes; Func.Rows, Func.FDE and Section.FDEs read and
// check them all; Table.Check checks every FRE of every function and
// reports every problem.
//
// Byte order: the first magic says which order buf is in (0xdee2 read in
// that order). Every later section must be in the same order and have the
// same ABI. The order is not required to be the ABI's own
// (ABI.ByteOrder): a swapped section decodes as well, as libsframe's
// foreign-endian path does (Check reports it).
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
//   - RA and FP, DEFAULT FDEs: the header's fixed offsets decide the data
//     words, whatever the ABI, as libsframe and the Linux unwinder read
//     them: after the CFA word comes an RA word unless cfa_fixed_ra_offset
//     is set (non-zero; 0 is SFRAME_CFA_FIXED_RA_INVALID), then an FP word
//     unless cfa_fixed_fp_offset is set. A fixed value is {RegCFA, offset,
//     Deref}. So AMD64 as GNU as writes it (fixed RA -8) has [CFA, FP],
//     AArch64 and s390x (nothing fixed) [CFA, RA, FP], and AMD64 with a
//     fixed RA offset of 0 [CFA, RA, FP] too. A missing word, or an RA
//     word 0 ("RA not saved", SFRAME_FRE_RA_OFFSET_INVALID, s390x's
//     padding), means RuleSame: still in the link register, or the FP
//     still in the FP register.
//   - Versions 1 and 2, s390x: an odd RA or FP word is a DWARF register
//     number ((r<<1)|1); the rule is {RuleExpr, r, 0, Deref: false}.
//   - Data-word count 0: CFA and RA RuleUndefined (outermost frame), FP
//     RuleSame.
//   - FLEX (version 3): (control, displacement) pairs for CFA, RA, FP; a
//     lone control word 0, or a missing pair, stands for "no rule": the
//     header's fixed slot if it has one, else RuleSame.
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
//   - ErrFREOutOfBounds: a version 1 or 2 FDE whose FREs would start past
//     the FRE sub-section.
//   - ErrBadFREType (> 2), ErrBadFDEType (> 1, version 3),
//     ErrBadRepSize (PCMASK with rep_size 0, versions 2 and 3).
//
// What the FRE readers refuse, as *FormatErrors too: ErrFREOutOfBounds
// (an FRE or a data word outside the FRE sub-section), ErrBadDataWordSize
// (code 3), ErrBadDataWordCount (more words than the header's fixed
// offsets leave room for or the FLEX layout uses, a FLEX CFA with fewer
// than 2 words, a control word without its displacement), ErrBadFlexRule
// (FLEX CFA control word without reg_p), ErrFREStartPastEnd (start >
// function size; a start equal to it is a row covering no PC, which Check
// reports as ErrFREStartAtEnd), ErrFREsNotIncreasing.
//
// What Decode accepts and Table.Check reports (see there): malformed FREs
// (Decode reads none), a section in the other byte order, fixed offsets
// that are not the ABI's, FDEs stored unsorted under the sorted flag (the
// index is sorted anyway), two FDEs with one start, overlapping functions
// (as in relocatable objects, whose start fields await relocation), FRE
// data shared by two functions, and for the Linux unwinder an auxiliary
// header, versions 1 and 2, a missing PCREL flag, sections without FDEs or
// FREs. FRE bytes that no FDE refers to are not an error.
//
// Resources: every count is checked against the bytes that must hold it
// before anything is allocated, and every loop is bounded by those
// counts, so the work of Decode, of Check and of decoding all rows is
// linear in len(buf), and a lookup's in the size of one function's FREs.
// Decode allocates 10 bytes per function at most (the sorted starts and a
// bucket index over them; 12 more when the FDEs are stored unsorted, 8
// more when functions overlap). Rows take more than the bytes they come
// from: a 2-byte FRE becomes an 80-byte Row, so Section.FDEs takes up to
// about 40 times the input size.
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
	t := &Table{Order: order, buf: buf, be: order == binary.BigEndian}
	d := decoder{c: cursor{buf: buf, order: order}, base: base}
	// First every header, so that one allocation holds every FDE.
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
		s.t, s.first = t, nFDEs
		t.Sections = append(t.Sections, s)
		nFDEs += int(s.Header.NumFDEs)
		next, err := d.nextSection(off + s.Size)
		if err != nil {
			return nil, err
		}
		if next < 0 {
			break
		}
		off = next
	}
	t.starts = make([]uint64, nFDEs)
	ix := indexer{t: t, base: base, sorted: true}
	for _, s := range t.Sections {
		if err := ix.section(s); err != nil {
			return nil, err
		}
	}
	if !ix.sorted {
		t.sortIndex()
	} else if ix.overlap {
		t.buildEnds()
	}
	t.buildBuckets()
	return t, nil
}

// minBuckets is the table size from which FindFDE uses buckets.
const minBuckets = 64

// buildBuckets sets buckets and shift (see Table): blocks of the smallest
// power-of-two size that makes at most half as many blocks as functions,
// so that a lookup's binary search runs over a couple of starts. The
// first position of each block is a count of the starts in the blocks
// before it: a histogram and its prefix sums, with no branch per start.
func (t *Table) buildBuckets() {
	starts := t.starts
	n := len(starts)
	if n < minBuckets {
		return
	}
	lo := starts[0]
	span := starts[n-1] - lo
	shift := uint(0)
	for shift < 64 && span>>shift >= uint64(n/2) {
		shift++
	}
	nb := int(span>>shift) + 1
	b := make([]uint32, nb+1)
	for _, s := range starts {
		b[(s-lo)>>shift+1]++
	}
	for k := 1; k <= nb; k++ {
		b[k] += b[k-1]
	}
	t.buckets, t.shift = b, shift
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

// decoder reads the headers of the sections of one buffer.
type decoder struct {
	c    cursor
	base uint64
}

// sizes of the FRE start-offset field by FRE type.
var freStartSize = [3]int{1, 2, 4}

// knownFlags by version (index).
var knownFlags = [4]Flags{0, flagsKnownV1, flagsKnownV2, flagsKnownV3}

// section decodes the header of the section at off and checks that the
// regions it declares lie in the buffer.
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
	// bounds what the counts may make anyone allocate for rows.
	minFRE := uint64(h.NumFREs) * 2
	if h.Version == Version3 {
		minFRE += uint64(h.NumFDEs) * fdeAttrSizeV3
	}
	if minFRE > uint64(h.FRELen) {
		return nil, failAt(off+12, ErrCountMismatch, "%d FREs (and %d FDEs) cannot fit in an FRE sub-section of %d bytes", h.NumFREs, h.NumFDEs, h.FRELen)
	}
	return &Section{
		Header:  h,
		Order:   c.order,
		Offset:  off,
		Size:    HeaderSize + auxLen + int(h.FREOff) + int(h.FRELen),
		Base:    d.base + uint64(off),
		fdeBase: hdrEnd + int(h.FDEOff),
		freBase: hdrEnd + int(h.FREOff),
		freEnd:  hdrEnd + int(h.FREOff) + int(h.FRELen),
		fdeSize: int(fdeSize),
	}, nil
}

// indexer fills Table.starts, one section after another.
type indexer struct {
	t       *Table
	base    uint64
	sorted  bool   // every start so far >= the one before
	overlap bool   // with sorted: some function starts before maxEnd
	maxEnd  uint64 // largest end so far
}

// section reads and checks the FDEs of s (and, in version 3, their
// attributes); the FREs are left for lookups and Check. The loop only
// notices that an FDE is wrong; fdeError reads it again to say what.
func (ix *indexer) section(s *Section) error {
	t := ix.t
	h := &s.Header
	buf, be := t.buf, t.be
	n := int(h.NumFDEs)
	starts := t.starts[s.first : s.first+n]
	freLen := uint64(h.FRELen)
	anchor := s.Base // start fields count from the section, or
	pcrel := h.Flags&FlagFuncStartPCRel != 0
	if pcrel {
		anchor = ix.base // from their own address
	}
	fdeBase, freBase, fdeSize := s.fdeBase, s.freBase, s.fdeSize
	v3, v1 := h.Version == Version3, h.Version == Version1
	sorted, overlap, maxEnd := ix.sorted, ix.overlap, ix.maxEnd
	prev := uint64(0)
	if s.first > 0 {
		prev = t.starts[s.first-1]
	}
	var total uint64
	for i := 0; i < n; i++ {
		fo := fdeBase + i*fdeSize
		var start uint64
		var size, freOff, num uint32
		var info, info2, rep uint8
		if v3 {
			e := buf[fo : fo+fdeSizeV3]
			if be {
				start, size, freOff = binary.BigEndian.Uint64(e), binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
			} else {
				start, size, freOff = binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
			}
			if uint64(freOff)+fdeAttrSizeV3 > freLen {
				return ix.fdeError(s, i)
			}
			a := buf[freBase+int(freOff):]
			a = a[:fdeAttrSizeV3]
			if be {
				num = uint32(binary.BigEndian.Uint16(a))
			} else {
				num = uint32(binary.LittleEndian.Uint16(a))
			}
			info, info2, rep = a[2], a[3]&0x1f, a[4]
		} else {
			e := buf[fo : fo+fdeSizeV1]
			var raw uint32
			if be {
				raw, size, freOff, num = binary.BigEndian.Uint32(e), binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
			} else {
				raw, size, freOff, num = binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
			}
			start, info = uint64(int64(int32(raw))), e[16]
			if !v1 {
				rep = buf[fo+17]
			}
			if uint64(freOff) > freLen {
				return ix.fdeError(s, i)
			}
		}
		if pcrel {
			start += anchor + uint64(fo)
		} else {
			start += anchor
		}
		end := start + uint64(size)
		total += uint64(num)
		// Wrapping past 2^64, FRE type > 2, FDE type > 1, PCMASK without
		// a repetition size (versions 2 and 3), more FREs than counted.
		if (end < start && end != 0) || info&0xf > uint8(FREAddr4) || info2 > uint8(FDETypeFlex) ||
			(info&0x10 != 0 && !v1 && rep == 0) || total > uint64(h.NumFREs) {
			return ix.fdeError(s, i)
		}
		starts[i] = start
		if sorted {
			if start < maxEnd {
				overlap = true
				if start < prev {
					sorted = false
				}
			}
			if end < start {
				end = math.MaxUint64
			}
			maxEnd, prev = max(maxEnd, end), start
		}
	}
	ix.sorted, ix.overlap, ix.maxEnd = sorted, overlap, maxEnd
	if total != uint64(h.NumFREs) {
		return failAt(s.Offset+12, ErrCountMismatch, "header counts %d FREs, the FDEs %d", h.NumFREs, total)
	}
	return nil
}

// fdeError returns the problem section met at FDE i.
//
//go:noinline
func (ix *indexer) fdeError(s *Section, i int) error {
	t := ix.t
	h := &s.Header
	o := s.Order
	buf := t.buf
	fo := s.fdeBase + i*s.fdeSize
	v3 := h.Version == Version3
	var start uint64
	var size, freOff, num uint32
	var info, info2, rep uint8
	var numAt, infoAt, repAt int
	if v3 {
		start, size, freOff = o.Uint64(buf[fo:]), o.Uint32(buf[fo+8:]), o.Uint32(buf[fo+12:])
		if uint64(freOff)+fdeAttrSizeV3 > uint64(h.FRELen) {
			return failAt(fo+12, ErrFDEOutOfBounds, "FDE %d: attribute at FRE offset %d does not fit in the FRE sub-section of %d bytes", i, freOff, h.FRELen)
		}
		numAt = s.freBase + int(freOff)
		num, info, info2, rep = uint32(o.Uint16(buf[numAt:])), buf[numAt+2], buf[numAt+3], buf[numAt+4]
		infoAt, repAt = numAt+2, numAt+4
	} else {
		start = uint64(int64(int32(o.Uint32(buf[fo:]))))
		size, freOff, num, info = o.Uint32(buf[fo+4:]), o.Uint32(buf[fo+8:]), o.Uint32(buf[fo+12:]), buf[fo+16]
		if h.Version == Version2 {
			rep = buf[fo+17]
		}
		numAt, infoAt, repAt = fo+12, fo+16, fo+17
		if uint64(freOff) > uint64(h.FRELen) {
			return failAt(fo+8, ErrFREOutOfBounds, "FDE %d: FREs at offset %d, past the FRE sub-section of %d bytes", i, freOff, h.FRELen)
		}
	}
	if h.Flags&FlagFuncStartPCRel != 0 {
		start += ix.base + uint64(fo)
	} else {
		start += s.Base
	}
	if size > 0 && start+uint64(size)-1 < start {
		return failAt(fo, ErrFDEOutOfBounds, "FDE %d: function at %#x of %d bytes runs past the top of the address space", i, start, size)
	}
	if info&0xf > uint8(FREAddr4) {
		return failAt(infoAt, ErrBadFREType, "FDE %d: FRE type %d, want 0-2", i, info&0xf)
	}
	if v3 && info2&0x1f > uint8(FDETypeFlex) {
		return failAt(infoAt+1, ErrBadFDEType, "FDE %d: FDE type %d, want 0 (DEFAULT) or 1 (FLEX)", i, info2&0x1f)
	}
	if info>>4&1 == uint8(PCMask) && h.Version >= Version2 && rep == 0 {
		return failAt(repAt, ErrBadRepSize, "FDE %d: PCMASK with rep_size 0", i)
	}
	var total uint64 // the FREs of this FDE and those before it
	for k := 0; k <= i; k++ {
		total += uint64(s.Func(k).NumFREs)
	}
	return failAt(numAt, ErrCountMismatch, "FDE %d: %d FREs bring the total to %d, past the header's %d", i, num, total, h.NumFREs)
}

// sortIndex orders starts (stable) and records the permutation.
func (t *Table) sortIndex() {
	n := len(t.starts)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	stored := t.starts
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp.Compare(stored[a], stored[b]) })
	starts := make([]uint64, n)
	for i, r := range perm {
		starts[i] = stored[r]
	}
	t.starts, t.perm = starts, perm
	t.buildEnds()
}

// buildEnds sets ends when some function starts before an earlier one
// (in start order) has ended.
func (t *Table) buildEnds() {
	t.ends = nil
	var maxEnd uint64
	overlap := false
	for i, s := range t.starts {
		if i > 0 && s < maxEnd {
			overlap = true
			break
		}
		maxEnd = max(maxEnd, satEnd(s, t.sizeAt(i)))
	}
	if !overlap {
		return
	}
	t.ends = make([]uint64, len(t.starts))
	maxEnd = 0
	for i, s := range t.starts {
		maxEnd = max(maxEnd, satEnd(s, t.sizeAt(i)))
		t.ends[i] = maxEnd
	}
}

// stored is the stored index of the FDE at sorted position i.
func (t *Table) stored(i int) int {
	if t.perm != nil {
		return int(t.perm[i])
	}
	return i
}

// sizeAt is the function size of the FDE at sorted position i.
func (t *Table) sizeAt(i int) uint32 {
	s, at := t.entry(t.stored(i))
	off := 4 // versions 1 and 2: s32 start, u32 size
	if s.fdeSize == fdeSizeV3 {
		off = 8
	}
	if t.be {
		return binary.BigEndian.Uint32(t.buf[at+off:])
	}
	return binary.LittleEndian.Uint32(t.buf[at+off:])
}

// entry returns the section and byte offset of the FDE with stored index r.
func (t *Table) entry(r int) (*Section, int) {
	s := t.sectionOf(r)
	return s, s.fdeBase + (r-s.first)*s.fdeSize
}

// sectionOf returns the section holding the FDE with stored index r.
func (t *Table) sectionOf(r int) *Section {
	ss := t.Sections
	if len(ss) == 1 {
		return ss[0]
	}
	// The last section whose first FDE is at or before r; sections
	// without FDEs share their first index with the next one, so search
	// for the last.
	i, _ := slices.BinarySearchFunc(ss, r+1, func(s *Section, x int) int { return cmp.Compare(s.first, x) })
	return ss[i-1]
}

// funcAt builds the Func of the FDE with stored index r, whose start is
// start, from its FDE (and version 3 attribute) in the buffer; Decode has
// checked them.
func (t *Table) funcAt(r int, start uint64) Func {
	var f Func
	t.fillFunc(&f, r, start)
	return f
}

// fillFunc is funcAt writing into *f: lookups fill the caller's Func
// rather than copy one through every level.
func (t *Table) fillFunc(f *Func, r int, start uint64) {
	s, at := t.entry(r)
	buf := t.buf
	e := buf[at : at+s.fdeSize]
	var size, freOff, num uint32
	var info, info2, rep uint8
	if s.fdeSize == fdeSizeV3 {
		if t.be {
			size, freOff = binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
		} else {
			size, freOff = binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
		}
		a := buf[s.freBase+int(freOff):]
		a = a[:fdeAttrSizeV3]
		if t.be {
			num = uint32(binary.BigEndian.Uint16(a))
		} else {
			num = uint32(binary.LittleEndian.Uint16(a))
		}
		info, info2, rep = a[2], a[3], a[4]
		freOff += fdeAttrSizeV3
	} else {
		if t.be {
			size, freOff, num = binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint32(e[8:]), binary.BigEndian.Uint32(e[12:])
		} else {
			size, freOff, num = binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
		}
		info = e[16]
		if s.fdeSize == fdeSizeV2 {
			rep = e[17]
		}
	}
	// Field by field: a composite literal would be built aside and copied.
	f.Start, f.Size, f.NumFREs = start, size, int(num)
	f.FREType, f.PCType, f.PAuthKey, f.RepSize = FREType(info&0xf), PCType(info>>4&1), PAuthKey(info>>5&1), rep
	f.Index, f.Offset, f.sec, f.fres = r-s.first, at, s, s.freBase+int(freOff)
	f.Signal, f.Type = false, FDETypeDefault
	if s.fdeSize == fdeSizeV3 {
		f.Signal = info&0x80 != 0
		f.Type = FDEType(info2 & 0x1f)
	}
}

// Func returns the function of the section's FDE i (stored order,
// 0 <= i < Header.NumFDEs).
func (s *Section) Func(i int) Func {
	t := s.t
	r := s.first + i
	start := t.starts[r]
	if t.perm != nil {
		start = s.startAt(i)
	}
	return t.funcAt(r, start)
}

// startAt reads the start of FDE i from the buffer, as Decode did.
func (s *Section) startAt(i int) uint64 {
	t := s.t
	fo := s.fdeBase + i*s.fdeSize
	var v uint64
	if s.Header.Version == Version3 {
		v = s.Order.Uint64(t.buf[fo:])
	} else {
		v = uint64(int64(int32(s.Order.Uint32(t.buf[fo:]))))
	}
	if s.Header.Flags&FlagFuncStartPCRel != 0 {
		return s.Base - uint64(s.Offset) + uint64(fo) + v
	}
	return s.Base + v
}
