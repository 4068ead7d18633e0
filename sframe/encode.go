package sframe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Encoding errors. Every error Encode returns is an *EncodeError wrapping
// one of these or one of the decode sentinels that names the same defect
// (ErrFREsNotIncreasing, ErrFREStartPastEnd, ErrBadRepSize).
var (
	ErrEncodeOptions    = errors.New("sframe: bad encode options")
	ErrNotRepresentable = errors.New("sframe: rule not representable")
	ErrOutOfRange       = errors.New("sframe: value does not fit its field")
)

// EncodeError reports what Encode refuses, and why: the options or the
// section as a whole (Func false), a function (Row -1) or one of its rows.
type EncodeError struct {
	Func      bool   // the error is about one function
	FuncStart uint64 // its start address
	Row       int    // index of the row in FDE.Rows, or -1
	RowStart  uint32 // the row's Start (when Row >= 0)
	Msg       string
	Err       error
}

func (e *EncodeError) Error() string {
	switch {
	case e.Func && e.Row >= 0:
		return fmt.Sprintf("%v: function at %#x, row %d (start +%#x): %s", e.Err, e.FuncStart, e.Row, e.RowStart, e.Msg)
	case e.Func:
		return fmt.Sprintf("%v: function at %#x: %s", e.Err, e.FuncStart, e.Msg)
	}
	return fmt.Sprintf("%v: %s", e.Err, e.Msg)
}

func (e *EncodeError) Unwrap() error { return e.Err }

// EncodeOptions says what kind of section Encode writes.
type EncodeOptions struct {
	Version Version          // 2 or 3; version 1 is obsolete and refused
	ABI     ABI              // one of the four ABIs
	Order   binary.ByteOrder // nil means ABI.ByteOrder()
	// Base is the virtual address the section's first byte will have; it
	// anchors the function start fields.
	Base uint64
	// PCRel sets FlagFuncStartPCRel in version 2 sections: function starts
	// relative to the start field itself (version 2 erratum 1, GNU as
	// after 2.44). Without it a version 2 start is relative to the section
	// start, as binutils 2.41-2.44 wrote them. Version 3 sections are
	// always PCREL and ignore this field.
	PCRel bool
	// CFAFixedFP and CFAFixedRA are the header's fixed offsets, written as
	// given; 0 means "not fixed". They decide the data words of DEFAULT
	// rows as Decode reads them: a value at a fixed offset is not tracked
	// per row, so every row's rule for it must be *(CFA + offset) (the
	// AMD64 RA with CFAFixedRA -8), and a value not fixed has its word (the
	// AMD64 RA too when CFAFixedRA is 0). DefaultFixedOffsets gives the
	// values GNU as writes.
	CFAFixedFP, CFAFixedRA int8
	// AuxHeader is written after the fixed header (at most 255 bytes).
	AuxHeader []byte
	// Unsorted keeps the FDE index in the given order and leaves
	// FlagFDESorted clear, as GNU as writes object files before the linker
	// sorts them.
	Unsorted bool
}

// DefaultFixedOffsets returns the header's fixed FP and RA offsets GNU as
// writes for an ABI: the FP is never at a fixed offset; the AMD64 RA is at
// CFA-8; AArch64 and s390x track the RA per row (0 means none).
func DefaultFixedOffsets(a ABI) (fp, ra int8) {
	if a == ABIAMD64LE {
		return 0, -8
	}
	return 0, 0
}

// Sizes of the fixed on-disk structures Encode and SwapByteOrder write.
const (
	fdeSizeV1     = 17
	fdeSizeV2     = 20
	fdeSizeV3     = 16
	fdeAttrSizeV3 = 5
)

// freTypeForSize picks the FRE start-offset width from the function size,
// as GNU as does: the narrowest type that holds every offset below size.
func freTypeForSize(size uint32) FREType {
	switch {
	case size < 0x100:
		return FREAddr1
	case size < 0x10000:
		return FREAddr2
	}
	return FREAddr4
}

