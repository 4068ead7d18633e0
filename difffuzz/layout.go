package difffuzz

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// layout is the classifier's own reading of an SFrame buffer, made from
// the specification alone (v3 chapter 2; v2 for its 20-byte FDEs, v1 for
// its 17-byte ones): where the header says each part lies, which of its
// fields break which rule of the specification, and what a lookup by the
// specification finds for a PC. It shares no code with package sframe, so
// that a disagreement between two decoders is settled by the bytes and
// the text, not by one of the decoders. It reads what it can and records
// every broken rule with its byte offset; it never refuses.
type layout struct {
	// alwaysPCRel reads every function start as PC-relative, whatever
	// the flags say: libsframe 2.47's reading (see the rule
	// libsframe-ignores-pcrel-flag), to tell what it finds apart from
	// what the specification says.
	alwaysPCRel bool
	base        uint64 // address of buf[0]
	buf         []byte
	sections    []*rawSection
	broken      []brokenRule // every rule broken, in reading order
}

// brokenRule is one rule of the specification a byte range breaks.
type brokenRule struct {
	rule string // one of the rule* names
	off  int    // byte offset of the field concerned
	what string
}

func (b brokenRule) String() string { return fmt.Sprintf("%s at byte %d: %s", b.rule, b.off, b.what) }

// The rules the layout checks, each a sentence of the specification (v3
// unless said otherwise). The names are what classes refer to.
const (
	ruleMagic        = "magic"          // 2.1: sfp_magic is 0xdee2
	ruleVersion      = "version"        // 2.1.2: versions 1-3
	ruleFlags        = "flags"          // 2.1.3: undefined flag bits must be zero
	ruleABI          = "abi"            // 2.2.1: four identifiers, 1-4
	ruleAuxHeader    = "aux-header"     // 2.2: the auxiliary header follows the header
	ruleSubsections  = "subsections"    // 2.2: FDE sub-section, then FRE sub-section, tiling the section
	ruleFDEsPastEnd  = "fdes-past-end"  // 2.2: num_fdes entries at fdeoff, inside the section
	ruleFREsPastEnd  = "fres-past-end"  // 2.2: fre_len bytes at freoff, inside the section
	ruleFDEsIntoFREs = "fdes-into-fres" // 2.2: the FDE sub-section ends where the FRE one starts
	ruleAttrOutside  = "attr-outside"   // 2.3.2: a v3 attribute lies in the FRE sub-section
	ruleFREOutside   = "fre-outside"    // 2.4: a function's FREs lie in the FRE sub-section
	ruleFRECount     = "fre-count"      // 2.2: num_fres is the number of FREs in the section
	ruleFREType      = "fre-type"       // 2.3.3.3: three FRE types, 0-2
	ruleFDEType      = "fde-type"       // 2.3.3.2: v3 FDE types 0 and 1
	ruleRepSize      = "rep-size"       // 2.3.3.1: PCMASK needs a repetition block size (PC % 0)
	ruleWordSize     = "word-size"      // 2.4.1: data word sizes 1, 2, 4 (codes 0-2)
	ruleWordCount    = "word-count"     // 3.1, 3.2: the data words the ABI or the FDE type defines
	ruleFREStart     = "fre-start"      // 2.4: an FRE's start is an offset inside its function
	ruleFREOrder     = "fre-order"      // 2.3.3.1: FREs ordered by start (PC >= FRE_START picks the last)
	ruleNotSorted    = "not-sorted"     // 2.3.1: SFRAME_F_FDE_SORTED: sorted by function start
	ruleTrailing     = "trailing"       // 2.2: the section ends with its FRE sub-section
	ruleFREsShared   = "fres-shared"    // 2.2, 2.4: each function has its own attribute and FREs
	ruleOverlap      = "overlap"        // 2.3.1: each FDE is one function; two functions share no address
	ruleStartWraps   = "start-wraps"    // 2.3.1: the start (anchor + offset) is an address: it does not wrap around
	ruleEndWraps     = "end-wraps"      // 2.3.1: [start, start + size) is a range of addresses: it does not run past 2^64
	ruleFixed        = "fixed-offsets"  // 3.1.1-3.1.3: which of CFA, RA, FP each ABI tracks per FRE and which at a fixed offset

	// factFREGap is no rule: bytes of the FRE sub-section that no
	// function's data covers (libsframe's foreign-endian path refuses
	// them; the specification does not speak of them).
	factFREGap = "fre-gap"
)

