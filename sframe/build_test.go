package sframe

// Tables for tests that start from rows rather than bytes. Every Table is
// decoded from bytes, so a test built this way exercises Decode and the
// lazy row decoding too: Encode writes versions 2 and 3; version 1 is a
// version 2 section with the FDEs cut to 17 bytes; flags Encode does not
// write (FRAME_POINTER, no PCREL in version 3) are patched in afterwards.

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// sectionBytes writes fdes as one section with header h's version, ABI,
// fixed offsets and flags, in byte order o (nil: the ABI's). FDEs whose
// rows a DEFAULT FDE cannot hold become FLEX (version 3), as
// ChooseFDEType says.
func buildSection(tb testing.TB, h Header, o binary.ByteOrder, fdes ...FDE) []byte {
	tb.Helper()
	if o == nil {
		o = h.ABI.ByteOrder()
	}
	v := h.Version
	if v == Version1 {
		v = Version2
	}
	opt := EncodeOptions{Version: v, ABI: h.ABI, Order: o, CFAFixedFP: h.CFAFixedFP, CFAFixedRA: h.CFAFixedRA,
		AuxHeader: h.AuxHeader, Unsorted: h.Flags&FlagFDESorted == 0}
	fdes = append([]FDE(nil), fdes...)
	for i := range fdes {
		if fdes[i].Type == FDETypeDefault {
			fdes[i].Type = ChooseFDEType(&fdes[i], opt)
		}
	}
	b, err := Encode(fdes, opt)
	if err != nil {
		tb.Fatalf("building a test section: %v", err)
	}
	if h.Version == Version1 {
		b = v2ToV1(b, o)
	}
	return setFlags(b, o, h.Flags)
}

// v2ToV1 rewrites a version 2 section without PCREL and auxiliary header
// as version 1: the same fields, without rep_size and padding.
func v2ToV1(b []byte, o binary.ByteOrder) []byte {
	n := int(o.Uint32(b[8:]))
	out := append([]byte(nil), b[:HeaderSize]...)
	out[2] = byte(Version1)
	o.PutUint32(out[24:], o.Uint32(b[24:])-uint32(3*n))
	for i := 0; i < n; i++ {
		at := HeaderSize + i*fdeSizeV2
		out = append(out, b[at:at+fdeSizeV1]...)
	}
	return append(out, b[HeaderSize+n*fdeSizeV2:]...)
}

// setFlags sets a one-section buffer's flags, moving the function start
// fields to the other anchor when FUNC_START_PCREL changes.
func setFlags(b []byte, o binary.ByteOrder, flags Flags) []byte {
	old := Flags(b[3])
	b[3] = byte(flags)
	if (old^flags)&FlagFuncStartPCRel == 0 {
		return b
	}
	n := int(o.Uint32(b[8:]))
	fdes := HeaderSize + int(b[7]) + int(o.Uint32(b[20:]))
	size := map[Version]int{Version1: fdeSizeV1, Version2: fdeSizeV2, Version3: fdeSizeV3}[Version(b[2])]
	for i := 0; i < n; i++ {
		at := fdes + i*size
		delta := int64(at) // PCREL values count from the field at offset at
		if flags&FlagFuncStartPCRel != 0 {
			delta = -delta
		}
		if size == fdeSizeV3 {
			o.PutUint64(b[at:], uint64(int64(o.Uint64(b[at:]))+delta))
		} else {
			o.PutUint32(b[at:], uint32(int32(o.Uint32(b[at:]))+int32(delta)))
		}
	}
	return b
}

// tableOfHeader builds a one-section Table of header h (base 0) from
// hand-written FDEs, in the ABI's byte order.
func tableOfHeader(tb testing.TB, h Header, fdes ...FDE) *Table {
	tb.Helper()
	tab, err := Decode(buildSection(tb, h, nil, fdes...), 0)
	if err != nil {
		tb.Fatalf("decoding a test section: %v", err)
	}
	return tab
}

// unwTable builds a version 3 table of one ABI with the header GNU as
// writes.
func unwTable(tb testing.TB, abi ABI, fdes ...FDE) *Table {
	tb.Helper()
	h := Header{Version: Version3, ABI: abi, Flags: FlagFDESorted | FlagFuncStartPCRel}
	h.CFAFixedFP, h.CFAFixedRA = DefaultFixedOffsets(abi)
	return tableOfHeader(tb, h, fdes...)
}

// fdesOf returns a section's FDEs with their rows, failing the test on a
// malformed FRE.
func fdesOf(tb testing.TB, s *Section) []FDE {
	tb.Helper()
	fdes, err := s.FDEs()
	if err != nil {
		tb.Fatalf("section at %d: %v", s.Offset, err)
	}
	return fdes
}

// finding is one Check result a test expects: the rule and the offset.
type finding struct {
	err error
	off int
}

// foreignOrder is the byte-order finding a section at off gets when a test
// writes it in order o, not its ABI's.
func foreignOrder(abi ABI, o binary.ByteOrder, off int) []finding {
	if o == abi.ByteOrder() {
		return nil
	}
	return []finding{{ErrBadByteOrder, off}}
}

// checkFindings asserts that errs are exactly the findings want, in any
// order, each a *FormatError.
func checkFindings(t *testing.T, where string, errs []error, want ...finding) {
	t.Helper()
	left := append([]finding(nil), want...)
	var extra []error
	for _, e := range errs {
		var fe *FormatError
		if !errors.As(e, &fe) {
			t.Errorf("%s: %v (%T) is not a *FormatError", where, e, e)
			continue
		}
		k := slices.IndexFunc(left, func(w finding) bool { return fe.Err == w.err && fe.Off == w.off })
		if k < 0 {
			extra = append(extra, e)
			continue
		}
		left = slices.Delete(left, k, k+1)
	}
	for _, e := range extra {
		t.Errorf("%s: Check reports %v, not expected", where, e)
	}
	for _, w := range left {
		t.Errorf("%s: Check does not report %v at offset %d (got %v)", where, w.err, w.off, errs)
	}
}
