package emu

import (
	"syscall"
	"testing"
	"time"

	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// callPrograms are a small position-independent function call: a frame is
// set up, a leaf is called and returns, the frame is torn down; five
// instructions run, and the run exits at the marked offset.
var callPrograms = map[target.Target]struct {
	code []byte
	exit uint64
}{
	target.X86_64: {[]byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0xe8, 0x02, 0x00, 0x00, 0x00, // call .+7
		0x5d, // pop %rbp
		0x90, // nop (exit)
		0xc3, // ret
	}, 10},
	target.AArch64:   {a64Call, 16},
	target.AArch64BE: {a64Call, 16},
	target.S390X: {[]byte{
		0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, // stmg %r14,%r15,112(%r15)
		0xa7, 0xfb, 0xff, 0x60, // aghi %r15,-160
		0xc0, 0xe5, 0x00, 0x00, 0x00, 0x07, // brasl %r14,.+14
		0xa7, 0xfb, 0x00, 0xa0, // aghi %r15,160
		0x07, 0x00, // nopr (exit)
		0x07, 0x00, // nopr
		0x07, 0xfe, // br %r14
	}, 20},
}

var a64Call = []byte{
	0xfd, 0x7b, 0xbf, 0xa9, // stp x29, x30, [sp, #-16]!
	0xfd, 0x03, 0x00, 0x91, // mov x29, sp
	0x03, 0x00, 0x00, 0x94, // bl .+12
	0xfd, 0x7b, 0xc1, 0xa8, // ldp x29, x30, [sp], #16
	0x1f, 0x20, 0x03, 0xd5, // nop (exit)
	0xc0, 0x03, 0x5f, 0xd6, // ret
}

// TestBenchmarkPrograms checks the hand-written benchmark programs with an
// independent disassembler, and that they run as intended.
func TestBenchmarkPrograms(t *testing.T) {
	t.Parallel()
	want := map[target.Target][2]string{
		target.X86_64:  {"dec %rcx; jne 0x10000000", "push %rbp; mov %rsp,%rbp; callq 0x1000000b; pop %rbp; nop; retq"},
		target.AArch64: {"subs x0, x0, #0x1; b.ne 0x10000000", "stp x29, x30, [sp,#-16]!; mov x29, sp; bl 0x10000014; ldp x29, x30, [sp],#16; nop; ret"},
		target.S390X:   {"aghi %r3,1; brctg %r2,0x10000000", "stmg %r14,%r15,112(%r15); aghi %r15,-160; brasl %r14,0x10000018; aghi %r15,160; nopr %r0; nopr %r0; br %r14"},
	}
	want[target.AArch64BE] = want[target.AArch64]
	listing := func(abi target.Target, code []byte) string {
		var s string
		for off := 0; off < len(code); {
			insn, text := Disassemble(abi, CodeBase+uint64(off), code[off:])
			if off > 0 {
				s += "; "
			}
			s += text
			off += len(insn)
		}
		return s
	}
	for _, abi := range target.All {
		if got := listing(abi, loops[abi].code); got != want[abi][0] {
			t.Errorf("%s loop: %q, want %q", abi.Name(), got, want[abi][0])
		}
		if got := listing(abi, callPrograms[abi].code); got != want[abi][1] {
			t.Errorf("%s call: %q, want %q", abi.Name(), got, want[abi][1])
		}
		m := newMachine(t, abi)
		l := loops[abi]
		n, err := m.Execute(&Run{Code: l.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(l.code)),
			Regs: map[int]uint64{l.reg: 10}, Budget: 100}, nil)
		if err != nil || n != 20 {
			t.Errorf("%s loop of 10: %d steps, %v; want 20", abi.Name(), n, err)
		}
		p := callPrograms[abi]
		var sps []uint64
		n, err = m.Execute(&Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + p.exit, Budget: 100}, func(s *Step) error {
			sp, _ := s.Regs.Get(abi.SP())
			sps = append(sps, sp)
			return nil
		})
		if err != nil || n != 5 || sps[len(sps)-1] == InitialSP {
			t.Errorf("%s call: %d steps, sp %x, %v; want 5 steps with the frame still set up at the last", abi.Name(), n, sps, err)
		}
		if sp, _ := m.Reg(abi.SP()); sp != InitialSP {
			t.Errorf("%s call: final sp %#x, want %#x", abi.Name(), sp, uint64(InitialSP))
		}
	}
}

