package cbf

import (
	"math/rand/v2"
	"testing"
)

// The encoder's choices are the shortest the seed document allows: every
// instruction's length is decided alone (the previous address is the
// computed one whatever form an address took), so the shortest stream is
// the sum of each entry's shortest legal form. Those are enumerated here
// from the document's rules, not from Encode's: an address instruction
// carries 1 to 8 value bytes, sign-extended to the word; the first address
// must be absolute; an omit count is inline when count-1 fits the 5-bit
// field, or follows in 1 to wordBytes zero-extended bytes; "end" or
// "trunc" ends the stream.

// signExtends reports whether the low n bytes of v, sign-extended to w,
// give v back.
func signExtends(v uint64, n int, w WordSize) bool {
	if n*8 >= int(w) {
		return true
	}
	shift := 64 - uint(8*n)
	x := uint64(int64(v<<shift) >> shift)
	return x&w.mask() == v&w.mask()
}

func shortestAddr(v uint64, w WordSize) int {
	for n := 1; n <= 8; n++ {
		if signExtends(v, n, w) {
			return n
		}
	}
	panic("no length")
}

func shortestOmit(count uint64, w WordSize) int {
	if count >= 1 && count <= 32 {
		return 1
	}
	for n := 1; n <= w.bytes(); n++ {
		if n == 8 || count < 1<<(8*uint(n)) {
			return 1 + n
		}
	}
	panic("count does not fit")
}

// shortestLen is the length of the shortest stream the document allows
// for bt.
func shortestLen(bt Backtrace) int {
	n := 1 + 1 // info byte, end or trunc
	for _, o := range bt.Omitted {
		n += shortestOmit(o.Count, bt.Size)
	}
	var prev uint64
	for i, f := range bt.Frames {
		best := 1 + shortestAddr(f.Addr, bt.Size)
		if i > 0 {
			best = min(best, 1+shortestAddr((f.Addr-prev)&bt.Size.mask(), bt.Size))
		}
		n += best
		prev = f.Addr
	}
	return n
}

func TestEncodeIsShortest(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	check := func(bt Backtrace) {
		t.Helper()
		b, err := Encode(bt)
		if err != nil {
			t.Fatalf("%v: %v", bt, err)
		}
		if want := shortestLen(bt); len(b) != want {
			t.Fatalf("%v: %d bytes (% x), the shortest the format allows is %d", bt, len(b), b, want)
		}
	}
	// Every omit count at the edges of the inline and external forms.
	for _, w := range []WordSize{Word16, Word32, Word64} {
		for _, c := range []uint64{1, 2, 31, 32, 33, 255, 256, 257, 65535, 65536, w.mask()} {
			if c > w.mask() {
				continue
			}
			check(Backtrace{Size: w, Frames: []Frame{{KindPC, 1}}, Omitted: []Omission{{1, c}}})
		}
	}
	// Addresses near every byte boundary, in both directions.
	for _, w := range []WordSize{Word16, Word32, Word64} {
		for k := 0; k < int(w); k += 4 {
			for _, d := range []uint64{0, 1, ^uint64(0)} {
				a := (uint64(1)<<k + d) & w.mask()
				check(Backtrace{Size: w, Frames: []Frame{{KindPC, a}, {KindRA, ^a & w.mask()}, {KindRA, a}}})
			}
		}
	}
	// Random backtraces, addresses clustered as real ones are.
	for i := 0; i < 20000; i++ {
		w := []WordSize{Word16, Word32, Word64}[rng.IntN(3)]
		bt := Backtrace{Size: w, Truncated: rng.IntN(2) == 0}
		base := rng.Uint64() & w.mask()
		for j := rng.IntN(12); j > 0; j-- {
			a := base
			switch rng.IntN(3) {
			case 0:
				a = rng.Uint64()
			case 1:
				a = base + uint64(rng.IntN(1<<uint(rng.IntN(20)))) - 1<<9
			}
			bt.Frames = append(bt.Frames, Frame{Kind([]Kind{KindPC, KindRA, KindAsync}[rng.IntN(3)]), a & w.mask()})
		}
		if rng.IntN(3) == 0 {
			bt.Omitted = append(bt.Omitted, Omission{rng.IntN(len(bt.Frames) + 1), 1 + rng.Uint64()%uint64(1<<uint(rng.IntN(int(w)-1)))})
		}
		check(bt)
	}
}
