package cbf

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// vector is one case of testdata/vectors.txt.
type vector struct {
	name      string
	line      int
	data      []byte
	want      *Backtrace
	canonical bool
	errName   string
	errOff    int
}

var sentinels = map[string]error{
	"bad-version":       ErrBadVersion,
	"reserved-size":     ErrReservedSize,
	"truncated":         ErrTruncated,
	"unknown-opcode":    ErrUnknownOpcode,
	"address-overflow":  ErrAddressOverflow,
	"count-overflow":    ErrCountOverflow,
	"zero-count":        ErrZeroCount,
	"nothing-to-repeat": ErrNothingToRepeat,
	"trailing-data":     ErrTrailingData,
	"too-large":         ErrTooLarge,
}

// parseBacktrace reads "SIZE ITEM..." as described in vectors.txt.
func parseBacktrace(fields []string) (Backtrace, error) {
	var bt Backtrace
	if len(fields) == 0 {
		return bt, errors.New("no word size")
	}
	size, err := strconv.Atoi(fields[0])
	if err != nil {
		return bt, err
	}
	bt.Size = WordSize(size)
	for _, f := range fields[1:] {
		if f == "trunc" {
			bt.Truncated = true
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return bt, fmt.Errorf("item %q", f)
		}
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return bt, err
		}
		switch k {
		case "pc":
			bt.Frames = append(bt.Frames, Frame{KindPC, n})
		case "ra":
			bt.Frames = append(bt.Frames, Frame{KindRA, n})
		case "async":
			bt.Frames = append(bt.Frames, Frame{KindAsync, n})
		case "omit":
			bt.Omitted = append(bt.Omitted, Omission{At: len(bt.Frames), Count: n})
		default:
			return bt, fmt.Errorf("item %q", f)
		}
	}
	return bt, nil
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open("testdata/vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		bad := func(err error) { t.Fatalf("testdata/vectors.txt:%d: %v", ln, err) }
		if fields[0] == "case" {
			vs = append(vs, vector{name: fields[1], line: ln})
			continue
		}
		if len(vs) == 0 {
			bad(errors.New("line before the first case"))
		}
		v := &vs[len(vs)-1]
		switch fields[0] {
		case "bytes":
			v.data, err = hex.DecodeString(strings.Join(fields[1:], ""))
			if err != nil {
				bad(err)
			}
		case "want":
			bt, err := parseBacktrace(fields[1:])
			if err != nil {
				bad(err)
			}
			v.want = &bt
		case "canonical":
			v.canonical = true
		case "error":
			if len(fields) != 3 || sentinels[fields[1]] == nil {
				bad(fmt.Errorf("error line %q", line))
			}
			v.errName = fields[1]
			if v.errOff, err = strconv.Atoi(fields[2]); err != nil {
				bad(err)
			}
		default:
			bad(fmt.Errorf("unknown line %q", line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 40 {
		t.Fatalf("only %d vectors read", len(vs))
	}
	return vs
}

// equal compares backtraces treating nil and empty slices alike.
func equal(a, b Backtrace) bool {
	if a.Size != b.Size || a.Truncated != b.Truncated ||
		len(a.Frames) != len(b.Frames) || len(a.Omitted) != len(b.Omitted) {
		return false
	}
	for i := range a.Frames {
		if a.Frames[i] != b.Frames[i] {
			return false
		}
	}
	for i := range a.Omitted {
		if a.Omitted[i] != b.Omitted[i] {
			return false
		}
	}
	return true
}

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			if (v.want == nil) == (v.errName == "") {
				t.Fatalf("vectors.txt:%d: a case needs exactly one of want and error", v.line)
			}
			got, err := Decode(v.data)
			if v.errName != "" {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("Decode(% x) = %v, %v; want a *FormatError", v.data, got, err)
				}
				if !errors.Is(err, sentinels[v.errName]) || fe.Off != v.errOff {
					t.Fatalf("Decode(% x) error %q; want %v at offset %d", v.data, err, sentinels[v.errName], v.errOff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(% x): %v", v.data, err)
			}
			if !equal(got, *v.want) {
				t.Fatalf("Decode(% x)\n got %v\nwant %v", v.data, got, *v.want)
			}
			if v.canonical {
				enc, err := Encode(*v.want)
				if err != nil {
					t.Fatalf("Encode(%v): %v", *v.want, err)
				}
				if !bytes.Equal(enc, v.data) {
					t.Fatalf("Encode(%v)\n got % x\nwant % x", *v.want, enc, v.data)
				}
			}
			// A stream that ends in end/trunc can be followed by other data.
			last := v.data[len(v.data)-1]
			if last == opEnd || last == opTrunc {
				more := append(append([]byte{}, v.data...), 0xaa, 0xbb)
				pgot, n, err := DecodePrefix(more)
				if err != nil || n != len(v.data) || !equal(pgot, got) {
					t.Fatalf("DecodePrefix(% x) = %v, %d, %v; want %v, %d", more, pgot, n, err, got, len(v.data))
				}
				if _, err := Decode(more); !errors.Is(err, ErrTrailingData) {
					t.Fatalf("Decode(% x) = %v; want trailing data", more, err)
				}
			}
		})
	}
}

func TestFormatErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := Decode([]byte{0x02, 0x19, 0x10, 0x00, 0x21, 0x02})
	want := "cbf: truncated at byte offset 4 (0x4): ra instruction needs 2 value bytes, 1 remain"
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// The omit runs the format treats differently: 1, 31 and 32 inline (the
// 5-bit field holds count-1; Swift's encoder writes 32 externally), 33
// external in one byte, 1000 in two.
func TestOmitRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		count uint64
		enc   []byte // omit instruction and count bytes, by hand
	}{
		{1, []byte{0x40}},
		{31, []byte{0x5e}},
		{32, []byte{0x5f}},
		{33, []byte{0x60, 0x21}},
		{1000, []byte{0x61, 0x03, 0xe8}},
	} {
		for _, size := range []WordSize{Word16, Word32, Word64} {
			code := map[WordSize]byte{Word16: 0, Word32: 1, Word64: 2}[size]
			// ra 0x20 (18 → 28 20), the run, then end.
			bt := Backtrace{Size: size, Frames: []Frame{{KindRA, 0x20}}, Omitted: []Omission{{At: 1, Count: c.count}}}
			want := append(append([]byte{code, 0x28, 0x20}, c.enc...), 0x00)
			got, err := Encode(bt)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%v omit %d: Encode = % x, %v; want % x", size, c.count, got, err, want)
				continue
			}
			dec, err := Decode(want)
			if err != nil || !equal(dec, bt) {
				t.Errorf("%v omit %d: Decode(% x) = %v, %v; want %v", size, c.count, want, dec, err, bt)
			}
		}
	}
}

func TestMaxEntries(t *testing.T) {
	t.Parallel()
	// 18 10: pc 0x10, 89 ff ff: 65535 more copies, 00: end.
	bt, err := Decode([]byte{0x02, 0x18, 0x10, 0x89, 0xff, 0xff, 0x00})
	if err != nil || len(bt.Frames) != MaxEntries || bt.Frames[MaxEntries-1] != (Frame{KindPC, 0x10}) {
		t.Fatalf("Decode: %d frames, %v; want %d copies of pc 0x10", len(bt.Frames), err, MaxEntries)
	}
	enc, err := Encode(bt)
	if err != nil {
		t.Fatalf("Encode of %d frames: %v", MaxEntries, err)
	}
	// Encode writes no rep: 2 bytes per repeated frame (20 00 after the first).
	if len(enc) != 1+2*MaxEntries+1 {
		t.Fatalf("Encode of %d equal frames: %d bytes, want %d", MaxEntries, len(enc), 2+2*MaxEntries)
	}
	bt.Omitted = []Omission{{At: 0, Count: 1}}
	if _, err := Encode(bt); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Encode of %d entries: %v, want ErrTooLarge", MaxEntries+1, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	t.Parallel()
	pc := func(a uint64) Frame { return Frame{KindPC, a} }
	for _, c := range []struct {
		name string
		bt   Backtrace
		want error
	}{
		{"size 0", Backtrace{}, ErrReservedSize},
		{"size 48", Backtrace{Size: 48}, ErrReservedSize},
		{"size 8", Backtrace{Size: 8, Frames: []Frame{pc(1)}}, ErrReservedSize},
		{"kind 0", Backtrace{Size: Word64, Frames: []Frame{{Addr: 0x10}}}, ErrBadKind},
		{"kind 4", Backtrace{Size: Word64, Frames: []Frame{pc(1), {Kind: 4, Addr: 0x10}}}, ErrBadKind},
		{"16-bit address 0x10000", Backtrace{Size: Word16, Frames: []Frame{pc(0x10000)}}, ErrAddressOverflow},
		{"32-bit address 2^32", Backtrace{Size: Word32, Frames: []Frame{pc(1), pc(1 << 32)}}, ErrAddressOverflow},
		{"16-bit omit 65536", Backtrace{Size: Word16, Omitted: []Omission{{0, 1 << 16}}}, ErrCountOverflow},
		{"32-bit omit 2^32", Backtrace{Size: Word32, Omitted: []Omission{{0, 1 << 32}}}, ErrCountOverflow},
		{"omit 0", Backtrace{Size: Word64, Omitted: []Omission{{0, 0}}}, ErrZeroCount},
		{"omit decreasing", Backtrace{Size: Word64, Frames: []Frame{pc(1), pc(2)},
			Omitted: []Omission{{2, 1}, {1, 1}}}, ErrBadOrder},
		{"omit past the end", Backtrace{Size: Word64, Frames: []Frame{pc(1)},
			Omitted: []Omission{{2, 1}}}, ErrBadOrder},
		{"omit negative", Backtrace{Size: Word64, Omitted: []Omission{{-1, 1}}}, ErrBadOrder},
		{"too many frames", Backtrace{Size: Word64, Frames: make([]Frame, MaxEntries+1)}, ErrTooLarge},
	} {
		got, err := Encode(c.bt)
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: Encode = % x, %v; want %v", c.name, got, err, c.want)
		}
	}
	// AppendEncode leaves dst as it was on error.
	dst := []byte{0xaa}
	out, err := AppendEncode(dst, Backtrace{Size: Word16, Frames: []Frame{pc(1), pc(0x10000)}})
	if err == nil || !bytes.Equal(out, []byte{0xaa}) {
		t.Errorf("AppendEncode on error = % x, %v; want aa and an error", out, err)
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	bt := Backtrace{Size: Word32, Frames: []Frame{{KindPC, 0x10}, {KindAsync, 0x20}},
		Omitted: []Omission{{0, 2}, {2, 7}}, Truncated: true}
	want := "32-bit: [2 omitted] pc 0x10 async 0x20 [7 omitted] [truncated]"
	if got := bt.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}
