package cbf

import "testing"

// benchBacktrace is a 16-frame 64-bit backtrace shaped like a real one: a PC
// in a shared library, return addresses in the executable and in libc.
func benchBacktrace() Backtrace {
	bt := Backtrace{Size: Word64, Frames: []Frame{{KindPC, 0x7f3a1c2d4e10}}}
	addrs := []uint64{0x401234, 0x401a80, 0x4022f4, 0x402010, 0x7f3a1bc29d90, 0x403c44, 0x401120}
	for i := 1; i < 16; i++ {
		bt.Frames = append(bt.Frames, Frame{KindRA, addrs[i%len(addrs)] + uint64(i)*0x40})
	}
	return bt
}

func BenchmarkEncode(b *testing.B) {
	bt := benchBacktrace()
	enc, err := Encode(bt)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(bt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEncode(b *testing.B) {
	bt := benchBacktrace()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendEncode(buf[:0], bt); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecode(b *testing.B) {
	enc, err := Encode(benchBacktrace())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		bt, err := Decode(enc)
		if err != nil || len(bt.Frames) != 16 {
			b.Fatal(len(bt.Frames), err)
		}
	}
}