// rawSection is one section of the buffer as its header describes it.
type rawSection struct {
	off                                int // of the header in buf
	order                              binary.ByteOrder
	version, flags, abi                uint8
	fixedFP, fixedRA                   int8
	auxLen                             int
	numFDEs, numFREs, freLen           uint32
	fdeOff, freOff                     uint32
	hdrEnd                             int // end of header and auxiliary header
	fdeSize                            int
	freBase, freEnd                    int // the FRE sub-section, clipped to buf
	fdes                               []*rawFDE
	end                                int // where the section ends (header's sizes, clipped to buf)
	fdesComplete, fresInside, countsOK bool
}

// rawFDE is one function as its FDE (v3: index entry and attribute) says.
type rawFDE struct {
	index    int
	off      int // of the index entry in buf
	start    uint64
	size     uint32
	freOff   uint32 // from the FRE sub-section
	numFREs  uint32
	info     uint8
	info2    uint8
	repSize  uint8
	fres     []rawFRE // those that could be read
	fresOK   bool     // every FRE lies in the FRE sub-section
	attrOK   bool     // v3: the attribute lies in the FRE sub-section
	attrOff  int
	fresOff  int // of the first FRE in buf
	dataEnd  int // one past the last byte of the function's FRE data read
	overlaps bool
	wraps    bool // the start wrapped around the address space
	broken   []brokenRule
	hasFlaws bool // some rule about this function's FREs is broken
}

func (f *rawFDE) freType() uint8 { return f.info & 0xf }
func (f *rawFDE) pcMask() bool   { return f.info>>4&1 == 1 }
func (f *rawFDE) fdeType() uint8 { return f.info2 & 0x1f }
func (f *rawFDE) end() uint64    { return f.start + uint64(f.size) }

// rawFRE is one frame row entry.
type rawFRE struct {
	off   int
	start uint32
	info  uint8
	words []uint32 // as stored, zero-extended
}

func (r *rawFRE) count() int    { return int(r.info >> 1 & 0xf) }
func (r *rawFRE) sizeCode() int { return int(r.info >> 5 & 3) }

// signed returns data word i sign-extended from its size.
func (r *rawFRE) signed(i int) int64 {
	w := r.words[i]
	switch r.sizeCode() {
	case 0:
		return int64(int8(w))
	case 1:
		return int64(int16(w))
	}
	return int64(int32(w))
}

func (l *layout) breaks(rule string, off int, format string, args ...any) {
	l.broken = append(l.broken, brokenRule{rule, off, fmt.Sprintf(format, args...)})
}

// has reports whether rule is broken anywhere.
func (l *layout) has(rule string) bool {
	for _, b := range l.broken {
		if b.rule == rule {
			return true
		}
	}
	return false
}

// first is the first broken rule of the buffer, or nil.
func (l *layout) first() *brokenRule {
	if len(l.broken) == 0 {
		return nil
	}
	return &l.broken[0]
}

// readLayout reads buf at address base. Sections follow each other as
// linkers concatenate them (at most 7 zero bytes of padding between, as
// an 8-byte alignment leaves).
func readLayout(buf []byte, base uint64) *layout {
	return readLayoutAs(buf, base, false)
}

// readLayoutAs is readLayout, with every function start read as
// PC-relative when alwaysPCRel.
func readLayoutAs(buf []byte, base uint64, alwaysPCRel bool) *layout {
	l := &layout{base: base, buf: buf, alwaysPCRel: alwaysPCRel}
	l.readSections()
	l.checkOverlap()
	return l
}

func (l *layout) readSections() {
	buf := l.buf
	off := 0
	for off < len(buf) {
		s := l.section(off)
		if s == nil {
			return
		}
		l.sections = append(l.sections, s)
		p := s.end
		for p < len(buf) && buf[p] == 0 && p-s.end < 7 {
			p++
		}
		if p == len(buf) {
			return
		}
		if p+2 > len(buf) || s.order.Uint16(buf[p:]) != 0xdee2 {
			rest := p
			for rest < len(buf) && buf[rest] == 0 {
				rest++
			}
			if rest < len(buf) {
				l.breaks(ruleTrailing, s.end, "%d bytes after the section's end at %d are neither padding nor another section", len(buf)-s.end, s.end)
			}
			return
		}
		off = p
	}
}

