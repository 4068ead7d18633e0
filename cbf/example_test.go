package cbf_test

import (
	"fmt"

	"github.com/sfconform/sfconform/cbf"
)

// The bytes below are worked out by hand: 02 is the 64-bit info byte;
// 1a 40 10 00 the first PC, absolute in 3 bytes; 21 02 34 the first return
// address, 0x234 on from the PC; 60 64 a run of 100 omitted frames (more than
// 32, so the count follows in one byte); 23 7e bf fd cc the last return
// address as a 4-byte delta, which ties with the absolute form and so goes
// relative; 01 trunc.
func Example() {
	bt := cbf.Backtrace{
		Size: cbf.Word64,
		Frames: []cbf.Frame{
			{Kind: cbf.KindPC, Addr: 0x401000},
			{Kind: cbf.KindRA, Addr: 0x401234},
			{Kind: cbf.KindRA, Addr: 0x7f001000},
		},
		Omitted:   []cbf.Omission{{At: 2, Count: 100}},
		Truncated: true,
	}
	b, err := cbf.Encode(bt)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", b)

	back, err := cbf.Decode(b)
	if err != nil {
		panic(err)
	}
	fmt.Println(back)

	_, err = cbf.Decode(b[:len(b)-3])
	fmt.Println(err)
	// Output:
	// 02 1a 40 10 00 21 02 34 60 64 23 7e bf fd cc 01
	// 64-bit: pc 0x401000 ra 0x401234 [100 omitted] ra 0x7f001000 [truncated]
	// cbf: truncated at byte offset 10 (0xa): ra instruction needs 4 value bytes, 2 remain
}
