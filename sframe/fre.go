package sframe

import (
	"encoding/binary"
	"fmt"
)

// Frame row entries are read lazily, straight from the decoded buffer:
// a lookup reads the FREs of one function up to the one it needs, checking
// each as it goes; Func.Rows and Section.FDEs read them all; Table.Check
// reads them all and reports every problem.

// freHead is an FRE's start offset and info byte, and where its data
// words are.
type freHead struct {
	at    int // byte offset of the FRE in the buffer
	start uint32
	info  uint8
	words int // byte offset of the first data word
	next  int // byte offset of the next FRE
}

func (h *freHead) count() int     { return int(h.info >> 1 & 0xf) }
func (h *freHead) wordSize() int  { return 1 << (h.info >> 5 & 3) }
func (h *freHead) mangled() bool  { return h.info&0x80 != 0 }
func (h *freHead) sizeCode() uint { return uint(h.info >> 5 & 3) }

// readFRE reads the head of the FRE at p, which must end by end, and
// checks what can be checked of one FRE alone: that it lies in the FRE
// sub-section and that its data word size is valid.
func (f *Func) readFRE(p, j int) (freHead, *FormatError) {
	s := f.sec
	buf, end := s.t.buf, s.freEnd
	ss := freStartSize[f.FREType]
	h := freHead{at: p}
	if p > end || end-p < ss+1 {
		// The offset of the first field that does not fit.
		at, what, n := p, "start offset", ss
		if p <= end && end-p >= ss {
			at, what, n = p+ss, "info byte", 1
		}
		return h, failAt(at, ErrFREOutOfBounds, "FDE %d, FRE %d: its %s needs %d bytes, %d left before the FRE sub-section's end at offset %d", f.Index, j, what, n, max(end-at, 0), end)
	}
	switch ss {
	case 1:
		h.start = uint32(buf[p])
	case 2:
		if s.t.be {
			h.start = uint32(binary.BigEndian.Uint16(buf[p:]))
		} else {
			h.start = uint32(binary.LittleEndian.Uint16(buf[p:]))
		}
	default:
		if s.t.be {
			h.start = binary.BigEndian.Uint32(buf[p:])
		} else {
			h.start = binary.LittleEndian.Uint32(buf[p:])
		}
	}
	h.info = buf[p+ss]
	h.words = p + ss + 1
	if h.sizeCode() == 3 {
		return h, failAt(p+ss, ErrBadDataWordSize, "FDE %d, FRE %d: data word size code 3", f.Index, j)
	}
	h.next = h.words + h.count()*h.wordSize()
	if h.next > end {
		k := (end - h.words) / h.wordSize() // the first word that does not fit
		return h, failAt(h.words+k*h.wordSize(), ErrFREOutOfBounds, "FDE %d, FRE %d: data word %d of %d (%d bytes each) runs past the FRE sub-section's end at offset %d", f.Index, j, k, h.count(), h.wordSize(), end)
	}
	return h, nil
}

// checkOrder checks an FRE's start against the previous FRE's and the
// function size. A start equal to the size is accepted: GNU as (2.40,
// 2.44 and 2.47 here) writes one for an empty function and for a CFI
// directive after a function's last instruction, objdump 2.47 prints it
// and libsframe accepts start <= size. Such a row covers no PC; Check
// reports it (ErrFREStartAtEnd), as ld and objdump 2.40 and 2.44 abort on
// it (their libsframe asserted start < size).
func (f *Func) checkOrder(h *freHead, j int, prev uint32) *FormatError {
	if j > 0 && h.start <= prev {
		return failAt(h.at, ErrFREsNotIncreasing, "FDE %d, FRE %d: start %#x, previous FRE starts at %#x", f.Index, j, h.start, prev)
	}
	if h.start > f.Size {
		return failAt(h.at, ErrFREStartPastEnd, "FDE %d, FRE %d: start %#x, function size %#x", f.Index, j, h.start, f.Size)
	}
	return nil
}

// maxWords is the most data words a valid row uses: a FLEX row's three
// (control, displacement) pairs. Only these are read; a row with more is
// refused by the translation, which knows where the excess begins.
const maxWords = 6

