package campaign

import (
	"errors"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
	"github.com/sfconform/sfconform/verdict"
)

// BenchmarkFigures gives the figures of the toolchain issue in one run,
// all on x86-64 (the one target every producer and consumer named here
// meets):
//
//	go test ./harness -run '^$' -bench Figures -benchtime 2s
//
// The groups:
//
//   - producer/NAME: programs/s and checked instr/s of builtin-v3,
//     gas-2.47 and llvm-mc-23, each program made and checked as the run
//     command does (BenchmarkProducers' "pipeline" stage);
//   - consumer/NAME: programs/s and instr/s of checking the same programs
//     with each real consumer (builtin, libsframe, glibc, objdump-2.47);
//   - batch/NAME: the time to make one batch of images (generate, and for
//     a toolchain assemble as one file, link and load back per program).
//
// Every sub-benchmark is three levels deep, so that one -bench pattern
// selects whole groups (Go runs a benchmark only when the pattern matches
// its full name).
func BenchmarkFigures(b *testing.B) {
	const batch = 64 // the run command's default
	for _, name := range []string{"builtin-v3", "gas-2.47", "llvm-mc-23"} {
		b.Run("producer/"+name, func(b *testing.B) {
			benchProducer(b, "pipeline", figureProducer(b, name), target.X86_64, batch)
		})
	}
	imgs := figureImages(b, "builtin-v2", figurePrograms)
	for _, name := range []string{"builtin", "libsframe", "glibc", "objdump-2.47"} {
		b.Run("consumer/"+name, func(b *testing.B) { benchConsumer(b, name, imgs) })
	}
	for _, name := range []string{"builtin-v3", "gas-2.47", "llvm-mc-23"} {
		b.Run("batch/"+name, func(b *testing.B) { benchBatch(b, figureProducer(b, name), batch) })
	}
}

// figurePrograms is how many programs the consumer figures cycle through.
const figurePrograms = 64

// benchConsumer checks the same programs with one real consumer:
// builtin-v2's sections (SFrame version 2, which glibc reads too) of the
// default mix, built once. Each iteration checks one program, a full
// backtrace judged at every instruction; programs/s and instr/s are the
// checking alone, OK% how many of the steps the consumer got right (the
// consumers differ by design: see consumer/doc.go).
func benchConsumer(b *testing.B, name string, imgs []*image.Image) {
	cons, err := consumer.New(name)
	testenv.IfNotProvisioned(b, err)
	if err != nil { // a dumper of a series not provisioned at all is no consumer
		testenv.Missing(b, testenv.Binutils, "%v", err)
	}
	defer cons.Close()
	c, err := harness.New(target.X86_64, harness.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	steps, ok := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := c.Check(imgs[i%len(imgs)], cons)
		if res.RunErr != nil {
			b.Fatal(res.RunErr)
		}
		steps += res.Steps
		ok += res.Counts[verdict.OK]
	}
	if steps == 0 {
		b.Fatalf("%s: no instruction checked", name)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
	b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "instr/s")
	b.ReportMetric(100*float64(ok)/float64(steps), "OK%")
}

// benchBatch is the time to make one batch of images: generate the
// programs, and for a toolchain assemble them as one file, link them at
// their addresses and load the executable back into one image per
// program (ProduceBatch). sfconform's own encoder makes the same programs
// one by one, for comparison.
func benchBatch(b *testing.B, prod producer.Producer, batch int) {
	seeds := make([]int64, batch)
	for i := 0; i < b.N; i++ {
		for k := range seeds {
			seeds[k] = int64(i*batch + k)
		}
		for _, p := range ProduceBatch(prod, target.X86_64, seeds, gen.Options{}) {
			if p.Err != nil {
				b.Fatal(p.Err)
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/batch")
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "programs/s")
}

// figureProducer makes a producer, or ends the benchmark as testenv says
// when its toolchain is not provisioned.
func figureProducer(b *testing.B, name string) producer.Producer {
	p, err := producer.New(name)
	if errors.Is(err, toolchain.ErrNotProvisioned) {
		testenv.Missing(b, testenv.Binutils, "%v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// figureImages makes n images of consecutive seeds with one producer.
func figureImages(b *testing.B, name string, n int) []*image.Image {
	prod := figureProducer(b, name)
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	var out []*image.Image
	for _, p := range ProduceBatch(prod, target.X86_64, seeds, gen.Options{}) {
		if p.Err != nil {
			b.Fatal(p.Err)
		}
		out = append(out, p.Img)
	}
	return out
}