// ChooseFDEType returns the FDE type GNU as would choose for fde's rows
// in a section written with opt: FLEX when some row of a version 3
// section cannot be written as a DEFAULT row (CFA based on a register
// other than SP/FP or dereferenced, an RA or FP held in a register or
// at a CFA offset DEFAULT rows cannot express), DEFAULT otherwise.
//
// Encode does not choose by itself: it writes FDE.Type as given and
// refuses rows that do not fit it, so that a decoded table re-encodes to
// the same types. Producers that start from rows set FDE.Type with this
// function first.
func ChooseFDEType(fde *FDE, opt EncodeOptions) FDEType {
	if opt.Version != Version3 {
		return FDETypeDefault
	}
	e := encoder{opt: opt}
	for i := range fde.Rows {
		var w rowWords
		if err := e.defaultRow(&fde.Rows[i], &w); err != nil {
			if e.flexRow(&fde.Rows[i], &w) == nil {
				return FDETypeFlex
			}
		}
	}
	return FDETypeDefault
}

// Encode writes fdes as one SFrame section, choosing encodings as GNU as
// and GNU ld do:
//
//   - the FRE type (start-offset width) follows from the function size;
//   - each row's data words take the smallest size (1, 2 or 4 bytes) that
//     holds all of them, offsets as signed and flexible control words as
//     unsigned values (version 2 as GNU as 2.41-2.45 sized them: -128 and
//     -32768 take the next size up);
//   - a row whose RA rule is RuleUndefined is an outermost row: info byte
//     0 and no data words (its other rules are not written);
//   - the FRE data (and, in version 3, each function's attribute) is laid
//     out in the order of fdes, and the FDE index is sorted by function
//     start unless opt.Unsorted: that is how ld writes a linked section.
//
// FDE.FREType and FDE.Offset are ignored. Rows are written exactly: two
// equal consecutive rows stay two FREs, and a row starting at the
// function's end (which GNU as writes for an empty function or a CFI
// directive after the last instruction) stays too.
//
// Encode refuses, with an *EncodeError naming the function and row, what
// the requested version, ABI and FDE type cannot express.
func Encode(fdes []FDE, opt EncodeOptions) ([]byte, error) {
	e := encoder{opt: opt}
	if err := e.checkOptions(); err != nil {
		return nil, err
	}
	order := e.opt.Order

	fdeSize := fdeSizeV2
	if opt.Version == Version3 {
		fdeSize = fdeSizeV3
	}
	hdrLen := HeaderSize + len(opt.AuxHeader)
	if uint64(len(fdes)) > uint64(math.MaxUint32) {
		return nil, &EncodeError{Row: -1, Err: ErrOutOfRange, Msg: fmt.Sprintf("%d functions do not fit the header's FDE count", len(fdes))}
	}
	tableEnd := hdrLen + len(fdes)*fdeSize

	// FRE data follows the FDE index; estimate 4 bytes per row.
	nrows := 0
	for i := range fdes {
		nrows += len(fdes[i].Rows)
	}
	out := make([]byte, tableEnd, tableEnd+len(fdes)*fdeAttrSizeV3+nrows*4)

	freOff := make([]uint32, len(fdes))
	var numFREs uint64
	for i := range fdes {
		off := len(out) - tableEnd
		if uint64(off) > math.MaxUint32 {
			return nil, &EncodeError{Func: true, FuncStart: fdes[i].Start, Row: -1, Err: ErrOutOfRange, Msg: "FRE sub-section exceeds 4 GiB"}
		}
		freOff[i] = uint32(off)
		var err error
		out, err = e.appendFunction(out, &fdes[i])
		if err != nil {
			return nil, err
		}
		numFREs += uint64(len(fdes[i].Rows))
	}
	freLen := uint64(len(out) - tableEnd)
	if freLen > math.MaxUint32 || numFREs > math.MaxUint32 {
		return nil, &EncodeError{Row: -1, Err: ErrOutOfRange, Msg: "FRE sub-section exceeds the header's 32-bit length or count"}
	}

	// The index order: sorted by start (stable, so equal starts keep the
	// given order) unless the caller wants it as given.
	idx := make([]int, len(fdes))
	for i := range idx {
		idx[i] = i
	}
	if !opt.Unsorted {
		sort.SliceStable(idx, func(a, b int) bool { return fdes[idx[a]].Start < fdes[idx[b]].Start })
	}

	flags := Flags(0)
	if !opt.Unsorted {
		flags |= FlagFDESorted
	}
	pcrel := opt.PCRel || opt.Version == Version3
	if pcrel {
		flags |= FlagFuncStartPCRel
	}

	h := out[:HeaderSize]
	order.PutUint16(h[0:], Magic)
	h[2] = byte(opt.Version)
	h[3] = byte(flags)
	h[4] = byte(opt.ABI)
	h[5] = byte(opt.CFAFixedFP)
	h[6] = byte(opt.CFAFixedRA)
	h[7] = byte(len(opt.AuxHeader))
	order.PutUint32(h[8:], uint32(len(fdes)))
	order.PutUint32(h[12:], uint32(numFREs))
	order.PutUint32(h[16:], uint32(freLen))
	order.PutUint32(h[20:], 0)
	order.PutUint32(h[24:], uint32(len(fdes)*fdeSize))
	copy(out[HeaderSize:], opt.AuxHeader)

	for pos, i := range idx {
		f := &fdes[i]
		at := hdrLen + pos*fdeSize
		anchor := opt.Base
		if pcrel {
			anchor += uint64(at)
		}
		rel := int64(f.Start - anchor)
		b := out[at : at+fdeSize]
		if opt.Version == Version3 {
			order.PutUint64(b[0:], uint64(rel))
			order.PutUint32(b[8:], f.Size)
			order.PutUint32(b[12:], freOff[i])
			continue
		}
		if rel < math.MinInt32 || rel > math.MaxInt32 {
			what := "the section start"
			if pcrel {
				what = "its start field"
			}
			return nil, &EncodeError{Func: true, FuncStart: f.Start, Row: -1, Err: ErrOutOfRange,
				Msg: fmt.Sprintf("start is %d bytes from %s (section base %#x): not a 32-bit signed version 2 field", rel, what, opt.Base)}
		}
		order.PutUint32(b[0:], uint32(int32(rel)))
		order.PutUint32(b[4:], f.Size)
		order.PutUint32(b[8:], freOff[i])
		order.PutUint32(b[12:], uint32(len(f.Rows)))
		b[16] = e.funcInfo(f)
		b[17] = f.RepSize
		order.PutUint16(b[18:], 0)
	}
	return out, nil
}

