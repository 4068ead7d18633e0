package difffuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
)

// Mutate returns a mutant of sec (an SFrame buffer at address base) and
// what was changed. Most mutations know the format: they change one field
// of the header, of an FDE, of a v3 attribute or of an FRE (as the
// classifier's layout finds them) to a boundary value or a random one;
// the rest change bytes, truncate or extend the buffer. The same rnd
// state gives the same mutant.
func Mutate(sec []byte, base uint64, rnd *rand.Rand) ([]byte, string) {
	out := bytes.Clone(sec)
	l := readLayout(out, base)
	if len(l.sections) == 0 || rnd.Intn(8) == 0 {
		return bytesMutation(out, rnd)
	}
	s := l.sections[rnd.Intn(len(l.sections))]
	switch k := rnd.Intn(10); {
	case k < 3:
		return headerMutation(out, s, rnd)
	case k < 6 && len(s.fdes) > 0:
		return fdeMutation(out, s, s.fdes[rnd.Intn(len(s.fdes))], rnd)
	default:
		var fres []rawFRE
		for _, f := range s.fdes {
			fres = append(fres, f.fres...)
		}
		if len(fres) == 0 {
			return headerMutation(out, s, rnd)
		}
		return freMutation(out, s, fres[rnd.Intn(len(fres))], rnd)
	}
}

// boundary values for a field of n bytes.
func boundary(old uint64, n int, rnd *rand.Rand) uint64 {
	mask := uint64(1)<<(8*n) - 1
	if n == 8 {
		mask = ^uint64(0)
	}
	vals := []uint64{0, 1, mask, mask >> 1, mask>>1 + 1, old + 1, old - 1, old + uint64(1+rnd.Intn(16)), old - uint64(1+rnd.Intn(16)),
		old * 2, old + 0x10000, old ^ 1<<uint(rnd.Intn(8*n)), rnd.Uint64()}
	if n >= 4 {
		vals = append(vals, 1<<28, 1<<31, old+1<<32)
	}
	return vals[rnd.Intn(len(vals))] & mask
}

func put(out []byte, o binary.ByteOrder, off, n int, v uint64) {
	switch n {
	case 1:
		out[off] = byte(v)
	case 2:
		o.PutUint16(out[off:], uint16(v))
	case 4:
		o.PutUint32(out[off:], uint32(v))
	case 8:
		o.PutUint64(out[off:], v)
	}
}

func get(b []byte, o binary.ByteOrder, off, n int) uint64 {
	switch n {
	case 1:
		return uint64(b[off])
	case 2:
		return uint64(o.Uint16(b[off:]))
	case 4:
		return uint64(o.Uint32(b[off:]))
	}
	return o.Uint64(b[off:])
}

// set changes the n-byte field at off to a boundary value.
func set(out []byte, o binary.ByteOrder, off, n int, name string, rnd *rand.Rand) string {
	if off < 0 || off+n > len(out) {
		return "nothing (" + name + " is outside the buffer)"
	}
	old := get(out, o, off, n)
	v := boundary(old, n, rnd)
	put(out, o, off, n, v)
	return fmt.Sprintf("%s at byte %d: %#x -> %#x", name, off, old, v)
}

func headerMutation(out []byte, s *rawSection, rnd *rand.Rand) ([]byte, string) {
	o, h := s.order, s.off
	fields := []struct {
		name    string
		off, n  int
		choices []uint64
	}{
		{"version", 2, 1, []uint64{1, 2, 3, 4, 0}},
		{"flags", 3, 1, []uint64{0, 1, 2, 4, 5, 7, 8, 0x80}},
		{"abi", 4, 1, []uint64{0, 1, 2, 3, 4, 5}},
		{"cfa_fixed_fp_offset", 5, 1, []uint64{0, 0xf8, 0xf0, 0x10, 0x80}},
		{"cfa_fixed_ra_offset", 6, 1, []uint64{0, 0xf8, 0xf0, 0x08, 0x80}},
		{"auxhdr_len", 7, 1, []uint64{0, 1, 4, 8, 0xff}},
		{"num_fdes", 8, 4, nil},
		{"num_fres", 12, 4, nil},
		{"fre_len", 16, 4, nil},
		{"fdeoff", 20, 4, nil},
		{"freoff", 24, 4, nil},
	}
	f := fields[rnd.Intn(len(fields))]
	if f.choices != nil && rnd.Intn(3) != 0 {
		old := out[h+f.off]
		out[h+f.off] = byte(f.choices[rnd.Intn(len(f.choices))])
		return out, fmt.Sprintf("header %s at byte %d: %#x -> %#x", f.name, h+f.off, old, out[h+f.off])
	}
	return out, "header " + set(out, o, h+f.off, f.n, f.name, rnd)
}

