package cbf

import (
	"fmt"
	"slices"
)

// Decode reads one CBF version 0 backtrace that fills b exactly. The stream
// may stop without an "end" instruction at an instruction boundary: the
// document allows leaving "end" out when the length is known, so that
// counts as "end", not as "trunc". Bytes after "end" or "trunc" are an
// error (ErrTrailingData); use DecodePrefix to read a backtrace followed by
// other data.
func Decode(b []byte) (Backtrace, error) {
	bt, n, err := DecodePrefix(b)
	if err != nil {
		return Backtrace{}, err
	}
	if n != len(b) {
		return Backtrace{}, &FormatError{Off: n, Err: ErrTrailingData,
			Msg: fmt.Sprintf("%d more bytes follow the backtrace", len(b)-n)}
	}
	return bt, nil
}

// DecodePrefix reads one backtrace from the start of b and returns the
// number of bytes it used: up to and including "end" or "trunc", or all of b
// when neither occurs.
func DecodePrefix(b []byte) (Backtrace, int, error) {
	d := decoder{buf: b}
	bt, err := d.run()
	if err != nil {
		return Backtrace{}, 0, err
	}
	return bt, d.off, nil
}

// entry kinds for "rep", which repeats whatever the previous instruction
// produced, a frame or an omitted run.
const (
	lastNone = iota
	lastFrame
	lastOmit
)

type decoder struct {
	buf []byte
	off int // next unread byte
	bt  Backtrace
}

func (d *decoder) fail(off int, err error, format string, args ...any) error {
	return &FormatError{Off: off, Err: err, Msg: fmt.Sprintf(format, args...)}
}

// value reads n big-endian bytes after the instruction at op.
func (d *decoder) value(op int, n int) (uint64, bool, error) {
	if len(d.buf)-d.off < n {
		return 0, false, d.fail(op, ErrTruncated, "%s instruction needs %d value bytes, %d remain",
			mnemonic(d.buf[op]), n, len(d.buf)-d.off)
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, b[0]&0x80 != 0, nil
}

func (d *decoder) run() (Backtrace, error) {
	if len(d.buf) == 0 {
		return Backtrace{}, d.fail(0, ErrTruncated, "no info byte")
	}
	info := d.buf[0]
	d.off = 1
	if v := info >> 2; v != Version {
		return Backtrace{}, d.fail(0, ErrBadVersion, "info byte %#02x has version %d, want %d", info, v, Version)
	}
	switch info & 3 {
	case 0:
		d.bt.Size = Word16
	case 1:
		d.bt.Size = Word32
	case 2:
		d.bt.Size = Word64
	default:
		return Backtrace{}, d.fail(0, ErrReservedSize, "info byte %#02x has size field 3", info)
	}
	w := d.bt.Size
	mask, wbytes := w.mask(), w.bytes()

	// Every frame takes at least two bytes, so this never over-allocates
	// by more than the input justifies.
	d.bt.Frames = make([]Frame, 0, min((len(d.buf)-1)/2, MaxEntries))

	var prev uint64
	last := lastNone
	for d.off < len(d.buf) {
		at := d.off
		op := d.buf[at]
		d.off++
		switch {
		case op == opEnd:
			return d.bt, nil
		case op == opTrunc:
			d.bt.Truncated = true
			return d.bt, nil
		case op >= 0x10 && op <= 0x3f:
			kind := Kind(op >> 4)
			n := int(op&addrLenMask) + 1
			if n > wbytes {
				return Backtrace{}, d.fail(at, ErrAddressOverflow, "%v instruction %#02x has %d value bytes, %v", kind, op, n, w)
			}
			v, neg, err := d.value(at, n)
			if err != nil {
				return Backtrace{}, err
			}
			if neg {
				v |= ^uint64(0) << (8 * uint(n)) // sign-extend (a no-op for 8 bytes)
			}
			// A relative first address counts from 0, as in Swift's
			// decoder; Swift's encoder writes such streams.
			if op&addrAbsolute != 0 {
				prev = v & mask
			} else {
				prev = (prev + v) & mask
			}
			if err := d.room(at, 1); err != nil {
				return Backtrace{}, err
			}
			d.bt.Frames = append(d.bt.Frames, Frame{Kind: kind, Addr: prev})
			last = lastFrame
		case op >= opOmit && op <= 0x7f:
			count := uint64(op&omitLenMask) + 1
			if op&omitExternal != 0 {
				n := int(count)
				if n > wbytes {
					return Backtrace{}, d.fail(at, ErrCountOverflow, "omit instruction %#02x has %d count bytes, %v", op, n, w)
				}
				var err error
				if count, _, err = d.value(at, n); err != nil {
					return Backtrace{}, err
				}
				if count == 0 {
					return Backtrace{}, d.fail(at, ErrZeroCount, "omit instruction with a count of 0 frames")
				}
			}
			if err := d.room(at, 1); err != nil {
				return Backtrace{}, err
			}
			d.bt.Omitted = append(d.bt.Omitted, Omission{At: len(d.bt.Frames), Count: count})
			last = lastOmit
		case op >= opRep && op <= 0x8f:
			if last == lastNone {
				return Backtrace{}, d.fail(at, ErrNothingToRepeat, "rep instruction %#02x before any frame or omit", op)
			}
			times := uint64(op&repLenMask) + 1
			if op&repExternal != 0 {
				// Swift writes the count in as many bytes as it needs,
				// whatever the word size, so no word-size limit here.
				var err error
				if times, _, err = d.value(at, int(times)); err != nil {
					return Backtrace{}, err
				}
				if times == 0 {
					return Backtrace{}, d.fail(at, ErrZeroCount, "rep instruction with a count of 0")
				}
			}
			if err := d.room(at, times); err != nil {
				return Backtrace{}, err
			}
			switch last {
			case lastFrame:
				f := d.bt.Frames[len(d.bt.Frames)-1]
				d.bt.Frames = slices.Grow(d.bt.Frames, int(times))
				for range times {
					d.bt.Frames = append(d.bt.Frames, f)
				}
			case lastOmit:
				r := d.bt.Omitted[len(d.bt.Omitted)-1]
				d.bt.Omitted = slices.Grow(d.bt.Omitted, int(times))
				for range times {
					d.bt.Omitted = append(d.bt.Omitted, r)
				}
			}
		default:
			return Backtrace{}, d.fail(at, ErrUnknownOpcode, "opcode %#02x is reserved", op)
		}
	}
	return d.bt, nil
}

// room checks that n more entries keep the backtrace within MaxEntries.
func (d *decoder) room(at int, n uint64) error {
	have := uint64(len(d.bt.Frames) + len(d.bt.Omitted))
	if n > MaxEntries || have+n > MaxEntries {
		return d.fail(at, ErrTooLarge, "%d entries decoded, %d more would pass %d", have, n, MaxEntries)
	}
	return nil
}

// mnemonic names the instruction an opcode starts, for error messages.
func mnemonic(op byte) string {
	switch {
	case op >= 0x10 && op <= 0x3f:
		return Kind(op >> 4).String()
	case op >= opOmit && op <= 0x7f:
		return "omit"
	case op >= opRep && op <= 0x8f:
		return "rep"
	}
	return fmt.Sprintf("%#02x", op)
}
