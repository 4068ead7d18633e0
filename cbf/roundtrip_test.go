package cbf

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
)

// testSeed is the seed of the random tests: SFCONFORM_SEED when set, so a
// logged failure replays, else the clock.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	return testenv.Seed(t, uint64(time.Now().UnixNano()))
}

// randomBacktrace builds backtraces shaped like real ones (addresses in a few
// clusters, small deltas both ways) and like hostile ones (jumps across the
// whole word, addresses at the wrap-around point, repeats, long omitted runs).
func randomBacktrace(r *rand.Rand) Backtrace {
	sizes := []WordSize{Word16, Word32, Word64}
	bt := Backtrace{Size: sizes[r.IntN(len(sizes))], Truncated: r.IntN(4) == 0}
	mask := bt.Size.mask()
	n := r.IntN(40)
	addr := r.Uint64() & mask
	for i := 0; i < n; i++ {
		switch r.IntN(8) {
		case 0: // anywhere
			addr = r.Uint64() & mask
		case 1: // near the top or bottom of the word
			addr = (uint64(r.IntN(512)) - 256) & mask
		case 2: // same address again
		default: // a nearby return address
			shift := r.IntN(int(bt.Size) - 1)
			addr = (addr + uint64(r.Int64N(1<<shift+1)) - 1<<shift/2) & mask
		}
		bt.Frames = append(bt.Frames, Frame{Kind: Kind(1 + r.IntN(3)), Addr: addr})
	}
	at := 0
	for r.IntN(3) == 0 {
		at += r.IntN(len(bt.Frames) - at + 1)
		var count uint64
		switch r.IntN(4) {
		case 0:
			count = 1 + uint64(r.IntN(40)) // around the inline limit
		case 1:
			count = mask // the largest
		default:
			count = 1 + r.Uint64()&mask>>r.IntN(int(bt.Size))
		}
		if count == 0 || count > mask {
			count = 1
		}
		bt.Omitted = append(bt.Omitted, Omission{At: at, Count: count})
	}
	return bt
}

// minLen finds by trial the fewest big-endian bytes that sign-extend to v
// in a word of w bits.
func minLen(v uint64, w WordSize) int {
	for n := 1; n < w.bytes(); n++ {
		shift := 64 - 8*uint(n)
		if uint64(int64(v<<shift)>>shift)&w.mask() == v {
			return n
		}
	}
	return w.bytes()
}

// checkChoices walks enc next to bt and checks each instruction is the one
// the encoding rules call for: the shortest address form with ties to
// relative and the first one absolute, omit runs inline up to 32 and in the
// fewest count bytes above, no rep, and end or trunc last.
func checkChoices(t *testing.T, bt Backtrace, enc []byte) {
	t.Helper()
	w, mask := bt.Size, bt.Size.mask()
	off := 1
	var prev uint64
	o := 0
	for i := 0; i <= len(bt.Frames); i++ {
		for ; o < len(bt.Omitted) && bt.Omitted[o].At == i; o++ {
			c := bt.Omitted[o].Count
			op := enc[off]
			if c <= 32 {
				if op != 0x40|byte(c-1) {
					t.Fatalf("omit %d at byte %d: opcode %#02x, want inline %#02x\n%v\n% x", c, off, op, 0x40|byte(c-1), bt, enc)
				}
				off++
				continue
			}
			k := 1
			for c>>(8*uint(k)) != 0 {
				k++
			}
			if op != 0x60|byte(k-1) {
				t.Fatalf("omit %d at byte %d: opcode %#02x, want %d count bytes\n%v\n% x", c, off, op, k, bt, enc)
			}
			off += 1 + k
		}
		if i == len(bt.Frames) {
			break
		}
		f := bt.Frames[i]
		abs := minLen(f.Addr, w)
		rel := minLen((f.Addr-prev)&mask, w)
		want := byte(f.Kind)<<4 | byte(rel-1)
		if i == 0 || abs < rel {
			want = byte(f.Kind)<<4 | 0x08 | byte(abs-1)
		}
		if enc[off] != want {
			t.Fatalf("frame %d (%v, previous %#x) at byte %d: opcode %#02x, want %#02x (absolute %d bytes, relative %d)\n%v\n% x",
				i, f, prev, off, enc[off], want, abs, rel, bt, enc)
		}
		off += 1 + int(want&7) + 1
		prev = f.Addr
	}
	end := byte(0x00)
	if bt.Truncated {
		end = 0x01
	}
	if off != len(enc)-1 || enc[off] != end {
		t.Fatalf("stream should end with %#02x at byte %d, has %d bytes\n%v\n% x", end, off, len(enc), bt, enc)
	}
}

func TestRoundTripRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(testSeed(t), 0))
	for range 5000 {
		bt := randomBacktrace(r)
		enc, err := Encode(bt)
		if err != nil {
			t.Fatalf("Encode(%v): %v", bt, err)
		}
		checkChoices(t, bt, enc)
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(% x) of %v: %v", enc, bt, err)
		}
		if !equal(got, bt) {
			t.Fatalf("round trip of % x\n got %v\nwant %v", enc, got, bt)
		}
	}
}

// A stream written by Swift's encoder differs from ours in three ways: rep,
// a relative first address and nothing else that changes meaning. Rewrite
// our stream that way and check that it still decodes to the same frames.
func TestSwiftStyleStreamsDecode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	for range 2000 {
		bt := randomBacktrace(r)
		bt.Omitted, bt.Truncated = nil, false
		if len(bt.Frames) == 0 {
			continue
		}
		// Duplicate some frames into runs, then write runs as rep by hand.
		var frames []Frame
		var runs []int
		for _, f := range bt.Frames {
			n := 1
			if r.IntN(3) == 0 {
				n += r.IntN(300)
			}
			for range n {
				frames = append(frames, f)
			}
			runs = append(runs, n)
		}
		base, err := Encode(Backtrace{Size: bt.Size, Frames: bt.Frames})
		if err != nil {
			t.Fatal(err)
		}
		// base holds one instruction per distinct frame; insert rep after
		// each whose run is longer than 1.
		swift := []byte{base[0]}
		off := 1
		for i, n := range runs {
			op := base[off]
			size := 2 + int(op&7)
			instr := base[off : off+size]
			if i == 0 && op&0x08 != 0 && int(op&7)+1 == minLen(bt.Frames[0].Addr, bt.Size) {
				instr = append([]byte{op &^ 0x08}, instr[1:]...) // relative to 0
			}
			swift = append(swift, instr...)
			off += size
			switch extra := n - 1; {
			case extra == 0:
			case extra <= 8:
				swift = append(swift, 0x80|byte(extra-1))
			case extra <= 0xff:
				swift = append(swift, 0x88, byte(extra))
			default:
				swift = append(swift, 0x89, byte(extra>>8), byte(extra))
			}
		}
		swift = append(swift, 0x00)
		got, err := Decode(swift)
		want := Backtrace{Size: bt.Size, Frames: frames}
		if err != nil || !equal(got, want) {
			t.Fatalf("Decode(% x) = %v, %v\nwant %v", swift, got, err, want)
		}
	}
}