var fdeSizes = [4]int{0, 17, 20, 16}

// section reads the section at off; nil when its header cannot be read.
func (l *layout) section(off int) *rawSection {
	buf := l.buf
	if len(buf)-off < 28 {
		l.breaks(ruleFDEsPastEnd, off, "%d bytes left, a header takes 28", len(buf)-off)
		return nil
	}
	s := &rawSection{off: off, order: binary.LittleEndian}
	switch {
	case binary.LittleEndian.Uint16(buf[off:]) == 0xdee2:
	case binary.BigEndian.Uint16(buf[off:]) == 0xdee2:
		s.order = binary.BigEndian
	default:
		l.breaks(ruleMagic, off, "magic bytes %#02x %#02x", buf[off], buf[off+1])
		return nil
	}
	o := s.order
	s.version, s.flags, s.abi = buf[off+2], buf[off+3], buf[off+4]
	s.fixedFP, s.fixedRA, s.auxLen = int8(buf[off+5]), int8(buf[off+6]), int(buf[off+7])
	s.numFDEs, s.numFREs, s.freLen = o.Uint32(buf[off+8:]), o.Uint32(buf[off+12:]), o.Uint32(buf[off+16:])
	s.fdeOff, s.freOff = o.Uint32(buf[off+20:]), o.Uint32(buf[off+24:])
	if s.version < 1 || s.version > 3 {
		l.breaks(ruleVersion, off+2, "version %d", s.version)
		return nil
	}
	known := [4]uint8{0, 0x3, 0x7, 0x5}[s.version]
	if s.flags&^known != 0 {
		l.breaks(ruleFlags, off+3, "flags %#02x in version %d", s.flags, s.version)
	}
	if s.abi < 1 || s.abi > 4 {
		l.breaks(ruleABI, off+4, "ABI/arch %d", s.abi)
	}
	// 3.1.1: AMD64 tracks the FP per FRE and keeps the RA at a fixed
	// offset (CFA-8 by its ABI); 3.1.2, 3.1.3: AArch64 and s390x track
	// both per FRE, so no fixed offset applies.
	switch {
	case s.abi == 3 && (s.fixedFP != 0 || s.fixedRA != -8):
		l.breaks(ruleFixed, off+5, "AMD64 with fixed FP offset %d and fixed RA offset %d (want 0 and -8)", s.fixedFP, s.fixedRA)
	case s.abi != 3 && (s.fixedFP != 0 || s.fixedRA != 0):
		l.breaks(ruleFixed, off+5, "ABI %d with fixed FP offset %d and fixed RA offset %d (want 0 and 0)", s.abi, s.fixedFP, s.fixedRA)
	}
	s.fdeSize = fdeSizes[s.version]
	s.hdrEnd = off + 28 + s.auxLen
	if s.hdrEnd > len(buf) {
		l.breaks(ruleAuxHeader, off+7, "auxiliary header of %d bytes runs past the buffer", s.auxLen)
		s.end = len(buf)
		return s
	}
	if s.fdeOff > s.freOff {
		l.breaks(ruleSubsections, off+20, "fdeoff %d > freoff %d", s.fdeOff, s.freOff)
	}
	avail := uint64(len(buf) - s.hdrEnd)
	fdeEnd := uint64(s.fdeOff) + uint64(s.numFDEs)*uint64(s.fdeSize)
	if fdeEnd > uint64(s.freOff) && s.fdeOff <= s.freOff {
		l.breaks(ruleFDEsIntoFREs, off+8, "%d FDEs of %d bytes from fdeoff %d end at %d, past freoff %d", s.numFDEs, s.fdeSize, s.fdeOff, fdeEnd, s.freOff)
	}
	if fdeEnd > avail {
		l.breaks(ruleFDEsPastEnd, off+8, "%d FDEs of %d bytes from fdeoff %d end at %d, past the %d bytes after the header", s.numFDEs, s.fdeSize, s.fdeOff, fdeEnd, avail)
	}
	freEnd := uint64(s.freOff) + uint64(s.freLen)
	if freEnd > avail {
		l.breaks(ruleFREsPastEnd, off+16, "FRE sub-section [%d, %d) past the %d bytes after the header", s.freOff, freEnd, avail)
	}
	s.freBase = s.hdrEnd + int(min(uint64(s.freOff), avail))
	s.freEnd = s.hdrEnd + int(min(freEnd, avail))
	s.end = s.freEnd
	s.fresInside = freEnd <= avail
	s.fdesComplete = fdeEnd <= avail

	// The FDEs whose entries lie in the buffer.
	n := uint64(s.numFDEs)
	if !s.fdesComplete {
		n = (avail - min(avail, uint64(s.fdeOff))) / uint64(s.fdeSize)
	}
	total := uint64(0)
	var prevStart uint64
	for i := 0; i < int(n); i++ {
		f := l.fde(s, i)
		total += uint64(f.numFREs)
		if s.flags&1 != 0 && i > 0 && f.start < prevStart {
			l.breaks(ruleNotSorted, f.off, "FDE %d starts at %#x, before FDE %d at %#x, in a section flagged sorted", i, f.start, i-1, prevStart)
		}
		prevStart = f.start
		s.fdes = append(s.fdes, f)
	}
	l.checkShared(s)
	s.countsOK = s.fdesComplete && total == uint64(s.numFREs)
	if s.fdesComplete && !s.countsOK {
		l.breaks(ruleFRECount, off+12, "header num_fres %d, the FDEs count %d", s.numFREs, total)
	}
	return s
}

