package cbf

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must not panic, and whatever
// it accepts must survive Encode and decode to the same backtrace again, with
// Encode's output a fixed point.
func FuzzDecode(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(v.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		bt, err := Decode(data)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("Decode(% x) error %T %v, want *FormatError", data, err, err)
			}
			return
		}
		enc, err := Encode(bt)
		if err != nil {
			t.Fatalf("Encode of decoded % x (%v): %v", data, bt, err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(Decode(% x))) = % x: %v", data, enc, err)
		}
		if !equal(again, bt) {
			t.Fatalf("unstable: % x\nfirst  %v\nsecond %v (from % x)", data, bt, again, enc)
		}
		enc2, err := Encode(again)
		if err != nil || !bytes.Equal(enc2, enc) {
			t.Fatalf("Encode not a fixed point: % x then % x (%v)", enc, enc2, err)
		}
	})
}
