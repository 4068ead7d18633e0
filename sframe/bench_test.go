package sframe

// Decode and lookup speed:
//
//	go test ./sframe -run '^$' -bench 'Decode100k|FindRow' -benchmem

import (
	"encoding/binary"
	"testing"
)

// decBenchSection writes a version 3 AMD64 section of n functions of 0x40
// bytes, back to back from benchText, each with three FREs (push %rbp;
// mov %rsp,%rbp; ... leave): 5 attribute bytes + 3 + 4 + 4 FRE bytes.
const benchText = 0x400000

func decBenchSection(n int) []byte {
	const perFunc = 5 + 3 + 4 + 4
	h := newHB(binary.LittleEndian).header(3, 0x5, 3, 0, -8, 0, int64(n), int64(3*n), int64(perFunc*n), 0, int64(16*n))
	for i := 0; i < n; i++ {
		field := int64(HeaderSize + 16*i)
		h.u64(benchText+int64(i)*0x40-field).u32(0x40, int64(perFunc*i))
	}
	for i := 0; i < n; i++ {
		h.u16(3).u8(0, 0, 0)
		h.u8(0, 0x03, 8)
		h.u8(1, 0x05, 16, -16)
		h.u8(4, 0x04, 16, -16) // CFA = rbp+16
	}
	return h.b
}

func BenchmarkDecode100kFDEs(b *testing.B) {
	buf := decBenchSection(100_000)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		tab, err := Decode(buf, 0)
		if err != nil || len(tab.index) != 100_000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindRow(b *testing.B) {
	tab, err := Decode(decBenchSection(100_000), 0)
	if err != nil {
		b.Fatal(err)
	}
	// PCs spread over the whole table by a multiplicative step.
	const n = 4096
	var pcs [n]uint64
	for i := range pcs {
		pcs[i] = benchText + (uint64(i)*0x9e3779b1)%(100_000*0x40)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := tab.FindRow(pcs[i%n]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