// cpuTime is the process's user+system CPU time. On a machine shared
// with other work, wall-clock ns/instr swings with the load; CPU time
// counts only what this process spent.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp reports the CPU time per iteration of a benchmark loop that
// started at CPU time start.
func cpuPerOp(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// perInstruction reports ns/instr (wall clock), cpu-ns/instr and instr/s
// for n instructions that took the CPU time cpu.
func perInstruction(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/instr")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/instr")
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "instr/s")
	b.ReportMetric(0, "ns/op")
}

// runLoop runs the target's loop for about b.N instructions.
func runLoop(b *testing.B, m *Machine, onStep func(*Step) error) {
	l := loops[m.abi]
	iters := max(b.N/2, 1)
	b.ResetTimer()
	cpu := cpuTime()
	n, err := m.Execute(&Run{Code: l.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(l.code)),
		Regs: map[int]uint64{l.reg: uint64(iters)}, Budget: 2*iters + 1}, onStep)
	cpu = cpuTime() - cpu
	b.StopTimer()
	if err != nil || n != 2*iters {
		b.Fatalf("%d steps, %v", n, err)
	}
	perInstruction(b, n, cpu)
}

// bareLoop runs the target's loop for about b.N instructions on a plain
// Unicorn instance (no hooks of this package) with the given Go code hook.
func bareLoop(b *testing.B, abi target.Target, hook func(u uc.Unicorn, addr uint64, size uint32)) {
	var cpu time.Duration
	count, err := bareRun(abi, max(b.N/2, 1), hook, func() {
		b.ResetTimer()
		cpu = cpuTime()
	}, func() {
		cpu = cpuTime() - cpu
		b.StopTimer()
	})
	if err != nil {
		b.Fatal(err)
	}
	perInstruction(b, count, cpu)
}

// BenchmarkBareHook is the floor: a Go code hook through the binding that
// does nothing, on a plain Unicorn instance.
func BenchmarkBareHook(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			bareLoop(b, abi, func(uc.Unicorn, uint64, uint32) {})
		})
	}
}

// BenchmarkAltGoHookRegBatch is the alternative design: a Go code hook
// through the binding reading SP, FP and RA (x86-64: SP, FP) with a
// prepared RegBatch, on a plain instance.
func BenchmarkAltGoHookRegBatch(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			t, _ := cpuOf(abi)
			var ids []int
			for _, d := range t.base {
				ids = append(ids, t.regs[d])
			}
			batch, err := uc.NewRegBatch(ids)
			if err != nil {
				b.Fatal(err)
			}
			var sink uint64
			bareLoop(b, abi, func(u uc.Unicorn, addr uint64, size uint32) {
				v, _ := batch.ReadFast(u)
				sink += v[0] + addr
			})
		})
	}
}

// BenchmarkNoCallback is this package's C hook alone: registers read,
// budget counted, no crossing into Go.
func BenchmarkNoCallback(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			runLoop(b, newMachine(b, abi), nil)
		})
	}
}

// BenchmarkStep is full Step delivery to a callback that does nothing.
func BenchmarkStep(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			runLoop(b, newMachine(b, abi), func(*Step) error { return nil })
		})
	}
}

// BenchmarkStepReadWords adds what an unwinder does per step: read a few
// stack words.
func BenchmarkStepReadWords(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			m := newMachine(b, abi)
			sp := abi.SP()
			var sink uint64
			runLoop(b, m, func(s *Step) error {
				a := s.Regs.Regs[sp]
				for i := uint64(0); i < 4; i++ {
					w, _ := s.ReadWord(a + 8*i)
					sink += w
				}
				return nil
			})
			_ = sink
		})
	}
}

