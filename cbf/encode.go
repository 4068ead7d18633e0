package cbf

import (
	"fmt"
	"math/bits"
)

// Encode writes bt as CBF version 0: the info byte, one instruction per frame
// and per omitted run in stream order, then "end", or "trunc" when
// bt.Truncated is set.
//
// Each address is written absolute or relative to the previous address,
// whichever takes fewer bytes, a tie going to relative, as Swift's encoder
// does. The first address is always written absolute: the document requires
// it, and since the previous address starts at 0 its delta has the same
// length anyway. Encode never writes "rep" (see the package documentation).
func Encode(bt Backtrace) ([]byte, error) {
	out, err := AppendEncode(make([]byte, 0, encodedSizeHint(bt)), bt)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendEncode is Encode appending to dst. On error it returns dst
// unchanged.
func AppendEncode(dst []byte, bt Backtrace) ([]byte, error) {
	code, ok := bt.Size.sizeCode()
	if !ok {
		return dst, fmt.Errorf("%w: word size %d is not 16, 32 or 64", ErrReservedSize, uint8(bt.Size))
	}
	if n := len(bt.Frames) + len(bt.Omitted); n > MaxEntries {
		return dst, fmt.Errorf("%w: %d frames and %d omitted runs", ErrTooLarge, len(bt.Frames), len(bt.Omitted))
	}
	mask := bt.Size.mask()
	start := len(dst)
	out := append(dst, Version<<2|code)

	var prev uint64
	first := true
	o := 0
	for i := 0; i <= len(bt.Frames); i++ {
		for ; o < len(bt.Omitted) && bt.Omitted[o].At == i; o++ {
			count := bt.Omitted[o].Count
			if count == 0 {
				return dst[:start], fmt.Errorf("%w: omitted run %d (before frame %d) has no frames", ErrZeroCount, o, i)
			}
			if count&^mask != 0 {
				return dst[:start], fmt.Errorf("%w: omitted run %d (before frame %d) of %d frames does not fit %v",
					ErrCountOverflow, o, i, count, bt.Size)
			}
			out = appendOmit(out, count)
		}
		if i == len(bt.Frames) {
			break
		}
		f := bt.Frames[i]
		if f.Kind < KindPC || f.Kind > KindAsync {
			return dst[:start], fmt.Errorf("%w: frame %d has kind %d", ErrBadKind, i, uint8(f.Kind))
		}
		if f.Addr&^mask != 0 {
			return dst[:start], fmt.Errorf("%w: frame %d address %#x does not fit %v", ErrAddressOverflow, i, f.Addr, bt.Size)
		}
		abs := signedLen(f.Addr, bt.Size)
		delta := (f.Addr - prev) & mask
		rel := signedLen(delta, bt.Size)
		op := byte(f.Kind) << 4
		if first || abs < rel {
			out = appendAddr(out, op|addrAbsolute, f.Addr, abs)
		} else {
			out = appendAddr(out, op, delta, rel)
		}
		prev, first = f.Addr, false
	}
	if o < len(bt.Omitted) {
		r := bt.Omitted[o]
		return dst[:start], fmt.Errorf("%w: omitted run %d is at %d; At must not decrease and must lie in [0, %d]",
			ErrBadOrder, o, r.At, len(bt.Frames))
	}
	if bt.Truncated {
		out = append(out, opTrunc)
	} else {
		out = append(out, opEnd)
	}
	return out, nil
}

// encodedSizeHint is enough for a typical backtrace whose addresses cluster.
func encodedSizeHint(bt Backtrace) int {
	return 2 + len(bt.Frames)*(1+bt.Size.bytes()) + len(bt.Omitted)*2
}

// signedLen is the fewest bytes whose big-endian value, sign-extended to the
// word, equals v (v already reduced to the word).
func signedLen(v uint64, w WordSize) int {
	shift := 64 - uint(w)
	s := int64(v<<shift) >> shift // v as a signed word
	magnitude := bits.Len64(uint64(s ^ (s >> 63)))
	return (magnitude + 1 + 7) / 8 // one more bit for the sign
}

func appendAddr(out []byte, op byte, v uint64, n int) []byte {
	out = append(out, op|byte(n-1))
	return appendBE(out, v, n)
}

func appendBE(out []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		out = append(out, byte(v>>(8*uint(i))))
	}
	return out
}

func appendOmit(out []byte, count uint64) []byte {
	if count <= omitInlineMax {
		return append(out, opOmit|byte(count-1))
	}
	n := (bits.Len64(count) + 7) / 8
	out = append(out, opOmit|omitExternal|byte(n-1))
	return appendBE(out, count, n)
}