// row translates the FRE h (number j of the function) into *row.
func (f *Func) row(h *freHead, j int, row *Row) *FormatError {
	s := f.sec
	row.Start, row.MangledRA, row.PAuthKey, row.Signal = h.start, h.mangled(), f.PAuthKey, f.Signal
	n := h.count()
	if n == 0 {
		row.CFA = Rule{Kind: RuleUndefined}
		row.RA = Rule{Kind: RuleUndefined}
		row.FP = Rule{Kind: RuleSame}
		return nil
	}
	var u [maxWords]uint32
	var w [maxWords]int64
	buf, be := s.t.buf, s.t.be
	p := h.words
	m := min(n, maxWords)
	switch h.wordSize() {
	case 1:
		for k, b := range buf[p : p+m] {
			u[k], w[k] = uint32(b), int64(int8(b))
		}
	case 2:
		for k := 0; k < m; k++ {
			var v uint16
			if be {
				v = binary.BigEndian.Uint16(buf[p+2*k:])
			} else {
				v = binary.LittleEndian.Uint16(buf[p+2*k:])
			}
			u[k], w[k] = uint32(v), int64(int16(v))
		}
	default:
		for k := 0; k < m; k++ {
			var v uint32
			if be {
				v = binary.BigEndian.Uint32(buf[p+4*k:])
			} else {
				v = binary.LittleEndian.Uint32(buf[p+4*k:])
			}
			u[k], w[k] = v, int64(int32(v))
		}
	}
	var err *FormatError
	if f.Type == FDETypeFlex {
		err = flexRow(&s.Header, row, n, &u, &w, h.words, h.wordSize())
	} else {
		err = defaultRow(&s.Header, row, h.info, n, &u, &w, h.at+freStartSize[f.FREType])
	}
	if err != nil {
		*row = Row{}
		return f.rowError(err, j)
	}
	return nil
}

// rowError says which FRE err is about.
//
//go:noinline
func (f *Func) rowError(err *FormatError, j int) *FormatError {
	err.Msg = fmt.Sprintf("FDE %d, FRE %d: %s", f.Index, j, err.Msg)
	return err
}

// saved is the rule of a value saved on the stack at CFA+off.
func saved(off int64) Rule { return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: off, Deref: true} }

// s390xCFA undoes the s390x CFA offset encoding: (offset - 160) / 8.
func s390xCFA(w int64) int64 { return w*8 + s390xCFAAboveSP }

// defaultRow translates the data words of a DEFAULT FRE. The words are
// the CFA offset, then the RA offset unless the header fixes the RA
// (cfa_fixed_ra_offset != 0, SFRAME_CFA_FIXED_RA_INVALID being 0), then
// the FP offset unless the header fixes the FP; a fixed value is saved at
// CFA + that offset. This is how libsframe (sframe_fre_get_ra_offset and
// sframe_fre_get_fp_offset) and the Linux unwinder read them, whatever the
// ABI: AMD64 with its fixed RA at CFA-8 gets [CFA, FP], and AMD64 with a
// fixed RA offset of 0 gets [CFA, RA, FP] as AArch64 and s390x do. An RA
// word of 0 is the "RA not saved" padding (SFRAME_FRE_RA_OFFSET_INVALID),
// and a missing RA or FP word means the value is where it was (RuleSame).
func defaultRow(h *Header, row *Row, info uint8, n int, u *[maxWords]uint32, w *[maxWords]int64, infoAt int) *FormatError {
	abi := h.ABI
	raWord, fpWord := h.CFAFixedRA == 0, h.CFAFixedFP == 0
	if m := 1 + b2i(raWord) + b2i(fpWord); n > m {
		return failAt(infoAt, ErrBadDataWordCount, "%d data words; %v with fixed RA offset %d and fixed FP offset %d uses at most %d (%s)",
			n, abi, h.CFAFixedRA, h.CFAFixedFP, m, [...]string{"CFA", "CFA, FP", "CFA, RA", "CFA, RA, FP"}[b2i(raWord)*2+b2i(fpWord)])
	}
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
	// Versions 1 and 2 on s390x: an odd RA or FP word is a register number.
	regWords := abi == ABIS390XBE && h.Version <= Version2
	k := 1
	switch {
	case !raWord:
		row.RA = saved(int64(h.CFAFixedRA))
	case k < n:
		if w[k] != 0 {
			row.RA = slot(regWords, u[k], w[k])
		}
		k++
	}
	switch {
	case !fpWord:
		row.FP = saved(int64(h.CFAFixedFP))
	case k < n:
		row.FP = slot(regWords, u[k], w[k])
	}
	return nil
}