// BenchmarkReadWord compares a stack read from the host memory Unicorn
// writes to with the same read through uc_mem_read.
func BenchmarkReadWord(b *testing.B) {
	m := newMachine(b, target.X86_64)
	b.Run("slice", func(b *testing.B) {
		var sink uint64
		for i := 0; i < b.N; i++ {
			w, _ := m.readWord(InitialSP - 64)
			sink += w
		}
		_ = sink
	})
	b.Run("memread", func(b *testing.B) {
		var buf [8]byte
		for i := 0; i < b.N; i++ {
			if err := m.u.MemReadInto(buf[:], InitialSP-64); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNew is instance setup and teardown, PAC and AFP enabling
// included.
func BenchmarkNew(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				m, err := New(abi)
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
			cpuPerOp(b, start)
		})
	}
}

// BenchmarkReuse executes the small call program repeatedly on one
// Machine with Step delivery. "invalidate" alternates two images at the
// same address, so each run writes its code and drops that range from the
// translation cache (the chosen strategy); "same" runs one image again,
// which skips both; "fresh" writes each run at a new address without
// invalidating, flushing the whole cache when the code region wraps;
// "first" is the very first run of a new instance.
func BenchmarkReuse(b *testing.B) {
	nop := func(*Step) error { return nil }
	for _, abi := range target.All {
		p := callPrograms[abi]
		b.Run(abi.Name()+"/invalidate", func(b *testing.B) {
			m := newMachine(b, abi)
			// Two images that differ in a trailing byte, so every run
			// writes and invalidates.
			var rs [2]*Run
			for i := range rs {
				code := append(append([]byte(nil), p.code...), byte(i+1))
				rs[i] = &Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + p.exit, Budget: 100}
			}
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := m.Execute(rs[i&1], nop); err != nil {
					b.Fatal(err)
				}
			}
			cpuPerOp(b, start)
		})
		b.Run(abi.Name()+"/same", func(b *testing.B) {
			m := newMachine(b, abi)
			r := &Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + p.exit, Budget: 100}
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := m.Execute(r, nop); err != nil {
					b.Fatal(err)
				}
			}
			cpuPerOp(b, start)
		})
		b.Run(abi.Name()+"/fresh", func(b *testing.B) {
			m := newMachine(b, abi)
			m.noInvalidate = true
			const stride = 64
			addr := uint64(CodeBase)
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				if addr+stride > CodeBase+CodeSize {
					addr = CodeBase
					if err := m.flushAll(); err != nil {
						b.Fatal(err)
					}
				}
				r := &Run{Code: p.code, CodeAddr: addr, Entry: addr, Exit: addr + p.exit, Budget: 100}
				if _, err := m.Execute(r, nop); err != nil {
					b.Fatal(err)
				}
				addr += stride
			}
			cpuPerOp(b, start)
		})
		b.Run(abi.Name()+"/first", func(b *testing.B) {
			r := &Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + p.exit, Budget: 100}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, err := New(abi)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := m.Execute(r, nop); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				m.Close()
				b.StartTimer()
			}
		})
	}
}

// BenchmarkFlush is the cost of dropping the whole translation cache,
// which the fresh-address strategy pays when it wraps.
func BenchmarkFlush(b *testing.B) {
	m := newMachine(b, target.X86_64)
	p := callPrograms[target.X86_64]
	r := &Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + p.exit, Budget: 100}
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := m.Execute(r, nil); err != nil {
			b.Fatal(err)
		}
		if err := m.flushAll(); err != nil {
			b.Fatal(err)
		}
	}
	cpuPerOp(b, start)
}

// BenchmarkStackReset compares zeroing the whole stack with zeroing the
// part a run used (what Execute does after a clean run).
func BenchmarkStackReset(b *testing.B) {
	m := newMachine(b, target.X86_64)
	for _, c := range []struct {
		name string
		low  uint64
	}{{"full", StackBase}, {"used", InitialSP - 2*redZone}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				clear(m.stack[c.low-StackBase:])
			}
			b.ReportMetric(float64(StackTop-c.low), "bytes")
		})
	}
}
