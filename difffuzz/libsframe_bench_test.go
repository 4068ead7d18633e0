package difffuzz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/toolchain"
)

// BenchmarkVersusLibsframe compares the sframe package with GNU libsframe
// on one large gas-made section (sframe/testdata/bench/x86-64-20k.sframe.gz:
// 20000 functions, 95000 FREs, GNU as and ld 2.47), in one run:
//
//	go test ./difffuzz -run '^$' -bench VersusLibsframe -benchtime 2s
//
// It builds sframe/testdata/bench/libsframe-bench.c against the static
// libsframe.a the libsframe consumer is linked with (ci/setup.sh step 6:
// sid's libsframe-dev) and runs it on the same section with its own clock
// (sframe_decode of the whole section, sframe_find_fre at uniformly random
// PCs and at increasing PCs 7 bytes apart), then times the same operation
// of the sframe package: each sub-benchmark, in every round of -count N,
// runs the timer right before its own loop and reports libsframe's ns/op
// next to ours and the ratio libsframe/builtin (above 1: the sframe
// package is faster). On a loaded machine the two halves see different
// loads: compare rounds, or run on a quiet one.
//
// The two decodes do not do the same work: sframe.Decode checks every
// header and FDE and indexes the functions, leaving FREs where they are
// (lazy); sframe_decode copies the FDEs into its own table and the FRE
// sub-section into a buffer, and checks nothing past the header in the
// host's byte order.
func BenchmarkVersusLibsframe(b *testing.B) {
	sec, base := benchSection(b)
	tab, err := sframe.Decode(sec, base)
	if err != nil {
		b.Fatal(err)
	}
	lo, hi := textRange(b, tab)
	report := func(b *testing.B, theirs float64) {
		ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(theirs, "libsframe-ns/op")
		b.ReportMetric(theirs/ours, "libsframe/builtin")
	}
	// Each sub-benchmark runs the C timer first (b.Loop starts the clock
	// after it), so that libsframe and the sframe package are measured
	// one right after the other, in every round of -count N.
	b.Run("decode", func(b *testing.B) {
		lib := libsframeTimes(b)
		b.SetBytes(int64(len(sec)))
		for b.Loop() {
			if _, err := sframe.Decode(sec, base); err != nil {
				b.Fatal(err)
			}
		}
		report(b, lib["decode"])
	})
	b.Run("find-random", func(b *testing.B) {
		lib := libsframeTimes(b)
		r := rand.New(rand.NewPCG(1, 2))
		pcs := make([]uint64, 1<<16)
		for i := range pcs {
			pcs[i] = lo + r.Uint64N(hi-lo)
		}
		i := 0
		for b.Loop() {
			if _, _, err := tab.FindRow(pcs[i&(len(pcs)-1)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		report(b, lib["random"])
	})
	b.Run("find-sequential", func(b *testing.B) {
		lib := libsframeTimes(b)
		pc := lo
		for b.Loop() {
			if _, _, err := tab.FindRow(pc); err != nil {
				b.Fatal(err)
			}
			if pc += 7; pc >= hi {
				pc = lo
			}
		}
		report(b, lib["sequential"])
	})
}

// benchSection is the benchmark section and its address.
func benchSection(b *testing.B) ([]byte, uint64) {
	stem := filepath.Join("..", "sframe", "testdata", "bench", "x86-64-20k.sframe")
	gz, err := os.ReadFile(stem + ".gz")
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		b.Fatal(err)
	}
	sec, err := io.ReadAll(zr)
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
	return sec, base
}

// textRange is the text the section's functions cover: they are laid
// back to back from 0x401000, as the C timer assumes too.
func textRange(b *testing.B, tab *sframe.Table) (lo, hi uint64) {
	lo, hi = 0x401000, 0x401000
	for {
		f, err := tab.FindFDE(hi)
		if err != nil {
			break
		}
		hi = f.Start + uint64(f.Size)
	}
	if hi-lo < 20000 {
		b.Fatalf("the benchmark section's functions cover [%#x, %#x) only", lo, hi)
	}
	return lo, hi
}

// libsframeTimes builds the C timer and runs it on the benchmark section:
// ns per operation by operation (decode, random, sequential). It runs once
// per call, so that with -count N every round has libsframe's figure
// measured next to ours, under the same load.
func libsframeTimes(b *testing.B) map[string]float64 {
	lib := filepath.Join(toolchain.CacheDir(), "roots", "sid", "usr", "lib", "x86_64-linux-gnu", "libsframe.a")
	if _, err := os.Stat(lib); err != nil {
		a, _ := consumer.Lookup("libsframe")
		testenv.Missing(b, testenv.Step(a.Setup), "no static libsframe at %s", lib)
	}
	dir := b.TempDir()
	bin, err := buildLibsframeTimer(lib, dir)
	if err != nil {
		b.Fatal(err)
	}
	times, err := runLibsframeTimer(dir, bin)
	if err != nil {
		b.Fatal(err)
	}
	return times
}

var timerLine = regexp.MustCompile(`^sframe_(decode|find_fre (random|sequential)): ([0-9.]+) (us|ns)/op`)

// buildLibsframeTimer builds sframe/testdata/bench/libsframe-bench.c
// against lib in dir and writes the benchmark section next to it.
func buildLibsframeTimer(lib, dir string) (bin string, err error) {
	src := filepath.Join("..", "sframe", "testdata", "bench", "libsframe-bench.c")
	bin = filepath.Join(dir, "bench")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, src, lib).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s against %s: %v\n%s", src, lib, err, out)
	}
	gz, err := os.ReadFile(filepath.Join("..", "sframe", "testdata", "bench", "x86-64-20k.sframe.gz"))
	if err != nil {
		return "", err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "section"), raw, 0o644); err != nil {
		return "", err
	}
	return bin, nil
}

func runLibsframeTimer(dir, bin string) (map[string]float64, error) {
	addr, err := os.ReadFile(filepath.Join("..", "sframe", "testdata", "bench", "x86-64-20k.sframe.addr"))
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(bin, filepath.Join(dir, "section"), strings.TrimSpace(string(addr))).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", bin, err, out)
	}
	times := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := timerLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, _ := strconv.ParseFloat(m[3], 64)
		if m[4] == "us" {
			v *= 1000
		}
		key := "decode"
		if m[2] != "" {
			key = m[2]
		}
		times[key] = v
	}
	if len(times) != 3 {
		return nil, fmt.Errorf("the C timer printed %q: want three timings", out)
	}
	return times, nil
}
