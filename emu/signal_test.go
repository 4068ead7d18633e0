package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// sigProgram is a hand-encoded program for the signal tests: main sets
// every register to a distinct value, compares two of them and branches
// on the result (the signal comes between the compare and the branch),
// loops loopN times and reaches exit; handler overwrites every register
// it may and the flags, and returns to restorer, which calls rt_sigreturn.
type sigProgram struct {
	code                   []byte
	at, loop, exit         uint64 // the branch after the compare, the loop's first instruction, the exit
	handler, restorer, bad uint64 // bad: a system call that is not rt_sigreturn
	regs                   []int  // DWARF registers main sets (the SP aside), compared
}

const loopN = 3

func le32(w ...uint32) []byte {
	var b []byte
	for _, x := range w {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func be(b ...any) []byte {
	var out []byte
	for _, x := range b {
		switch v := x.(type) {
		case byte:
			out = append(out, v)
		case int:
			out = append(out, byte(v))
		case uint16:
			out = binary.BigEndian.AppendUint16(out, v)
		case uint32:
			out = binary.BigEndian.AppendUint32(out, v)
		}
	}
	return out
}

func sigProgramFor(abi target.Target) sigProgram {
	var p sigProgram
	var code []byte
	mark := func() uint64 { return CodeBase + uint64(len(code)) }
	switch abi {
	case target.X86_64:
		// movabs $v,%r for every register but %rsp (ModRM numbers).
		hw := []int{0, 3, 1, 2, 6, 7, 5, 8, 9, 10, 11, 12, 13, 14, 15}
		for i, r := range hw {
			rex := byte(0x48)
			if r >= 8 {
				rex = 0x49
			}
			code = append(code, rex, 0xb8+byte(r&7))
			code = binary.LittleEndian.AppendUint64(code, 0x1111_0000_0000_0000*uint64(i+1)+uint64(r))
		}
		code = append(code, 0x48, 0x39, 0xd8) // cmp %rbx,%rax
		p.at = mark()
		code = append(code, 0x74, 0x07)                               // je +7
		code = append(code, 0x49, 0xc7, 0xc4, 0x11, 0x11, 0x00, 0x00) // mov $0x1111,%r12
		code = append(code, 0xb9, loopN, 0, 0, 0)                     // mov $3,%ecx
		p.loop = mark()
		code = append(code, 0x48, 0x83, 0xc6, 0x01) // add $1,%rsi
		code = append(code, 0xff, 0xc9)             // dec %ecx
		code = append(code, 0x75, 0xf8)             // jne loop
		p.exit = mark()
		code = append(code, 0x90) // nop (the exit)
		p.handler = mark()
		for _, r := range hw {
			rex := byte(0x48)
			if r >= 8 {
				rex = 0x49
			}
			code = append(code, rex, 0xc7, 0xc0+byte(r&7), 0x77, 0x77, 0, 0) // mov $0x7777,%r
		}
		code = append(code, 0x48, 0x39, 0xc0) // cmp %rax,%rax: ZF set, the compare's clear
		code = append(code, 0xfd)             // std: DF set
		code = append(code, 0xc3)             // ret, through pretcode
		p.bad = mark()
		code = append(code, 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05) // mov $39,%eax; syscall (getpid)
		code = append(code, 0x90)
		p.restorer = mark()
		code = append(code, 0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05) // mov $15,%eax; syscall
		p.regs = []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15}
	case target.AArch64, target.AArch64BE:
		var w []uint32
		movz := func(r int, imm uint16, hw int) uint32 {
			return 0xd2800000 | uint32(hw)<<21 | uint32(imm)<<5 | uint32(r)
		}
		movk := func(r int, imm uint16, hw int) uint32 {
			return 0xf2800000 | uint32(hw)<<21 | uint32(imm)<<5 | uint32(r)
		}
		for r := 0; r <= 30; r++ {
			w = append(w, movz(r, uint16(0x100+r), 0), movk(r, uint16(0x1111*(r%15+1)), 3))
		}
		w = append(w, 0xeb01001f) // cmp x0, x1
		p.at = CodeBase + 4*uint64(len(w))
		w = append(w, 0x54000040)          // b.eq +8
		w = append(w, movz(12, 0x1111, 0)) // mov x12, #0x1111
		w = append(w, movz(9, loopN, 0))   // mov x9, #3
		p.loop = CodeBase + 4*uint64(len(w))
		w = append(w, 0x91000421) // add x1, x1, #1
		w = append(w, 0xf1000529) // subs x9, x9, #1
		w = append(w, 0x54ffffc1) // b.ne loop
		p.exit = CodeBase + 4*uint64(len(w))
		w = append(w, 0xd503201f) // nop (the exit)
		p.handler = CodeBase + 4*uint64(len(w))
		for r := 0; r <= 29; r++ {
			w = append(w, movz(r, 0x7777, 0))
		}
		w = append(w, 0xeb00001f) // cmp x0, x0: Z set, the compare's clear
		w = append(w, 0xd65f03c0) // ret
		p.bad = CodeBase + 4*uint64(len(w))
		w = append(w, movz(8, 172, 0), 0xd4000001, 0xd503201f) // mov x8, #172; svc #0 (getpid); nop
		p.restorer = CodeBase + 4*uint64(len(w))
		w = append(w, movz(8, 139, 0), 0xd4000001) // mov x8, #139; svc #0
		code = le32(w...)
		for r := 0; r <= 30; r++ {
			p.regs = append(p.regs, r)
		}
	case target.S390X:
		for r := 0; r <= 14; r++ {
			code = append(code, be(0xc0, r<<4|8, uint32(0x1111_0000*uint32(r+1)))...) // iihf %rN,hi
			code = append(code, be(0xc0, r<<4|9, uint32(0x100+r))...)                 // iilf %rN,lo
		}
		for f := 0; f < 16; f++ {
			code = append(code, be(0xb3, 0xc1, 0, f<<4|(f%15))...) // ldgr %fN,%rN%15
		}
		code = append(code, be(0xb9, 0x20, 0, 0x23)...) // cgr %r2,%r3
		p.at = mark()
		code = append(code, be(0xa7, 0x84, uint16(4))...)      // je +8
		code = append(code, be(0xa7, 0xc9, uint16(0x1111))...) // lghi %r12,0x1111
		code = append(code, be(0xa7, 0x19, uint16(loopN))...)  // lghi %r1,3
		p.loop = mark()
		code = append(code, be(0xa7, 0x3b, uint16(1))...)         // aghi %r3,1
		code = append(code, be(0xa7, 0x17, uint16(0xffff&-2))...) // brctg %r1,loop (-4 bytes)
		p.exit = mark()
		code = append(code, 0x07, 0x07) // nopr %r7 (the exit)
		p.handler = mark()
		for r := 0; r <= 13; r++ {
			code = append(code, be(0xa7, r<<4|9, uint16(0x7777))...) // lghi %rN,0x7777
		}
		for f := 0; f < 16; f++ {
			code = append(code, be(0xb3, 0xc1, 0, f<<4)...) // ldgr %fN,%r0
		}
		code = append(code, be(0xb9, 0x20, 0, 0x00)...) // cgr %r0,%r0: CC 0
		code = append(code, 0x07, 0xfe)                 // br %r14
		p.bad = mark()
		code = append(code, 0x0a, 20, 0x07, 0x07) // svc 20 (getpid); nopr
		p.restorer = mark()
		code = append(code, 0x0a, 0xad) // svc 173
		for r := 0; r < 32; r++ {
			if r != 15 {
				p.regs = append(p.regs, r)
			}
		}
	}
	p.code = code
	return p
}

// state is what a step sees: the registers the test tracks and the flags.
type state struct {
	regs  [32]uint64
	flags uint64
}

func (m *Machine) stateAt(s *Step, regs []int) state {
	var st state
	for _, r := range regs {
		st.regs[r], _ = s.Regs.Get(r)
	}
	st.regs[m.abi.SP()], _ = s.Regs.Get(m.abi.SP())
	st.flags, _ = m.u.RegRead(m.t.flags)
	return st
}

// TestSignalDeliveryAndReturn runs each program without a signal and with
// one between the compare and its branch, and once in a loop's second
// iteration: the handler starts with the frame and registers the kernel
// gives it, and after rt_sigreturn every register and the flags are as in
// the run without a signal, so the branch goes the same way and the run
// ends in the same state.
func TestSignalDeliveryAndReturn(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			p := sigProgramFor(abi)
			m.Track(p.regs...)
			l := sigframe.Of(abi)
			run := func(sig *Signal) (map[uint64][]state, []uint64, int) {
				seen := map[uint64][]state{}
				var pcs []uint64
				n, err := m.Execute(&Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: p.exit, Budget: 1000, Signal: sig}, func(s *Step) error {
					seen[s.Regs.PC] = append(seen[s.Regs.PC], m.stateAt(s, p.regs))
					pcs = append(pcs, s.Regs.PC)
					return nil
				})
				if err != nil {
					t.Fatalf("signal %+v: %v", sig, err)
				}
				return seen, pcs, n
			}
			plain, plainPCs, plainN := run(nil)
			for _, c := range []struct {
				name  string
				at    uint64
				count int
			}{{"between compare and branch", p.at, 0}, {"loop, second iteration", p.loop, 2}} {
				sig := &Signal{At: c.at, Count: c.count, Signo: 10, Handler: p.handler, Restorer: p.restorer}
				got, pcs, n := run(sig)
				k := max(c.count, 1) - 1
				before := plain[c.at][k]
				// The handler's entry.
				if len(got[p.handler]) != 1 {
					t.Fatalf("%s: handler entered %d times", c.name, len(got[p.handler]))
				}
				h := got[p.handler][0]
				sp := before.regs[abi.SP()]
				frame := l.Frame(sp)
				if h.regs[abi.SP()] != frame {
					t.Errorf("%s: handler SP %#x, the kernel's frame for SP %#x is at %#x", c.name, h.regs[abi.SP()], sp, frame)
				}
				var mem map[string]uint64
				switch abi {
				case target.X86_64:
					mem = map[string]uint64{"rdi": h.regs[5], "rsi": h.regs[4] - frame, "rdx": h.regs[1] - frame}
				case target.S390X:
					mem = map[string]uint64{"r2": h.regs[2], "r3": h.regs[3] - frame, "r4": h.regs[4] - frame}
				default:
					mem = map[string]uint64{"x0": h.regs[0], "x1": h.regs[1] - frame, "x2": h.regs[2] - frame, "x29": h.regs[29] - frame}
				}
				want := map[string]uint64{"rdi": 10, "rsi": l.Info, "rdx": l.UContext, "r2": 10, "r3": l.Info, "r4": l.UContext,
					"x0": 10, "x1": l.Info, "x2": l.UContext, "x29": uint64(l.Record)}
				for k, v := range mem {
					if v != want[k] {
						t.Errorf("%s: handler's %s = %#x (from the frame), want %#x", c.name, k, v, want[k])
					}
				}
				// The interrupted instruction, after the handler, sees the
				// state it would have without the signal.
				after := got[c.at][k]
				if after != before {
					t.Errorf("%s: state at %#x after the signal\n %+v\nwithout a signal\n %+v", c.name, c.at, after, before)
				}
				if n != plainN+handlerSteps(pcs, p) {
					t.Errorf("%s: %d steps, %d without the signal plus %d in the handler and trampoline", c.name, n, plainN, handlerSteps(pcs, p))
				}
				if last := got[p.exit-insnLen(abi)]; fmt.Sprint(last) != fmt.Sprint(plain[p.exit-insnLen(abi)]) {
					t.Errorf("%s: the last instruction sees %+v, without the signal %+v", c.name, last, plain[p.exit-insnLen(abi)])
				}
			}
			if len(plainPCs) == 0 || plain[p.handler] != nil {
				t.Fatal("the run without a signal entered the handler")
			}
			// A signal due at an instruction the run never reaches is never
			// delivered.
			never, _, n := run(&Signal{At: p.loop, Count: loopN + 1, Signo: 10, Handler: p.handler, Restorer: p.restorer})
			if never[p.handler] != nil || n != plainN {
				t.Errorf("a signal due at the 4th execution of a 3-iteration loop ran the handler (%d steps, %d without)", n, plainN)
			}
		})
	}
}

