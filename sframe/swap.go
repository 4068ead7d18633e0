package sframe

import (
	"encoding/binary"
	"fmt"
)

// SwapByteOrder returns a copy of buf, one SFrame section or several
// concatenated ones (versions 1-3), with every multi-byte field in the other
// byte order. It walks the structure itself: header, FDEs (and version 3
// attributes), FRE start offsets and data words by their encoded sizes.
// Bytes no structure covers (the auxiliary header, gaps, zero padding
// between sections) are copied unchanged. Each section's byte order is read
// from its magic, so sections of mixed order each flip.
//
// It accepts untrusted input: every read is bounds-checked, the work is
// linear in the input size and the memory about nine times it. Malformed
// input, including FRE data of two functions that overlap without
// coinciding, yields a *FormatError with the byte offset.
func SwapByteOrder(buf []byte) ([]byte, error) {
	if len(buf) == 0 {
		return nil, &FormatError{Off: 0, Err: ErrTruncated, Msg: "empty buffer"}
	}
	s := swapper{src: buf, dst: append([]byte(nil), buf...)}
	off := 0
	for off < len(buf) {
		end, err := s.section(off)
		if err != nil {
			return nil, err
		}
		off = end
		// Zero padding may align the next section; trailing zeros end
		// the buffer.
		for off < len(buf) && buf[off] == 0 {
			off++
		}
		if off < len(buf) && end != off && !s.magicAt(off) {
			return nil, &FormatError{Off: off, Err: ErrBadMagic, Msg: "non-zero bytes after a section's padding are not a section"}
		}
	}
	return s.dst, nil
}

// swapper reads fields from src in one order and writes them to dst in
// the other. Reading from the untouched source makes overlapping
// structures (two FDEs sharing FREs) harmless.
type swapper struct {
	src, dst []byte
	from, to binary.ByteOrder
	// field records, for every byte of the FRE sub-sections, the field
	// (offset<<3 | size) it has been read as. FDEs may share FREs, but a
	// byte read as parts of two different fields cannot be flipped so that
	// a second swap undoes it.
	field []uint64
}

// claim records that [off, off+n) is one field, and refuses a byte that
// already belongs to another.
func (s *swapper) claim(off, n int) error {
	if s.field == nil {
		s.field = make([]uint64, len(s.src))
	}
	key := uint64(off)<<3 | uint64(n)
	for b := off; b < off+n; b++ {
		if k := s.field[b]; k != 0 && k != key {
			return &FormatError{Off: b, Err: ErrFREOutOfBounds,
				Msg: fmt.Sprintf("byte read as part of a %d-byte field at %d and of a %d-byte field at %d", n, off, k&7, k>>3)}
		}
		s.field[b] = key
	}
	return nil
}

func (s *swapper) magicAt(off int) bool {
	if off+2 > len(s.src) {
		return false
	}
	return binary.LittleEndian.Uint16(s.src[off:]) == Magic || binary.BigEndian.Uint16(s.src[off:]) == Magic
}

func (s *swapper) need(off, n int, err error, what string) error {
	if off < 0 || n < 0 || off > len(s.src) || len(s.src)-off < n {
		return &FormatError{Off: off, Err: err, Msg: fmt.Sprintf("%s needs %d bytes, %d left", what, n, max(len(s.src)-off, 0))}
	}
	return nil
}

func (s *swapper) u16(off int) uint16 { return s.from.Uint16(s.src[off:]) }
func (s *swapper) u32(off int) uint32 { return s.from.Uint32(s.src[off:]) }

func (s *swapper) flip16(off int) { s.to.PutUint16(s.dst[off:], s.from.Uint16(s.src[off:])) }
func (s *swapper) flip32(off int) { s.to.PutUint32(s.dst[off:], s.from.Uint32(s.src[off:])) }
func (s *swapper) flip64(off int) { s.to.PutUint64(s.dst[off:], s.from.Uint64(s.src[off:])) }

// flipN flips one field of 1, 2 or 4 bytes.
func (s *swapper) flipN(off, n int) {
	switch n {
	case 2:
		s.flip16(off)
	case 4:
		s.flip32(off)
	}
}

