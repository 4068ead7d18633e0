package dumper

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
)

// Table makes the listing's rows look-up-able: it encodes them (Encode)
// and decodes that with sframe.Decode, so that sframe's FindRow and
// Unwinder walk exactly the rows the dumper printed.
func (l *Listing) Table(base uint64) (*sframe.Table, error) {
	sec, err := l.Encode(base)
	if err != nil {
		return nil, err
	}
	t, err := sframe.Decode(sec, base)
	if err != nil {
		return nil, fmt.Errorf("%w: the rows encode to a section that does not decode: %v", ErrNotRepresentable, err)
	}
	return t, nil
}

// Encode writes the listing's rows with sframe.Encode as a section of the
// listing's version, for address base, in the byte order of its ABI, with
// the listing's fixed offsets and, where the version has them,
// PC-relative function starts.
//
// Version 1, which sframe.Encode does not write, is encoded as version 2
// and rewritten into the version 1 layout (17-byte FDEs without the
// repetition size; the FREs are the same), so that its PCMASK rows keep
// the version 1 lookup rule.
//
// A PCMASK function needs its repetition size, which GNU dumpers do not
// print: the caller fills Func.RepSize first (from the section itself).
// Rows that no section of the version can hold (a CFA rule a default FDE
// cannot express, rows out of order) are an error wrapping
// ErrNotRepresentable.
func (l *Listing) Encode(base uint64) ([]byte, error) {
	for i := range l.Funcs {
		f := &l.Funcs[i]
		if f.PCType == sframe.PCMask && f.RepSize == 0 && l.Version != sframe.Version1 {
			return nil, fmt.Errorf("%w: func idx [%d] is PCMASK and its repetition size is unknown (the dumper does not print it)", ErrNotRepresentable, f.Index)
		}
	}
	v := l.Version
	if v == sframe.Version1 {
		v = sframe.Version2
	}
	opt := sframe.EncodeOptions{
		Version: v, ABI: l.ABI, Order: l.ABI.ByteOrder(), Base: base,
		PCRel:      l.Version != sframe.Version1,
		CFAFixedFP: l.CFAFixedFP, CFAFixedRA: l.CFAFixedRA,
	}
	fdes := l.FDEs()
	if l.Version == sframe.Version1 {
		for i := range fdes {
			if fdes[i].PCType == sframe.PCMask {
				// Version 1 has no repetition size and matches mask
				// rows by their bits; version 2 refuses 0, and the
				// field is dropped again below.
				fdes[i].RepSize = 1
			}
		}
	}
	sec, err := sframe.Encode(fdes, opt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRepresentable, err)
	}
	if l.Version == sframe.Version1 {
		sec = asVersion1(sec, opt.Order)
	}
	return sec, nil
}

// asVersion1 rewrites a version 2 section without PC-relative starts and
// without an auxiliary header into the version 1 layout.
func asVersion1(v2 []byte, order binary.ByteOrder) []byte {
	const fde1, fde2 = 17, 20
	n := int(order.Uint32(v2[8:]))
	freOff := int(order.Uint32(v2[24:]))
	out := make([]byte, 0, len(v2)-n*(fde2-fde1))
	out = append(out, v2[:sframe.HeaderSize]...)
	out[2] = byte(sframe.Version1)
	order.PutUint32(out[24:], uint32(n*fde1))
	for i := 0; i < n; i++ {
		at := sframe.HeaderSize + i*fde2
		out = append(out, v2[at:at+fde1]...)
	}
	return append(out, v2[sframe.HeaderSize+freOff:]...)
}