func fdeMutation(out []byte, s *rawSection, f *rawFDE, rnd *rand.Rand) ([]byte, string) {
	o, p := s.order, f.off
	name := fmt.Sprintf("FDE %d ", f.index)
	if s.version == 3 {
		switch rnd.Intn(8) {
		case 0, 1:
			return out, name + set(out, o, p, 8, "func_start_offset", rnd)
		case 2, 3:
			return out, name + set(out, o, p+8, 4, "func_size", rnd)
		case 4:
			return out, name + set(out, o, p+12, 4, "start_fre_off", rnd)
		}
		if !f.attrOK {
			return out, name + set(out, o, p+12, 4, "start_fre_off", rnd)
		}
		a := f.attrOff
		switch rnd.Intn(4) {
		case 0:
			return out, name + set(out, o, a, 2, "num_fres", rnd)
		case 1:
			return out, name + infoMutation(out, a+2, rnd)
		case 2:
			old := out[a+3]
			out[a+3] = []byte{0, 1, 2, 0x1f, 0x20, 0x21}[rnd.Intn(6)]
			return out, name + fmt.Sprintf("info2 at byte %d: %#x -> %#x", a+3, old, out[a+3])
		}
		return out, name + set(out, o, a+4, 1, "rep_size", rnd)
	}
	switch rnd.Intn(7) {
	case 0, 1:
		return out, name + set(out, o, p, 4, "func_start_address", rnd)
	case 2, 3:
		return out, name + set(out, o, p+4, 4, "func_size", rnd)
	case 4:
		return out, name + set(out, o, p+8, 4, "start_fre_off", rnd)
	case 5:
		return out, name + set(out, o, p+12, 4, "num_fres", rnd)
	}
	if s.version == 2 && rnd.Intn(3) == 0 {
		return out, name + set(out, o, p+17, 1, "rep_size", rnd)
	}
	return out, name + infoMutation(out, p+16, rnd)
}

// infoMutation changes an FDE info byte: FRE type, PC type, pauth key,
// signal flag.
func infoMutation(out []byte, at int, rnd *rand.Rand) string {
	old := out[at]
	switch rnd.Intn(4) {
	case 0:
		out[at] = old&^0xf | byte(rnd.Intn(16))
	case 1:
		out[at] ^= 0x10 // PC type
	case 2:
		out[at] ^= 0xe0 & byte(1<<uint(5+rnd.Intn(3)))
	default:
		out[at] = byte(rnd.Intn(256))
	}
	return fmt.Sprintf("info at byte %d: %#x -> %#x", at, old, out[at])
}

func freMutation(out []byte, s *rawSection, r rawFRE, rnd *rand.Rand) ([]byte, string) {
	o := s.order
	// The start field's width: the FRE info byte follows it.
	ssize := 1
	for _, f := range s.fdes {
		for _, g := range f.fres {
			if g.off == r.off {
				ssize = [3]int{1, 2, 4}[f.freType()]
			}
		}
	}
	info := r.off + ssize
	switch rnd.Intn(6) {
	case 0, 1:
		return out, "FRE " + set(out, o, r.off, ssize, "start_address", rnd)
	case 2, 3:
		old := out[info]
		switch rnd.Intn(5) {
		case 0:
			out[info] = old&^0x1e | byte(rnd.Intn(16))<<1 // data word count
		case 1:
			out[info] = old&^0x60 | byte(rnd.Intn(4))<<5 // data word size
		case 2:
			out[info] ^= 1 // base register
		case 3:
			out[info] ^= 0x80 // mangled RA
		default:
			out[info] = byte(rnd.Intn(256))
		}
		return out, fmt.Sprintf("FRE info at byte %d: %#x -> %#x", info, old, out[info])
	}
	if len(r.words) == 0 {
		return out, "FRE " + set(out, o, r.off, ssize, "start_address", rnd)
	}
	wsize := [4]int{1, 2, 4, 1}[r.sizeCode()]
	k := rnd.Intn(len(r.words))
	return out, fmt.Sprintf("FRE data word %d ", k) + set(out, o, info+1+k*wsize, wsize, "value", rnd)
}

func bytesMutation(out []byte, rnd *rand.Rand) ([]byte, string) {
	if len(out) == 0 {
		return append(out, 0xe2, 0xde), "empty buffer: a magic"
	}
	switch rnd.Intn(6) {
	case 0:
		n := rnd.Intn(len(out))
		return out[:n], fmt.Sprintf("truncated to %d bytes", n)
	case 1:
		n := 1 + rnd.Intn(16)
		return append(out, make([]byte, n)...), fmt.Sprintf("%d zero bytes appended", n)
	case 2:
		n := 1 + rnd.Intn(16)
		extra := make([]byte, n)
		rnd.Read(extra)
		return append(out, extra...), fmt.Sprintf("%d random bytes appended", n)
	case 3:
		// A second copy: concatenated sections.
		return append(out, out...), "section doubled"
	case 4:
		at := rnd.Intn(len(out))
		old := out[at]
		out[at] ^= 1 << uint(rnd.Intn(8))
		return out, fmt.Sprintf("bit flip at byte %d: %#x -> %#x", at, old, out[at])
	}
	at := rnd.Intn(len(out))
	old := out[at]
	out[at] = byte(rnd.Intn(256))
	return out, fmt.Sprintf("byte %d: %#x -> %#x", at, old, out[at])
}