// fde reads FDE i of s and its FREs.
func (l *layout) fde(s *rawSection, i int) *rawFDE {
	buf, o := l.buf, s.order
	p := s.hdrEnd + int(s.fdeOff) + i*s.fdeSize
	f := &rawFDE{index: i, off: p}
	var field int64
	switch s.version {
	case 3:
		field = int64(o.Uint64(buf[p:]))
		f.size, f.freOff = o.Uint32(buf[p+8:]), o.Uint32(buf[p+12:])
	default:
		field = int64(int32(o.Uint32(buf[p:])))
		f.size, f.freOff, f.numFREs = o.Uint32(buf[p+4:]), o.Uint32(buf[p+8:]), o.Uint32(buf[p+12:])
		f.info = buf[p+16]
		if s.version == 2 {
			f.repSize = buf[p+17]
		}
	}
	// 2.3.1: with PCREL the start is relative to the field itself, else
	// to the section's first byte (v1 has no such flag).
	anchor := l.base + uint64(s.off)
	if s.version >= 2 && (s.flags&4 != 0 || l.alwaysPCRel) {
		anchor = l.base + uint64(p)
	}
	f.start = anchor + uint64(field)
	// Wrapping around in unsigned addresses, or in signed ones (as
	// section-relative int64 offsets are compared).
	signed := int64(anchor) + field
	if field < 0 && uint64(-field) > anchor || field > 0 && f.start < anchor ||
		field > 0 && signed < int64(anchor) || field < 0 && signed > int64(anchor) {
		f.wraps = true
		l.breaks(ruleStartWraps, p, "FDE %d: start %#x%+#x wraps around the address space", i, anchor, field)
	}
	if f.size > 0 && f.start+uint64(f.size-1) < f.start {
		l.breaks(ruleEndWraps, p+8, "FDE %d: function at %#x of %#x bytes runs past the top of the address space", i, f.start, f.size)
	}
	at := s.freBase + int(min(uint64(f.freOff), uint64(s.freEnd-s.freBase)))
	if uint64(f.freOff) > uint64(s.freEnd-s.freBase) {
		at = -1
	}
	if s.version == 3 {
		f.attrOff = at
		if at < 0 || s.freEnd-at < 5 {
			f.broken = append(f.broken, brokenRule{ruleAttrOutside, p + 12, fmt.Sprintf("FDE %d: attribute at FRE offset %d outside the FRE sub-section of %d bytes", i, f.freOff, s.freEnd-s.freBase)})
			l.broken = append(l.broken, f.broken...)
			f.hasFlaws = true
			return f
		}
		f.attrOK = true
		f.numFREs = uint32(o.Uint16(buf[at:]))
		f.info, f.info2, f.repSize = buf[at+2], buf[at+3], buf[at+4]
		at += 5
		if f.fdeType() > 1 {
			f.broken = append(f.broken, brokenRule{ruleFDEType, f.attrOff + 3, fmt.Sprintf("FDE %d: FDE type %d", i, f.fdeType())})
		}
	}
	f.fresOff, f.dataEnd = at, at
	if f.freType() > 2 {
		f.broken = append(f.broken, brokenRule{ruleFREType, infoOff(s, f), fmt.Sprintf("FDE %d: FRE type %d", i, f.freType())})
	}
	if f.pcMask() && f.repSize == 0 && s.version >= 2 {
		f.broken = append(f.broken, brokenRule{ruleRepSize, infoOff(s, f), fmt.Sprintf("FDE %d: PCMASK with repetition block size 0", i)})
	}
	if f.freType() <= 2 && f.numFREs > 0 {
		l.readFREs(s, f, at)
	} else if f.numFREs > 0 && at < 0 {
		f.broken = append(f.broken, brokenRule{ruleFREOutside, p, fmt.Sprintf("FDE %d: FREs at FRE offset %d, outside the FRE sub-section", i, f.freOff)})
	}
	f.hasFlaws = len(f.broken) > 0
	l.broken = append(l.broken, f.broken...)
	return f
}

