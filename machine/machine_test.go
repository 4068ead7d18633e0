package machine

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestRegisters(t *testing.T) {
	t.Parallel()
	var r Registers
	if _, ok := r.Get(7); ok {
		t.Fatal("an unset register reads as valid")
	}
	r.Set(7, 0x1234)
	if v, ok := r.Get(7); !ok || v != 0x1234 {
		t.Fatalf("Get(7) = %#x, %v", v, ok)
	}
	for _, bad := range []int{-1, MaxReg, 1000} {
		if _, ok := r.Get(bad); ok {
			t.Errorf("Get(%d) valid", bad)
		}
	}
}

func TestSnapshotReadWord(t *testing.T) {
	t.Parallel()
	stack := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	for _, c := range []struct {
		big  bool
		addr uint64
		want uint64
		ok   bool
	}{
		{false, 0x1000, 0x0807060504030201, true},
		{true, 0x1000, 0x0102030405060708, true},
		{false, 0x1008, 0x100f0e0d0c0b0a09, true},
		{false, 0x1003, 0x0b0a090807060504, true}, // unaligned, inside
		{false, 0x1009, 0, false},                 // runs past the end
		{false, 0x0fff, 0, false},                 // starts before
		{false, 0x1010, 0, false},                 // at the end
		{false, 0xffff_ffff_ffff_fffc, 0, false},  // far off, no wrap
	} {
		s := &Snapshot{StackAddr: 0x1000, Stack: stack, BigEndian: c.big}
		got, ok := s.ReadWord(c.addr)
		if ok != c.ok || got != c.want {
			t.Errorf("big=%v ReadWord(%#x) = %#x, %v; want %#x, %v", c.big, c.addr, got, ok, c.want, c.ok)
		}
	}
}

func TestSnapshotSerialises(t *testing.T) {
	t.Parallel()
	s := Snapshot{StackAddr: 0x7000, Stack: []byte{0xde, 0xad}, BigEndian: true}
	s.Regs.PC = 0x401000
	s.Regs.Set(7, 0x7000)
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, back) {
		t.Fatalf("round trip: %+v != %+v", back, s)
	}
	if (&Snapshot{StackAddr: ^uint64(0) - 3, Stack: make([]byte, 8)}).Validate() == nil {
		t.Error("a wrapping snapshot validates")
	}
}
