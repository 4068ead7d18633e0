package harness

import (
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// BenchmarkPipelineParts splits BenchmarkPipeline's CPU time per checked
// instruction into what each layer adds, over the same programs (seeds
// 0..b.N-1 of pipelineOptions), each measured on its own:
//
//   - produce: generation and encoding alone;
//   - emulate: the emulator with its C hook and no Go callback (fresh
//     code: translation included);
//   - warm: emulate with the program's code translated already (each
//     program run twice, the second run timed): the difference to
//     emulate is translating fresh code;
//   - callback: the same with a Go step callback that does nothing;
//   - track: the callback runs the oracle's tracker (Observe, Expected);
//   - check: Checker.Check, every step judged by the builtin consumer's
//     full backtrace (BenchmarkPipeline less production).
//
// Images are produced before the timed part of the other rows, so each
// row's cpu-ns/instr is that layer and the ones below it.
func BenchmarkPipelineParts(b *testing.B) {
	for _, abi := range target.All {
		abi := abi
		b.Run(abi.Name()+"/produce", func(b *testing.B) {
			steps := 0
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), pipelineOptions); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime() - cpu
			steps = partsSteps(b, abi, b.N)
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(steps), "cpu-ns/instr")
		})
		for _, mode := range []string{"emulate", "warm", "callback", "track", "check"} {
			mode := mode
			b.Run(abi.Name()+"/"+mode, func(b *testing.B) {
				imgs := make([]*image.Image, b.N)
				for i := range imgs {
					img, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), pipelineOptions)
					if err != nil {
						b.Fatal(err)
					}
					imgs[i] = img
				}
				c, err := New(abi, Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				cons := consumer.NewBuiltin()
				b.ResetTimer()
				cpu := cpuTime()
				steps := 0
				for _, img := range imgs {
					if mode == "warm" {
						// Once untimed to translate, then again.
						t := cpuTime()
						partsRun(b, c.m, img, "emulate")
						cpu += cpuTime() - t
						steps += partsRun(b, c.m, img, "emulate")
						continue
					}
					if mode == "check" {
						steps += c.Check(img, cons).Steps
						continue
					}
					steps += partsRun(b, c.m, img, mode)
				}
				cpu = cpuTime() - cpu
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(steps), "cpu-ns/instr")
			})
		}
	}
}

// partsRun runs every path of img with the step callback of mode.
func partsRun(b *testing.B, m *emu.Machine, img *image.Image, mode string) int {
	var tr *oracle.Tracker
	var onStep func(*emu.Step) error
	switch mode {
	case "callback":
		onStep = func(*emu.Step) error { return nil }
	case "track":
		var err error
		tr, err = oracle.NewTracker(img.Target, img.Symbols, img.Entry)
		if err != nil {
			b.Fatal(err)
		}
		var exp []frame.Frame
		onStep = func(s *emu.Step) error {
			if err := tr.Observe(s.Regs, s); err != nil {
				return err
			}
			exp = tr.Expected(exp[:0], s.Regs)
			return nil
		}
	}
	m.SetTrack(img.RuleRegs...)
	steps := 0
	paths := img.Paths
	if len(paths) == 0 {
		paths = []map[int]uint64{nil}
	}
	for k, regs := range paths {
		if tr != nil {
			tr.Reset()
		}
		run := emu.Run{Code: img.Code, CodeAddr: img.CodeAddr, Entry: img.Entry, Exit: img.Exit, Regs: regs, Budget: DefaultBudget}
		for _, s := range img.Segments {
			run.Segments = append(run.Segments, emu.Segment{Addr: s.Addr, Code: s.Code})
		}
		if s, ok := img.SignalOf(k); ok {
			run.Signal = &emu.Signal{At: s.At, Count: s.Count, Signo: s.Signo, Handler: s.Handler, Restorer: s.Restorer}
		}
		n, err := m.Execute(&run, onStep)
		if err != nil {
			b.Fatalf("path %d: %v", k, err)
		}
		steps += n
	}
	return steps
}

// partsSteps is how many instructions the first n programs check.
func partsSteps(b *testing.B, abi target.Target, n int) int {
	b.StopTimer()
	defer b.StartTimer()
	c, err := New(abi, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	steps := 0
	for i := 0; i < n; i++ {
		img, _, err := Produce(producer.Builtin{Version: 3}, abi, int64(i), pipelineOptions)
		if err != nil {
			b.Fatal(err)
		}
		steps += partsRun(b, c.m, img, "emulate")
	}
	return steps
}
