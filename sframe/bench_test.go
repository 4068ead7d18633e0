package sframe

// Decode and lookup speed:
//
//	go test ./sframe -run '^$' -bench 'Decode|FindRow' -benchmem
//
// The Gas benchmarks run on testdata/bench/x86-64-20k.sframe.gz: 20000
// functions and 95000 FREs (757 KB) that GNU as 2.47.50 and ld made from
// testdata/bench/gen.awk (regen.sh rebuilds it).

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		if err != nil || len(tab.starts) != 100_000 {
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

// gasBench is the benchmark section and its address.
func gasBench(b *testing.B) ([]byte, uint64) {
	b.Helper()
	stem := filepath.Join("testdata", "bench", "x86-64-20k.sframe")
	gz, err := os.ReadFile(stem + ".gz")
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	addr, err := os.ReadFile(stem + ".addr")
	if err != nil {
		b.Fatal(err)
	}
	base, err := strconv.ParseUint(strings.TrimSpace(string(addr)), 0, 64)
	if err != nil {
		b.Fatal(err)
	}
	return raw, base
}

// gasBenchText decodes the benchmark section and returns the table and
// the address range its functions cover (they are laid back to back).
func gasBenchText(b *testing.B) (*Table, uint64, uint64) {
	raw, base := gasBench(b)
	tab, err := Decode(raw, base)
	if err != nil {
		b.Fatal(err)
	}
	lo, hi := ^uint64(0), uint64(0)
	for pc := uint64(0x401000); ; {
		f, err := tab.FindFDE(pc)
		if err != nil {
			break
		}
		lo, hi = min(lo, f.Start), max(hi, f.Start+uint64(f.Size))
		pc = f.Start + uint64(f.Size)
	}
	if hi-lo < 20000 {
		b.Fatalf("benchmark functions cover [%#x, %#x) only", lo, hi)
	}
	return tab, lo, hi
}

func BenchmarkDecodeGas20k(b *testing.B) {
	raw, base := gasBench(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		tab, err := Decode(raw, base)
		if err != nil || tab.Sections[0].Header.NumFDEs != 20000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindRowGasRandom looks up PCs drawn uniformly from the text
// the section describes, in random order: a profiler's samples.
func BenchmarkFindRowGasRandom(b *testing.B) {
	tab, lo, hi := gasBenchText(b)
	r := rand.New(rand.NewPCG(1, 2))
	pcs := make([]uint64, 1<<16)
	for i := range pcs {
		pcs[i] = lo + r.Uint64N(hi-lo)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := tab.FindRow(pcs[i&(len(pcs)-1)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkFindRowGasSequential looks up increasing PCs, 7 bytes apart
// (a few per function), wrapping around at the end of the text.
func BenchmarkFindRowGasSequential(b *testing.B) {
	tab, lo, hi := gasBenchText(b)
	b.ReportAllocs()
	pc := lo
	for b.Loop() {
		if _, _, err := tab.FindRow(pc); err != nil {
			b.Fatal(err)
		}
		if pc += 7; pc >= hi {
			pc = lo
		}
	}
}