// encoder carries the options through one Encode call.
type encoder struct {
	opt EncodeOptions
}

func (e *encoder) checkOptions() error {
	bad := func(format string, args ...any) error {
		return &EncodeError{Row: -1, Err: ErrEncodeOptions, Msg: fmt.Sprintf(format, args...)}
	}
	switch e.opt.Version {
	case Version2, Version3:
	case Version1:
		return bad("version 1 is obsolete; write version 2 or 3")
	default:
		return bad("version %d is not 2 or 3", e.opt.Version)
	}
	switch e.opt.ABI {
	case ABIAMD64LE, ABIAArch64LE, ABIAArch64BE, ABIS390XBE:
	default:
		return bad("unknown ABI %d", uint8(e.opt.ABI))
	}
	if e.opt.Order == nil {
		e.opt.Order = e.opt.ABI.ByteOrder()
	}
	if len(e.opt.AuxHeader) > math.MaxUint8 {
		return bad("auxiliary header of %d bytes is longer than 255", len(e.opt.AuxHeader))
	}
	return nil
}

func (e *encoder) funcInfo(f *FDE) byte {
	info := byte(freTypeForSize(f.Size)) | byte(f.PCType&1)<<4 | byte(f.PAuthKey&1)<<5
	if f.Signal {
		info |= 0x80
	}
	return info
}