// section flips the section at off and returns its end.
func (s *swapper) section(off int) (int, error) {
	if err := s.need(off, 2, ErrTruncated, "magic"); err != nil {
		return 0, err
	}
	switch {
	case binary.LittleEndian.Uint16(s.src[off:]) == Magic:
		s.from, s.to = binary.LittleEndian, binary.BigEndian
	case binary.BigEndian.Uint16(s.src[off:]) == Magic:
		s.from, s.to = binary.BigEndian, binary.LittleEndian
	default:
		return 0, &FormatError{Off: off, Err: ErrBadMagic, Msg: fmt.Sprintf("bytes %#02x %#02x", s.src[off], s.src[off+1])}
	}
	if err := s.need(off, HeaderSize, ErrTruncated, "header"); err != nil {
		return 0, err
	}
	v := Version(s.src[off+2])
	var fdeSize int
	switch v {
	case Version1:
		fdeSize = fdeSizeV1
	case Version2:
		fdeSize = fdeSizeV2
	case Version3:
		fdeSize = fdeSizeV3
	default:
		return 0, &FormatError{Off: off + 2, Err: ErrBadVersion, Msg: fmt.Sprintf("version %d", v)}
	}
	numFDEs := s.u32(off + 8)
	numFREs := s.u32(off + 12)
	freLen := s.u32(off + 16)
	fdeOff := s.u32(off + 20)
	freOff := s.u32(off + 24)
	hdrEnd := off + HeaderSize + int(s.src[off+7])

	s.flip16(off) // magic
	for _, f := range []int{8, 12, 16, 20, 24} {
		s.flip32(off + f)
	}

	if err := s.need(hdrEnd, 0, ErrTruncated, "auxiliary header"); err != nil {
		return 0, err
	}
	fdesLen := uint64(numFDEs) * uint64(fdeSize)
	if uint64(fdeOff)+fdesLen > uint64(freOff) {
		return 0, &FormatError{Off: off + 20, Err: ErrBadSubsection,
			Msg: fmt.Sprintf("%d FDEs of %d bytes at %d run past the FRE sub-section at %d", numFDEs, fdeSize, fdeOff, freOff)}
	}
	end64 := uint64(hdrEnd) + uint64(freOff) + uint64(freLen)
	if end64 > uint64(len(s.src)) {
		return 0, &FormatError{Off: off + 16, Err: ErrTruncated,
			Msg: fmt.Sprintf("FRE sub-section of %d bytes at %d runs past the buffer's %d bytes", freLen, uint64(hdrEnd)+uint64(freOff), len(s.src))}
	}
	fdeStart := hdrEnd + int(fdeOff)
	freStart := hdrEnd + int(freOff)
	end := int(end64)

	var total uint64
	for i := 0; i < int(numFDEs); i++ {
		at := fdeStart + i*fdeSize
		var (
			startFRE  uint32
			n         uint32
			info      byte
			freBegins int // where the FREs start, relative to freStart
		)
		if v == Version3 {
			s.flip64(at)
			s.flip32(at + 8)
			s.flip32(at + 12)
			startFRE = s.u32(at + 12)
			if uint64(startFRE)+fdeAttrSizeV3 > uint64(freLen) {
				return 0, &FormatError{Off: at + 12, Err: ErrFDEOutOfBounds,
					Msg: fmt.Sprintf("FDE %d's attribute at FRE offset %d is outside the %d-byte FRE sub-section", i, startFRE, freLen)}
			}
			a := freStart + int(startFRE)
			for _, f := range [][2]int{{a, 2}, {a + 2, 1}, {a + 3, 1}, {a + 4, 1}} {
				if err := s.claim(f[0], f[1]); err != nil {
					return 0, err
				}
			}
			s.flip16(a)
			n = uint32(s.u16(a))
			info = s.src[a+2]
			freBegins = int(startFRE) + fdeAttrSizeV3
		} else {
			s.flip32(at)
			s.flip32(at + 4)
			s.flip32(at + 8)
			s.flip32(at + 12)
			if v == Version2 {
				s.flip16(at + 18)
			}
			startFRE = s.u32(at + 8)
			n = s.u32(at + 12)
			info = s.src[at+16]
			freBegins = int(startFRE)
			if uint64(startFRE) > uint64(freLen) {
				return 0, &FormatError{Off: at + 8, Err: ErrFDEOutOfBounds,
					Msg: fmt.Sprintf("FDE %d's FREs at FRE offset %d are outside the %d-byte FRE sub-section", i, startFRE, freLen)}
			}
		}
		total += uint64(n)
		// Every FRE takes at least two bytes: more FREs than that cannot
		// fit, and checking it here bounds the work on FDEs that share FREs.
		if total > uint64(numFREs) || total > uint64(freLen)/2 {
			return 0, &FormatError{Off: at, Err: ErrCountMismatch,
				Msg: fmt.Sprintf("FDEs 0-%d claim %d FREs; the header counts %d in %d bytes", i, total, numFREs, freLen)}
		}
		if err := s.fres(freStart, int(freLen), freBegins, n, FREType(info&0xf), i); err != nil {
			return 0, err
		}
	}
	if total != uint64(numFREs) {
		return 0, &FormatError{Off: off + 12, Err: ErrCountMismatch,
			Msg: fmt.Sprintf("header counts %d FREs, the FDEs %d", numFREs, total)}
	}
	return end, nil
}

// fres flips n FREs of one function, starting at rel bytes into the FRE
// sub-section [base, base+length).
func (s *swapper) fres(base, length, rel int, n uint32, t FREType, fde int) error {
	var addrSize int
	switch t {
	case FREAddr1:
		addrSize = 1
	case FREAddr2:
		addrSize = 2
	case FREAddr4:
		addrSize = 4
	default:
		return &FormatError{Off: base + rel, Err: ErrBadFREType, Msg: fmt.Sprintf("FDE %d has FRE type %d", fde, t)}
	}
	at := rel
	for k := uint32(0); k < n; k++ {
		if at+addrSize+1 > length {
			return &FormatError{Off: base + at, Err: ErrFREOutOfBounds,
				Msg: fmt.Sprintf("FRE %d of FDE %d runs past the FRE sub-section", k, fde)}
		}
		if err := s.claim(base+at, addrSize); err != nil {
			return err
		}
		if err := s.claim(base+at+addrSize, 1); err != nil {
			return err
		}
		s.flipN(base+at, addrSize)
		info := s.src[base+at+addrSize]
		count := int(info>>1) & 0xf
		var size int
		switch (info >> 5) & 3 {
		case 0:
			size = 1
		case 1:
			size = 2
		case 2:
			size = 4
		default:
			return &FormatError{Off: base + at + addrSize, Err: ErrBadDataWordSize,
				Msg: fmt.Sprintf("FRE %d of FDE %d has data word size code 3", k, fde)}
		}
		words := base + at + addrSize + 1
		if at+addrSize+1+count*size > length {
			return &FormatError{Off: base + at, Err: ErrFREOutOfBounds,
				Msg: fmt.Sprintf("FRE %d of FDE %d: %d data words of %d bytes run past the FRE sub-section", k, fde, count, size)}
		}
		for w := 0; w < count; w++ {
			if err := s.claim(words+w*size, size); err != nil {
				return err
			}
			s.flipN(words+w*size, size)
		}
		at += addrSize + 1 + count*size
	}
	return nil
}