// checkShared marks functions whose FRE data (v3: attribute and FREs)
// shares bytes with another function's.
func (l *layout) checkShared(s *rawSection) {
	type span struct {
		lo, hi int
		f      *rawFDE
	}
	var spans []span
	for _, f := range s.fdes {
		lo := f.fresOff
		if s.version == 3 {
			lo = f.attrOff
		}
		if lo >= 0 && f.dataEnd > lo {
			spans = append(spans, span{lo, f.dataEnd, f})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	covered, reach := 0, s.freBase
	for _, sp := range spans {
		covered += max(0, sp.hi-max(sp.lo, reach))
		reach = max(reach, sp.hi)
	}
	if s.fdesComplete && covered < s.freEnd-s.freBase {
		l.breaks(factFREGap, s.freBase, "the functions' FRE data covers %d of the FRE sub-section's %d bytes", covered, s.freEnd-s.freBase)
	}
	for i := 1; i < len(spans); i++ {
		if p, c := spans[i-1], spans[i]; c.lo < p.hi {
			b := brokenRule{ruleFREsShared, c.lo, fmt.Sprintf("FDE %d's FRE data [%d, %d) and FDE %d's [%d, %d) share bytes", p.f.index, p.lo, p.hi, c.f.index, c.lo, c.hi)}
			p.f.broken = append(p.f.broken, b)
			c.f.broken = append(c.f.broken, b)
			l.broken = append(l.broken, b)
		}
	}
}

// checkOverlap marks FDEs whose functions share addresses with another's,
// over every section.
func (l *layout) checkOverlap() {
	var all []*rawFDE
	for _, s := range l.sections {
		for _, f := range s.fdes {
			if f.size > 0 {
				all = append(all, f)
			}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
	var reach *rawFDE // the function reaching furthest so far
	for _, f := range all {
		if reach != nil && f.start < reach.end() && reach.end() > reach.start {
			f.overlaps, reach.overlaps = true, true
			l.breaks(ruleOverlap, f.off, "FDE %d's function [%#x, %#x) overlaps FDE %d's [%#x, %#x)", f.index, f.start, f.end(), reach.index, reach.start, reach.end())
		}
		if reach == nil || f.end() > reach.end() {
			reach = f
		}
	}
}

// infoOff is where FDE f's info byte is.
func infoOff(s *rawSection, f *rawFDE) int {
	if s.version == 3 {
		return f.attrOff + 2
	}
	return f.off + 16
}

// readFREs reads f's FREs from at, stopping at the first that leaves the
// FRE sub-section.
func (l *layout) readFREs(s *rawSection, f *rawFDE, at int) {
	buf, o := l.buf, s.order
	bad := func(rule string, off int, format string, args ...any) {
		f.broken = append(f.broken, brokenRule{rule, off, fmt.Sprintf("FDE %d: ", f.index) + fmt.Sprintf(format, args...)})
	}
	if at < 0 {
		bad(ruleFREOutside, f.off, "FREs at FRE offset %d, outside the FRE sub-section", f.freOff)
		return
	}
	ssize := [3]int{1, 2, 4}[f.freType()]
	limit := int(min(uint64(f.numFREs), uint64(s.freEnd-at)/2+1))
	for j := 0; j < limit; j++ {
		if s.freEnd-at < ssize+1 {
			bad(ruleFREOutside, at, "FRE %d of %d runs past the FRE sub-section", j, f.numFREs)
			return
		}
		r := rawFRE{off: at}
		switch ssize {
		case 1:
			r.start = uint32(buf[at])
		case 2:
			r.start = uint32(o.Uint16(buf[at:]))
		default:
			r.start = o.Uint32(buf[at:])
		}
		r.info = buf[at+ssize]
		at += ssize + 1
		wsize := [4]int{1, 2, 4, 0}[r.sizeCode()]
		if wsize == 0 {
			bad(ruleWordSize, at-1, "FRE %d: data word size code 3", j)
			wsize = 1 // libsframe's reading; the FRE is broken anyway
		}
		if s.freEnd-at < wsize*r.count() {
			bad(ruleFREOutside, at, "FRE %d: %d data words of %d bytes run past the FRE sub-section", j, r.count(), wsize)
			return
		}
		for k := 0; k < r.count(); k++ {
			var w uint32
			switch wsize {
			case 1:
				w = uint32(buf[at])
			case 2:
				w = uint32(o.Uint16(buf[at:]))
			default:
				w = o.Uint32(buf[at:])
			}
			r.words = append(r.words, w)
			at += wsize
		}
		if r.start > f.size {
			bad(ruleFREStart, r.off, "FRE %d starts at %#x, past the function's size %#x", j, r.start, f.size)
		}
		if j > 0 && r.start <= f.fres[j-1].start {
			bad(ruleFREOrder, r.off, "FRE %d starts at %#x, not after FRE %d at %#x", j, r.start, j-1, f.fres[j-1].start)
		}
		if max := maxWords(s, f); r.count() > max {
			bad(ruleWordCount, r.off+ssize, "FRE %d has %d data words, the layout uses at most %d", j, r.count(), max)
		}
		f.fres = append(f.fres, r)
		f.dataEnd = at
	}
	if uint32(len(f.fres)) < f.numFREs {
		bad(ruleFREOutside, at, "%d FREs cannot fit in what is left of the FRE sub-section", f.numFREs)
		return
	}
	f.fresOK = true
}

// maxWords is the most data words an FRE of f may carry: spec 3.1 (one
// CFA word, then RA unless the header fixes it, then FP unless fixed) and
// 3.2 (a pair for each of CFA, RA and FP).
func maxWords(s *rawSection, f *rawFDE) int {
	if s.version == 3 && f.fdeType() == 1 {
		return 6
	}
	n := 3
	if s.fixedRA != 0 {
		n--
	}
	if s.fixedFP != 0 {
		n--
	}
	return n
}

// fdeAt returns the FDEs covering pc by the specification (start <= pc <
// start + size), over every section.
func (l *layout) fdeAt(pc uint64) []*rawFDE {
	var out []*rawFDE
	for _, s := range l.sections {
		for _, f := range s.fdes {
			if pc >= f.start && pc-f.start < uint64(f.size) {
				out = append(out, f)
			}
		}
	}
	return out
}

// freAt is the FRE of f covering pc by spec 2.3.3.1 (the last FRE whose
// start is <= the PC's offset, or its offset modulo the block size), or
// -1.
func freAt(f *rawFDE, pc uint64) int {
	off := pc - f.start
	if f.pcMask() && f.repSize > 0 {
		off %= uint64(f.repSize)
	}
	k := -1
	for j, r := range f.fres {
		if uint64(r.start) <= off {
			k = j
		}
	}
	return k
}

// wordsOverflow reports whether some FRE's data words take more than the
// 24 bytes libsframe's sframe_frame_row_entry holds (MAX_DATAWORD_BYTES:
// 6 words of 4 bytes).
func (l *layout) wordsOverflow() bool {
	for _, s := range l.sections {
		for _, f := range s.fdes {
			for _, r := range f.fres {
				if r.count()*[4]int{1, 2, 4, 1}[r.sizeCode()] > 24 {
					return true
				}
			}
		}
	}
	return false
}

// sectionOf returns the section holding FDE f.
func (l *layout) sectionOf(f *rawFDE) *rawSection {
	for _, s := range l.sections {
		for _, g := range s.fdes {
			if g == f {
				return s
			}
		}
	}
	return nil
}