// appendFunction appends fde's attribute (version 3) and FREs to out.
func (e *encoder) appendFunction(out []byte, f *FDE) ([]byte, error) {
	fail := func(err error, format string, args ...any) error {
		return &EncodeError{Func: true, FuncStart: f.Start, Row: -1, Err: err, Msg: fmt.Sprintf(format, args...)}
	}
	v3 := e.opt.Version == Version3
	switch f.PCType {
	case PCInc:
	case PCMask:
		if f.RepSize == 0 {
			return nil, fail(ErrBadRepSize, "PCMASK function needs a repetition block size")
		}
	default:
		return nil, fail(ErrNotRepresentable, "unknown PC type %d", f.PCType)
	}
	switch f.Type {
	case FDETypeDefault:
	case FDETypeFlex:
		if !v3 {
			return nil, fail(ErrNotRepresentable, "FLEX FDEs exist in version 3 only")
		}
	default:
		return nil, fail(ErrNotRepresentable, "unknown FDE type %d", f.Type)
	}
	if f.Signal && !v3 {
		return nil, fail(ErrNotRepresentable, "signal frames are marked in version 3 only")
	}
	if f.PAuthKey > PAuthKeyB {
		return nil, fail(ErrNotRepresentable, "unknown pointer authentication key %d", f.PAuthKey)
	}
	if f.PAuthKey != PAuthKeyA && !e.aarch64() {
		return nil, fail(ErrNotRepresentable, "pointer authentication key B on %v", e.opt.ABI)
	}
	if v3 && len(f.Rows) > math.MaxUint16 {
		return nil, fail(ErrOutOfRange, "%d rows do not fit version 3's 16-bit FRE count", len(f.Rows))
	}

	if v3 {
		out = appendU16(e.opt.Order, out, uint16(len(f.Rows)))
		out = append(out, e.funcInfo(f), byte(f.Type), f.RepSize)
	}

	freType := freTypeForSize(f.Size)
	var w rowWords
	for i := range f.Rows {
		r := &f.Rows[i]
		rowFail := func(err error, msg string) error {
			return &EncodeError{Func: true, FuncStart: f.Start, Row: i, RowStart: r.Start, Err: err, Msg: msg}
		}
		if i > 0 && r.Start <= f.Rows[i-1].Start {
			return nil, rowFail(ErrFREsNotIncreasing, fmt.Sprintf("start not above the previous row's +%#x", f.Rows[i-1].Start))
		}
		if r.Start > f.Size {
			return nil, rowFail(ErrFREStartPastEnd, fmt.Sprintf("start beyond the function size %#x", f.Size))
		}
		var err error
		if f.Type == FDETypeFlex {
			err = e.flexRow(r, &w)
		} else {
			err = e.defaultRow(r, &w)
		}
		if err != nil {
			return nil, rowFail(errors.Unwrap(err), err.Error())
		}
		size, code, ok := w.size(e.opt.Version == Version2)
		if !ok {
			return nil, rowFail(ErrOutOfRange, "a data word does not fit 32 bits")
		}
		switch freType {
		case FREAddr1:
			out = append(out, byte(r.Start))
		case FREAddr2:
			out = appendU16(e.opt.Order, out, uint16(r.Start))
		default:
			out = appendU32(e.opt.Order, out, r.Start)
		}
		info := w.baseSP | byte(w.n)<<1
		if w.n > 0 {
			info |= code << 5
		}
		if w.mangled {
			info |= 0x80
		}
		out = append(out, info)
		for k := 0; k < w.n; k++ {
			switch size {
			case 1:
				out = append(out, byte(w.v[k]))
			case 2:
				out = appendU16(e.opt.Order, out, uint16(w.v[k]))
			default:
				out = appendU32(e.opt.Order, out, uint32(w.v[k]))
			}
		}
	}
	return out, nil
}