func insnLen(abi target.Target) uint64 {
	switch abi {
	case target.X86_64:
		return 2 // jne loop
	case target.S390X:
		return 4
	}
	return 4
}

func handlerSteps(pcs []uint64, p sigProgram) int {
	n := 0
	for _, pc := range pcs {
		if pc >= p.handler {
			n++
		}
	}
	return n
}

// TestSignalFaults: without a delivered signal, and for any other system
// call, a system call instruction is a fault; so is a frame that does not
// fit the stack.
func TestSignalFaults(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			p := sigProgramFor(abi)
			sig := &Signal{At: p.at, Signo: 10, Handler: p.handler, Restorer: p.restorer}
			// rt_sigreturn with no signal delivered.
			_, err := m.Execute(&Run{Code: p.code, CodeAddr: CodeBase, Entry: p.restorer, Exit: p.exit, Budget: 100, Signal: sig}, nil)
			if !errors.Is(err, ErrFault) {
				t.Errorf("rt_sigreturn without a signal: err %v, want a fault", err)
			}
			// Another system call in the handler.
			bad := *sig
			bad.Restorer = p.bad
			_, err = m.Execute(&Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: p.exit, Budget: 1000, Signal: &bad}, nil)
			var re *RunError
			if !errors.As(err, &re) || !errors.Is(err, ErrFault) || re.PC != p.bad+map[target.Target]uint64{target.X86_64: 5, target.S390X: 0}[abi]+a64Off(abi) {
				t.Errorf("getpid in place of rt_sigreturn: %v", err)
			}
			// The machine still runs programs with signals.
			if _, err := m.Execute(&Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: p.exit, Budget: 1000, Signal: sig}, nil); err != nil {
				t.Errorf("after the faults: %v", err)
			}
		})
	}
}

func a64Off(abi target.Target) uint64 {
	if abi.IsAArch64() {
		return 4
	}
	return 0
}

// BenchmarkSignal measures what a signal adds to a run: its delivery, the
// handler, rt_sigreturn and the two restarts of the emulation, against
// the same program run without the signal.
func BenchmarkSignal(b *testing.B) {
	for _, abi := range target.All {
		p := sigProgramFor(abi)
		for _, sig := range []*Signal{nil, {At: p.at, Signo: 10, Handler: p.handler, Restorer: p.restorer}} {
			name := abi.Name() + "/none"
			if sig != nil {
				name = abi.Name() + "/signal"
			}
			b.Run(name, func(b *testing.B) {
				m := newMachine(b, abi)
				run := &Run{Code: p.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: p.exit, Budget: 1000, Signal: sig}
				for b.Loop() {
					if _, err := m.Execute(run, func(*Step) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
