package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Errors wrapped by every *FormatError.
var (
	ErrTruncated   = errors.New("cfi: truncated")
	ErrBadCIE      = errors.New("cfi: bad CIE")
	ErrBadEncoding = errors.New("cfi: unsupported pointer encoding")
	ErrBadOpcode   = errors.New("cfi: unknown call frame instruction")
	ErrStack       = errors.New("cfi: remember/restore state stack")
)

// FormatError reports malformed CFI at a byte offset of the section.
type FormatError struct {
	Off int
	Msg string
	Err error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at byte offset %d (0x%x): %s", e.Err, e.Off, e.Off, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// CIE is a common information entry.
type CIE struct {
	Offset       int
	Version      uint8
	Augmentation string
	CodeAlign    uint64
	DataAlign    int64
	RAReg        uint64
	FDEEncoding  byte // DW_EH_PE_* of FDE addresses (.eh_frame); absptr otherwise
	Signal       bool // "S": the FDE's function is a signal trampoline
	// LSDAEncoding is the DW_EH_PE_* of the FDEs' LSDA pointers ("L");
	// 0xff (omit) when the CIE has none.
	LSDAEncoding  byte
	AddrSize      int
	Initial       []byte
	initialOffset int
}

// FDE is a frame description entry.
type FDE struct {
	Offset       int // byte offset of the entry (its length field)
	CIE          *CIE
	Start, End   uint64
	Instructions []byte
	instrOffset  int
	// LSDA is the address of the function's language-specific data area
	// (.gcc_except_table: its C++ call-site table), from the FDE's
	// augmentation data; 0 when it has none.
	LSDA uint64
}

// Table is a parsed CFI section.
type Table struct {
	Order   binary.ByteOrder
	EHFrame bool
	FDEs    []*FDE // sorted by Start
	CIEs    int
}

// Parse reads a .eh_frame (ehFrame) or .debug_frame section whose first
// byte is at address addr. Malformed entries end the parse with a
// *FormatError; the FDEs read before it are returned with it.
func Parse(data []byte, addr uint64, order binary.ByteOrder, ehFrame bool) (*Table, error) {
	t := &Table{Order: order, EHFrame: ehFrame}
	cies := map[int]*CIE{}
	var err error
	for off := 0; off < len(data); {
		var next int
		next, err = t.entry(data, addr, off, cies)
		if err != nil || next < 0 {
			break
		}
		off = next
	}
	sort.SliceStable(t.FDEs, func(i, j int) bool { return t.FDEs[i].Start < t.FDEs[j].Start })
	t.CIEs = len(cies)
	return t, err
}

// entry reads the entry at off; next is -1 at a .eh_frame terminator.
func (t *Table) entry(data []byte, addr uint64, off int, cies map[int]*CIE) (next int, err error) {
	c := &cursor{b: data, o: t.Order, off: off}
	length := uint64(c.u32())
	dwarf64 := false
	if length == 0xffffffff {
		length, dwarf64 = c.u64(), true
	}
	if c.err != nil {
		return 0, c.fail(ErrTruncated, "entry length")
	}
	if length == 0 {
		if t.EHFrame {
			return -1, nil // zero terminator
		}
		return c.off, nil
	}
	end := c.off + int(length)
	if length > uint64(len(data)) || end > len(data) || end < c.off {
		return 0, &FormatError{off, fmt.Sprintf("entry length %d runs past the section end (%d bytes)", length, len(data)), ErrTruncated}
	}
	idOff := c.off
	var id uint64
	if dwarf64 {
		id = c.u64()
	} else {
		id = uint64(c.u32())
	}
	c.b = data[:end]
	isCIE := (t.EHFrame && id == 0) || (!t.EHFrame && (id == 0xffffffff || (dwarf64 && id == ^uint64(0))))
	if isCIE {
		cie, err := t.cie(c, addr, off)
		if err != nil {
			return 0, err
		}
		cies[off] = cie
		return end, nil
	}
	cieOff := int(id)
	if t.EHFrame {
		cieOff = idOff - int(id)
	}
	cie := cies[cieOff]
	if cie == nil {
		// A CIE after its FDE (allowed in .debug_frame).
		if cieOff < 0 || cieOff >= len(data) {
			return 0, &FormatError{idOff, fmt.Sprintf("CIE pointer to offset %d outside the section", cieOff), ErrBadCIE}
		}
		if _, err := t.entry(data, addr, cieOff, cies); err != nil {
			return 0, err
		}
		if cie = cies[cieOff]; cie == nil {
			return 0, &FormatError{idOff, fmt.Sprintf("CIE pointer to offset %d, which is no CIE", cieOff), ErrBadCIE}
		}
	}
	f := &FDE{Offset: off, CIE: cie}
	enc := cie.FDEEncoding
	start := c.pointer(enc, addr)
	size := c.pointer(enc&0x0f, addr) // the range: same format, no application
	if c.err != nil {
		return 0, c.fail(c.err, "FDE address range")
	}
	if start == 0 && size == 0 {
		return end, nil // a discarded FDE (its function was removed)
	}
	f.Start, f.End = start, start+size
	if len(cie.Augmentation) > 0 && cie.Augmentation[0] == 'z' {
		n := c.uleb()
		augEnd := c.off + int(n)
		if c.err == nil && cie.LSDAEncoding != peOmit && n > 0 {
			if f.LSDA = c.pointer(cie.LSDAEncoding, addr); c.err != nil {
				return 0, c.fail(c.err, "FDE LSDA pointer")
			}
			if c.off > augEnd {
				return 0, &FormatError{c.off, fmt.Sprintf("FDE LSDA pointer runs past the %d bytes of augmentation data", n), ErrTruncated}
			}
			c.off = augEnd
		} else {
			c.skip(int(n))
		}
	}
	if c.err != nil {
		return 0, c.fail(ErrTruncated, "FDE augmentation data")
	}
	f.instrOffset = c.off
	f.Instructions = data[c.off:end]
	t.FDEs = append(t.FDEs, f)
	return end, nil
}

func (t *Table) cie(c *cursor, addr uint64, off int) (*CIE, error) {
	cie := &CIE{Offset: off, AddrSize: 8, LSDAEncoding: peOmit}
	cie.Version = c.u8()
	if cie.Version != 1 && cie.Version != 3 && cie.Version != 4 {
		return nil, &FormatError{c.off - 1, fmt.Sprintf("CIE version %d", cie.Version), ErrBadCIE}
	}
	for {
		b := c.u8()
		if c.err != nil {
			return nil, c.fail(ErrTruncated, "CIE augmentation string")
		}
		if b == 0 {
			break
		}
		cie.Augmentation += string(rune(b))
	}
	if cie.Version == 4 {
		cie.AddrSize = int(c.u8())
		c.u8() // segment selector size
	}
	if len(cie.Augmentation) >= 2 && cie.Augmentation[:2] == "eh" {
		c.skip(cie.AddrSize)
	}
	cie.CodeAlign = c.uleb()
	cie.DataAlign = c.sleb()
	if cie.Version == 1 {
		cie.RAReg = uint64(c.u8())
	} else {
		cie.RAReg = c.uleb()
	}
	if !t.EHFrame {
		cie.FDEEncoding = peAbsptr
		if cie.AddrSize == 4 {
			cie.FDEEncoding = peUdata4
		}
	}
	if len(cie.Augmentation) > 0 && cie.Augmentation[0] == 'z' {
		n := c.uleb()
		augEnd := c.off + int(n)
		for _, a := range cie.Augmentation[1:] {
			switch a {
			case 'R':
				cie.FDEEncoding = c.u8()
			case 'L':
				cie.LSDAEncoding = c.u8()
			case 'P':
				c.pointer(c.u8(), addr)
			case 'S':
				cie.Signal = true
			case 'B', 'G':
			default:
				// Unknown: the augmentation length lets us skip the rest.
			}
		}
		if c.err == nil && augEnd >= c.off && augEnd <= len(c.b) {
			c.off = augEnd
		}
	}
	if c.err != nil {
		return nil, c.fail(c.err, "CIE fields")
	}
	cie.initialOffset = c.off
	cie.Initial = c.b[c.off:]
	return cie, nil
}

// Find returns the FDE covering pc, or nil.
func (t *Table) Find(pc uint64) *FDE {
	i := sort.Search(len(t.FDEs), func(i int) bool { return t.FDEs[i].Start > pc }) - 1
	for ; i >= 0; i-- {
		f := t.FDEs[i]
		if pc < f.End {
			return f
		}
		if i > 0 && t.FDEs[i-1].End <= f.Start {
			break
		}
	}
	return nil
}

// Pointer encodings (DW_EH_PE_*).
const (
	peAbsptr  = 0x00
	peUleb128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePCRel   = 0x10
	peDataRel = 0x30
	peOmit    = 0xff
)

type cursor struct {
	b   []byte
	o   binary.ByteOrder
	off int
	err error
}

func (c *cursor) need(n int) bool {
	if c.err != nil {
		return false
	}
	if n < 0 || c.off+n > len(c.b) {
		c.err = ErrTruncated
		return false
	}
	return true
}

func (c *cursor) fail(err error, what string) error {
	return &FormatError{c.off, what, err}
}

func (c *cursor) skip(n int) {
	if c.need(n) {
		c.off += n
	}
}

func (c *cursor) u8() byte {
	if !c.need(1) {
		return 0
	}
	c.off++
	return c.b[c.off-1]
}

func (c *cursor) u16() uint16 {
	if !c.need(2) {
		return 0
	}
	c.off += 2
	return c.o.Uint16(c.b[c.off-2:])
}

func (c *cursor) u32() uint32 {
	if !c.need(4) {
		return 0
	}
	c.off += 4
	return c.o.Uint32(c.b[c.off-4:])
}

func (c *cursor) u64() uint64 {
	if !c.need(8) {
		return 0
	}
	c.off += 8
	return c.o.Uint64(c.b[c.off-8:])
}

func (c *cursor) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (c *cursor) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		b := c.u8()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// pointer reads a DW_EH_PE-encoded value; addr is the section's address
// (for pcrel).
func (c *cursor) pointer(enc byte, addr uint64) uint64 {
	if enc == peOmit {
		return 0
	}
	here := addr + uint64(c.off)
	var v uint64
	switch enc & 0x0f {
	case peAbsptr, peUdata8, peSdata8:
		v = c.u64()
	case peUleb128:
		v = c.uleb()
	case peSleb128:
		v = uint64(c.sleb())
	case peUdata2:
		v = uint64(c.u16())
	case peSdata2:
		v = uint64(int64(int16(c.u16())))
	case peUdata4:
		v = uint64(c.u32())
	case peSdata4:
		v = uint64(int64(int32(c.u32())))
	default:
		if c.err == nil {
			c.err = fmt.Errorf("%w 0x%02x", ErrBadEncoding, enc)
		}
		return 0
	}
	switch enc & 0x70 {
	case 0:
	case pePCRel:
		v += here
	default:
		if c.err == nil {
			c.err = fmt.Errorf("%w 0x%02x (application 0x%02x)", ErrBadEncoding, enc, enc&0x70)
		}
	}
	return v
}