// appendU16 and appendU32 grow b and write in place: a temporary array
// handed to the ByteOrder interface would escape to the heap.
func appendU16(o binary.ByteOrder, b []byte, v uint16) []byte {
	b = append(b, 0, 0)
	o.PutUint16(b[len(b)-2:], v)
	return b
}

func appendU32(o binary.ByteOrder, b []byte, v uint32) []byte {
	b = append(b, 0, 0, 0, 0)
	o.PutUint32(b[len(b)-4:], v)
	return b
}

// rowWords is one FRE's encoding before its size is chosen.
type rowWords struct {
	n        int
	v        [6]int64
	unsigned uint8 // bit k: word k is a flex control word
	baseSP   byte  // FRE info bit 0: 1 when the CFA is SP-based
	mangled  bool
}

func (w *rowWords) reset() { *w = rowWords{} }

func (w *rowWords) push(v int64, unsigned bool) {
	if unsigned {
		w.unsigned |= 1 << uint(w.n)
	}
	w.v[w.n] = v
	w.n++
}

// size returns the smallest data word size (bytes and info-byte code) that
// holds every word. symmetric reproduces GNU as 2.41-2.45 (the version 2
// assemblers), which sized signed words by |v| <= 0x7f and |v| <= 0x7fff,
// so -128 and -32768 took the next size up; later assemblers use the full
// two's complement ranges.
func (w *rowWords) size(symmetric bool) (bytes int, code byte, ok bool) {
	min8, min16 := int64(math.MinInt8), int64(math.MinInt16)
	if symmetric {
		min8, min16 = -math.MaxInt8, -math.MaxInt16
	}
	bytes, code = 1, 0
	for k := 0; k < w.n; k++ {
		v := w.v[k]
		var need int
		if w.unsigned&(1<<uint(k)) != 0 {
			switch {
			case v >= 0 && v <= math.MaxUint8:
				need = 1
			case v >= 0 && v <= math.MaxUint16:
				need = 2
			case v >= 0 && v <= math.MaxUint32:
				need = 4
			default:
				return 0, 0, false
			}
		} else {
			switch {
			case v >= min8 && v <= math.MaxInt8:
				need = 1
			case v >= min16 && v <= math.MaxInt16:
				need = 2
			case v >= math.MinInt32 && v <= math.MaxInt32:
				need = 4
			default:
				return 0, 0, false
			}
		}
		if need > bytes {
			bytes = need
		}
	}
	switch bytes {
	case 2:
		code = 1
	case 4:
		code = 2
	}
	return bytes, code, true
}

func (e *encoder) aarch64() bool { return e.opt.ABI.IsAArch64() }

// raTracked and fpTracked report whether DEFAULT rows carry an RA or FP
// word: when the header fixes none.
func (e *encoder) raTracked() bool { return e.opt.CFAFixedRA == 0 }
func (e *encoder) fpTracked() bool { return e.opt.CFAFixedFP == 0 }

// raAtDefault and fpAtDefault report whether a rule is what holds when a
// row stores no word for the value: the header's fixed CFA slot, or else
// still where it was (RuleSame).
func (e *encoder) raAtDefault(ra Rule) bool { return atDefault(ra, e.opt.CFAFixedRA) }
func (e *encoder) fpAtDefault(fp Rule) bool { return atDefault(fp, e.opt.CFAFixedFP) }

func atDefault(r Rule, fixed int8) bool {
	if fixed != 0 {
		return r == Rule{Kind: RuleExpr, Reg: RegCFA, Offset: int64(fixed), Deref: true}
	}
	return r.Kind == RuleSame
}

// notRep builds the error a row-level check returns; appendFunction adds
// the function and row.
type rowErr struct {
	msg string
	err error
}