// slot is the rule of an RA or FP data word: saved at CFA + the word, or
// with regWords (s390x versions 1 and 2) held in register w>>1 when w is
// odd.
func slot(regWords bool, u uint32, w int64) Rule {
	if regWords && w&1 != 0 {
		return Rule{Kind: RuleExpr, Reg: int(u >> 1)}
	}
	return saved(w)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// flexRow translates the (control, displacement) pairs of a FLEX FRE.
func flexRow(h *Header, row *Row, n int, u *[maxWords]uint32, w *[maxWords]int64, wordsAt, wsize int) *FormatError {
	if n < 2 {
		return failAt(wordsAt, ErrBadDataWordCount, "FLEX FRE with %d data word; the CFA needs a control word and a displacement", n)
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
	// No rule (a missing pair, or the padding word 0): the header's fixed
	// offset applies if it has one (v3 specification, "Flexible FDE Type
	// Interpretation"), else the value is where it was.
	row.RA, row.FP = Rule{Kind: RuleSame}, Rule{Kind: RuleSame}
	if h.CFAFixedRA != 0 {
		row.RA = saved(int64(h.CFAFixedRA))
	}
	if h.CFAFixedFP != 0 {
		row.FP = saved(int64(h.CFAFixedFP))
	}
	k := 2
	for _, dst := range [2]*Rule{&row.RA, &row.FP} {
		if k == n {
			break
		}
		ctl := u[k]
		if ctl == 0 {
			k++ // padding: no rule, the default holds
			continue
		}
		if k+1 == n {
			return failAt(wordsAt+k*wsize, ErrBadDataWordCount, "control word %#x without its displacement", ctl)
		}
		*dst = Rule{Kind: RuleExpr, Reg: RegCFA, Offset: w[k+1], Deref: ctl&2 != 0}
		if ctl&1 != 0 {
			dst.Reg = int(ctl >> 3)
		}
		k += 2
	}
	if k != n {
		return failAt(wordsAt+k*wsize, ErrBadDataWordCount, "%d data words, %d left over after the CFA, RA and FP rules", n, n-k)
	}
	return nil
}

// outermostRow is what a version 3 DEFAULT FDE without FREs stands for.
func (f *Func) outermostRow(row *Row) {
	*row = Row{
		CFA:      Rule{Kind: RuleUndefined},
		RA:       Rule{Kind: RuleUndefined},
		FP:       Rule{Kind: RuleSame},
		PAuthKey: f.PAuthKey,
		Signal:   f.Signal,
	}
}

// FindRow returns the row that holds at pc, which must lie in the
// function, decoding the function's FREs up to that row from the buffer.
// It matches a PC as FDE.FindRow does. The FREs it reads are checked as
// they are read (bounds, data word size, increasing starts below the
// function size, data word count and layout of the row returned); a
// problem is returned as a *FormatError, which Table.Check would report
// too. FindRow does not allocate unless it fails that way.
func (f Func) FindRow(pc uint64) (Row, error) {
	if f.sec == nil || pc < f.Start || pc-f.Start >= uint64(f.Size) {
		return Row{}, ErrNoRow
	}
	var row Row
	err := f.findRow(pc-f.Start, &row)
	return row, err
}

// findRow sets *row to the row at offset off (< Size) into the function,
// or to the zero Row on error.
func (f *Func) findRow(off uint64, row *Row) error {
	s := f.sec
	n := f.NumFREs
	if n == 0 {
		if s.Header.Version == Version3 && f.Type == FDETypeDefault {
			f.outermostRow(row)
			return nil
		}
		*row = Row{}
		return ErrNoRow
	}
	v1mask := false
	if f.PCType == PCMask {
		if s.Header.Version == Version1 {
			v1mask = true
		} else {
			off %= uint64(f.RepSize) // Decode refuses PCMASK with RepSize 0
		}
	}
	// The hot loop only notices that something is wrong; freError then
	// walks the FREs again to say what.
	buf, end, be := s.t.buf, s.freEnd, s.t.be
	ss := freStartSize[f.FREType]
	size := f.Size
	best, bestJ := -1, -1
	var bestStart uint32
	var bestInfo uint8
	p := f.fres
	var prev uint32
	for j := 0; j < n; j++ {
		if p > end-ss-1 {
			*row = Row{}
			return f.freError(j)
		}
		var start uint32
		switch ss {
		case 1:
			start = uint32(buf[p])
		case 2:
			if be {
				start = uint32(binary.BigEndian.Uint16(buf[p:]))
			} else {
				start = uint32(binary.LittleEndian.Uint16(buf[p:]))
			}
		default:
			if be {
				start = binary.BigEndian.Uint32(buf[p:])
			} else {
				start = binary.LittleEndian.Uint32(buf[p:])
			}
		}
		info := buf[p+ss]
		code := info >> 5 & 3
		next := p + ss + 1 + int(info>>1&0xf)<<code
		if code == 3 || next > end || (j > 0 && start <= prev) || start > size {
			*row = Row{}
			return f.freError(j)
		}
		if v1mask {
			// The version 1 rule: every bit of the start set in the offset.
			if s := uint64(start); off&s == s {
				best, bestJ, bestStart, bestInfo = p, j, start, info
			}
		} else {
			if uint64(start) > off {
				break
			}
			best, bestJ, bestStart, bestInfo = p, j, start, info
		}
		prev, p = start, next
	}
	if best < 0 {
		*row = Row{}
		return ErrNoRow
	}
	h := freHead{at: best, start: bestStart, info: bestInfo, words: best + ss + 1}
	if err := f.row(&h, bestJ, row); err != nil {
		return err
	}
	return nil
}

// freError returns the problem findRow met at or before FRE j.
//
//go:noinline
func (f *Func) freError(j int) error {
	p := f.fres
	var prev uint32
	for k := 0; k <= j; k++ {
		h, err := f.readFRE(p, k)
		if err != nil {
			return err
		}
		if err := f.checkOrder(&h, k, prev); err != nil {
			return err
		}
		prev, p = h.start, h.next
	}
	panic(fmt.Sprintf("sframe: FDE %d, FRE %d: lookup and check disagree", f.Index, j))
}

// Rows decodes every FRE of the function, checking each as Table.Check
// does; the first problem is returned as a *FormatError.
func (f Func) Rows() ([]Row, error) {
	if f.sec == nil || f.NumFREs == 0 {
		return nil, nil
	}
	rows := make([]Row, 0, f.NumFREs)
	return f.appendRows(rows)
}

func (f *Func) appendRows(rows []Row) ([]Row, error) {
	p := f.fres
	var prev uint32
	for j := 0; j < f.NumFREs; j++ {
		h, err := f.readFRE(p, j)
		if err != nil {
			return nil, err
		}
		if err := f.checkOrder(&h, j, prev); err != nil {
			return nil, err
		}
		var r Row
		if err := f.row(&h, j, &r); err != nil {
			return nil, err
		}
		rows = append(rows, r)
		prev, p = h.start, h.next
	}
	return rows, nil
}

// FDE returns the function with all its rows (see Rows).
func (f Func) FDE() (FDE, error) {
	rows, err := f.Rows()
	if err != nil {
		return FDE{}, err
	}
	return f.fde(rows), nil
}

func (f *Func) fde(rows []Row) FDE {
	fde := FDE{
		Start:    f.Start,
		Size:     f.Size,
		PCType:   f.PCType,
		RepSize:  f.RepSize,
		PAuthKey: f.PAuthKey,
		Signal:   f.Signal,
		Type:     f.Type,
		FREType:  f.FREType,
		Rows:     rows,
		Offset:   f.Offset,
	}
	if f.sec != nil {
		fde.version = f.sec.Header.Version
	}
	return fde
}

// FDEs returns every function of the section in stored order, with all
// its rows, checking every FRE as Table.Check does; the first problem is
// returned as a *FormatError. The rows of all functions share one
// allocation.
func (s *Section) FDEs() ([]FDE, error) {
	n := int(s.Header.NumFDEs)
	out := make([]FDE, n)
	rows := make([]Row, 0, s.Header.NumFREs)
	for i := 0; i < n; i++ {
		f := s.Func(i)
		first := len(rows)
		var err error
		if rows, err = f.appendRows(rows); err != nil {
			return nil, err
		}
		var rs []Row
		if len(rows) > first {
			rs = rows[first:len(rows):len(rows)]
		}
		out[i] = f.fde(rs)
	}
	return out, nil
}
