package harness

import (
	"syscall"
	"testing"
	"time"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/target"
)

// benchPrograms is the default mix: consecutive seeds, all patterns.
const benchPrograms = 64

// BenchmarkCheck measures checked instructions per second with a full
// backtrace judged at every instruction (builtin consumer, SFrame v3), per
// target, on one goroutine. Each iteration checks one program of the
// default mix; instr/s is the figure the run command's summary reports.
// BenchmarkBareHook in package emu is the floor: a Unicorn Go code hook
// doing nothing.
func BenchmarkCheck(b *testing.B) { benchmarkChecks(b, benchPrograms) }

// BenchmarkCheckSteady checks the same program over and over: translated
// code stays cached in the emulator, so this is the per-instruction cost
// of stepping, tracking, unwinding every frame and judging, without the
// emulator's translation of new code that BenchmarkCheck includes.
func BenchmarkCheckSteady(b *testing.B) { benchmarkChecks(b, 1) }

// benchmarkChecks checks n pre-built programs of each target in turn.
func benchmarkChecks(b *testing.B, n int) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			c, err := New(abi, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			imgs := benchImages(b, abi, n)
			cons := consumer.NewBuiltin()
			steps := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := c.Check(imgs[i%len(imgs)], cons)
				if !res.Clean() {
					b.Fatalf("program %d does not conform", i%len(imgs))
				}
				steps += res.Steps
			}
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "instr/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
			b.ReportMetric(float64(steps)/float64(b.N), "instr/program")
		})
	}
}

// pipelineOptions are BenchmarkPipeline's and BenchmarkMainJob's
// programs: the default mix without idle functions, which is the program
// set of commit f53b72c byte for byte (TestPipelineProgramsPinned), so
// that the figures compare across commits. Heavier layouts added since
// (idle functions: large tables) have BenchmarkPipelineDefaultMix.
var pipelineOptions = gen.Options{Idle: -1}

// BenchmarkPipeline adds generation and encoding to each program, as the
// run command does.
func BenchmarkPipeline(b *testing.B) { benchmarkPipeline(b, pipelineOptions) }

// BenchmarkPipelineDefaultMix is BenchmarkPipeline with the run command's
// default mix today: 1 seed in 20 has 1,000+ idle functions (gen/idle.go).
func BenchmarkPipelineDefaultMix(b *testing.B) { benchmarkPipeline(b, gen.Options{}) }

func benchmarkPipeline(b *testing.B, opt gen.Options) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			c, err := New(abi, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cons := consumer.NewBuiltin()
			steps := 0
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				img, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), opt)
				if err != nil {
					b.Fatal(err)
				}
				steps += c.Check(img, cons).Steps
			}
			cpu = cpuTime() - cpu
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "instr/s")
			// Per core: the process's CPU time (the collector's included),
			// which other work on the machine disturbs less than the wall
			// clock.
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(steps), "cpu-ns/instr")
			b.ReportMetric(float64(steps)/cpu.Seconds(), "instr/cpu-s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
		})
	}
}

// BenchmarkMainJob is BenchmarkPipeline's work (the run command's:
// generate, encode, check every instruction with a full backtrace from
// the builtin consumer) put against the floor, per target: after the
// programs, as many instructions run under a bare Unicorn Go code hook
// (emu.BareHook, BenchmarkBareHook's loop). It reports the job's instr/s
// (wall clock) and its CPU time per instruction, the floor's, and their
// ratio: how many bare hooks a checked instruction costs. CPU time is the
// process's, so the figures hold on a machine other work is loading;
// -benchmem's allocs/op are per program.
func BenchmarkMainJob(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			c, err := New(abi, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cons := consumer.NewBuiltin()
			steps := 0
			b.ResetTimer()
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				img, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), pipelineOptions)
				if err != nil {
					b.Fatal(err)
				}
				res := c.Check(img, cons)
				if !res.Clean() {
					b.Fatalf("program %d does not conform", i)
				}
				steps += res.Steps
			}
			cpu = cpuTime() - cpu
			b.StopTimer()
			b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "instr/s")
			job := float64(cpu.Nanoseconds()) / float64(steps)
			b.ReportMetric(job, "cpu-ns/instr")

			floorCPU := cpuTime()
			n, err := emu.BareHook(abi, max(steps, 1<<20))
			floorCPU = cpuTime() - floorCPU
			if err != nil {
				b.Fatal(err)
			}
			floor := float64(floorCPU.Nanoseconds()) / float64(n)
			b.ReportMetric(floor, "floor-cpu-ns/instr")
			b.ReportMetric(job/floor, "x-floor")
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNewChecker is the instance setup cost.
func BenchmarkNewChecker(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c, err := New(abi, Options{})
				if err != nil {
					b.Fatal(err)
				}
				// The first run pays for lazy initialisation.
				img, _, _ := Produce(producer.Builtin{Version: 3}, abi, 1, gen.Options{})
				c.Check(img, consumer.NewBuiltin())
				c.Close()
			}
		})
	}
}

func benchImages(b *testing.B, abi target.Target, n int) []*image.Image {
	var out []*image.Image
	for i := 0; i < n; i++ {
		img, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), gen.Options{})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, img)
	}
	return out
}