func (r *rowErr) Error() string { return r.msg }
func (r *rowErr) Unwrap() error { return r.err }

func notRep(format string, args ...any) error {
	return &rowErr{msg: fmt.Sprintf(format, args...), err: ErrNotRepresentable}
}

func outOfRange(format string, args ...any) error {
	return &rowErr{msg: fmt.Sprintf(format, args...), err: ErrOutOfRange}
}

// cfaWord returns the stored form of a CFA offset: s390x stores
// (offset - 160) / 8.
func (e *encoder) cfaWord(off int64) (int64, error) {
	if e.opt.ABI != ABIS390XBE {
		return off, nil
	}
	adj := off - s390xCFAAboveSP
	if adj%8 != 0 {
		return 0, notRep("s390x CFA offset %d: (offset - 160) is not a multiple of 8", off)
	}
	return adj / 8, nil
}

func (e *encoder) checkMangled(r *Row, w *rowWords) error {
	if r.MangledRA && !e.aarch64() {
		return notRep("mangled RA on %v (AArch64 only)", e.opt.ABI)
	}
	w.mangled = r.MangledRA
	return nil
}

// defaultRow encodes a row of a DEFAULT FDE.
func (e *encoder) defaultRow(r *Row, w *rowWords) error {
	w.reset()
	if r.RA.Kind == RuleUndefined {
		return nil // outermost: info byte 0, no words
	}
	if err := e.checkMangled(r, w); err != nil {
		return err
	}
	v2s390 := e.opt.Version == Version2 && e.opt.ABI == ABIS390XBE
	hint := ""
	if e.opt.Version == Version3 {
		hint = " (a FLEX FDE can)"
	}

	c := r.CFA
	switch {
	case c.Kind != RuleExpr:
		return notRep("CFA rule is not an expression")
	case c.Reg == e.opt.ABI.SPRegister():
		w.baseSP = 1
	case c.Reg == e.opt.ABI.FPRegister():
	default:
		return notRep("CFA based on register %d, not SP or FP: a DEFAULT FDE cannot express it%s", c.Reg, hint)
	}
	if c.Deref {
		return notRep("dereferenced CFA: a DEFAULT FDE cannot express it%s", hint)
	}
	cw, err := e.cfaWord(c.Offset)
	if err != nil {
		return err
	}
	w.push(cw, false)

	// stackOrReg returns the data word for an RA or FP rule that is saved
	// on the stack (or, in version 2 on s390x, in a register).
	stackOrReg := func(what string, x Rule) (int64, error) {
		switch {
		case x.Kind == RuleExpr && x.Reg == RegCFA && x.Deref:
			if v2s390 && x.Offset&1 != 0 {
				return 0, notRep("s390x %s at odd CFA offset %d reads as a register number in version 2", what, x.Offset)
			}
			return x.Offset, nil
		case x.Kind == RuleExpr && x.Reg >= 0 && x.Offset == 0 && !x.Deref && v2s390:
			if x.Reg > 31 {
				return 0, notRep("s390x %s in register %d: not a DWARF register the format encodes", what, x.Reg)
			}
			return int64(x.Reg)<<1 | 1, nil
		}
		return 0, notRep("%s rule %s: a DEFAULT FDE of %v version %d cannot express it%s", what, x, e.opt.ABI, e.opt.Version, hint)
	}

	raWord, raHas := int64(0), false
	switch {
	case !e.raTracked():
		if !e.raAtDefault(r.RA) {
			return notRep("RA rule %s is not the header's fixed [CFA%+d]%s", r.RA, e.opt.CFAFixedRA, hint)
		}
	case r.RA.Kind == RuleSame:
	default:
		v, err := stackOrReg("RA", r.RA)
		if err != nil {
			return err
		}
		if v == 0 {
			return notRep("RA at CFA+0 reads as the 'RA not saved' padding word")
		}
		raWord, raHas = v, true
	}

	fpWord, fpHas := int64(0), false
	switch {
	case r.FP.Kind == RuleUndefined:
		return notRep("FP rule undefined in a row that is not outermost (RuleSame says the FP is not saved)")
	case !e.fpTracked():
		if !e.fpAtDefault(r.FP) {
			return notRep("FP rule %s is not the header's fixed [CFA%+d]%s", r.FP, e.opt.CFAFixedFP, hint)
		}
	case r.FP.Kind == RuleSame:
	default:
		v, err := stackOrReg("FP", r.FP)
		if err != nil {
			return err
		}
		fpWord, fpHas = v, true
	}

	if e.raTracked() {
		switch {
		case raHas:
			w.push(raWord, false)
		case fpHas && e.aarch64():
			// GNU as skips such a function ("FP without RA on stack").
			return notRep("AArch64 FP saved while the RA is still in x30: a DEFAULT FDE cannot express it%s", hint)
		case fpHas:
			w.push(0, false) // padding: RA not saved
		}
	}
	if fpHas {
		w.push(fpWord, false)
	}
	return nil
}

// flexRow encodes a row of a FLEX FDE (version 3): (control, offset)
// pairs for CFA, RA and FP; a value at its default place (the header's
// fixed slot, or where it was) gets no pair: a lone 0 word for the RA
// when the FP follows, nothing otherwise.
func (e *encoder) flexRow(r *Row, w *rowWords) error {
	w.reset()
	if e.opt.Version != Version3 {
		return notRep("FLEX rows exist in version 3 only")
	}
	if r.RA.Kind == RuleUndefined {
		return nil
	}
	if err := e.checkMangled(r, w); err != nil {
		return err
	}
	c := r.CFA
	if c.Kind != RuleExpr || c.Reg < 0 {
		return notRep("CFA rule %s: a CFA needs a base register", c)
	}
	ctl, err := flexControl("CFA", c)
	if err != nil {
		return err
	}
	cw, err := e.cfaWord(c.Offset)
	if err != nil {
		return err
	}
	w.push(ctl, true)
	w.push(cw, false)

	fpHas := false
	switch {
	case r.FP.Kind == RuleUndefined:
		return notRep("FP rule undefined in a row that is not outermost (RuleSame says the FP is not saved)")
	case e.fpAtDefault(r.FP):
	case r.FP.Kind == RuleExpr:
		fpHas = true
	default:
		return notRep("FP rule %s cannot be written with the header's fixed FP offset %d", r.FP, e.opt.CFAFixedFP)
	}
	switch {
	case e.raAtDefault(r.RA):
		if fpHas {
			w.push(0, true) // RA padding
		}
	case r.RA.Kind == RuleExpr:
		ctl, err := flexControl("RA", r.RA)
		if err != nil {
			return err
		}
		w.push(ctl, true)
		w.push(r.RA.Offset, false)
	default:
		return notRep("RA rule %s cannot be written for %v", r.RA, e.opt.ABI)
	}
	if fpHas {
		ctl, err := flexControl("FP", r.FP)
		if err != nil {
			return err
		}
		w.push(ctl, true)
		w.push(r.FP.Offset, false)
	}
	return nil
}

// flexControl builds a flex control word: (regnum << 3) | (deref << 1) | reg_p.
func flexControl(what string, x Rule) (int64, error) {
	var ctl int64
	switch {
	case x.Reg == RegCFA:
		if what == "CFA" {
			return 0, notRep("CFA relative to itself")
		}
	case x.Reg >= 0 && x.Reg <= math.MaxUint32>>3:
		ctl = int64(x.Reg)<<3 | 1
	default:
		return 0, outOfRange("%s base register %d does not fit a control word", what, x.Reg)
	}
	if x.Deref {
		ctl |= 2
	}
	if ctl == 0 {
		return 0, notRep("%s = CFA%+d (no dereference) has control word 0, which means 'no rule'", what, x.Offset)
	}
	return ctl, nil
}
