package emu

import (
	"errors"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// lenientRun runs code at CodeBase with Lenient l (Inside: the code
// itself when l has none) and returns the return register at the end.
func lenientRun(t *testing.T, m *Machine, code []byte, regs map[int]uint64, l *Lenient) (uint64, int, error) {
	t.Helper()
	if l != nil && l.Inside == nil {
		l.Inside = []Range{{CodeBase, CodeBase + uint64(len(code))}}
	}
	steps, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(code)), Regs: regs, Budget: 100, Lenient: l}, nil)
	ret := 0
	if m.ABI() == target.S390X {
		ret = 2
	}
	v, rerr := m.Reg(ret)
	if rerr != nil {
		t.Fatal(rerr)
	}
	return v, steps, err
}

// A call through a register to an address outside the image returns 0
// at once; the instruction after the call adds 1.
var callOut = map[target.Target]struct {
	code []byte
	reg  int // the register holding the call's target
}{
	target.X86_64:    {cat([]byte{0xff, 0xd2}, []byte{0x48, 0x83, 0xc0, 0x01}), 1},             // call *%rdx; add $1,%rax
	target.AArch64:   {cat([]byte{0x20, 0x00, 0x3f, 0xd6}, []byte{0x00, 0x04, 0x00, 0x91}), 1}, // blr x1; add x0,x0,#1
	target.AArch64BE: {cat([]byte{0x20, 0x00, 0x3f, 0xd6}, []byte{0x00, 0x04, 0x00, 0x91}), 1},
	target.S390X:     {cat([]byte{0x0d, 0xe3}, []byte{0xa7, 0x2b, 0x00, 0x01}), 3}, // basr %r14,%r3; aghi %r2,1
}

func TestLenientExternalCall(t *testing.T) {
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			c := callOut[abi]
			ret := 0
			if abi == target.S390X {
				ret = 2
			}
			// Unmapped, mapped but not executable (the stack), mapped and
			// executable (the code region) but outside the image.
			for _, to := range []uint64{0x123456789000, InitialSP + 0x400, CodeBase + 0x8000} {
				regs := map[int]uint64{c.reg: to, ret: 7}
				v, steps, err := lenientRun(t, m, c.code, regs, &Lenient{})
				if err != nil || v != 1 || steps != 2 || m.Served().Externals != 1 {
					t.Errorf("call to %#x: return register %d, %d steps, served %+v, err %v; want 1, 2 steps, one external", to, v, steps, m.Served(), err)
				}
				if _, _, err := lenientRun(t, m, c.code, regs, nil); to != CodeBase+0x8000 && !errors.Is(err, ErrFault) {
					t.Errorf("call to %#x without Lenient: %v, want a fault", to, err)
				}
			}
			// A return address outside the image is a fault, not a loop.
			out := &Lenient{Inside: []Range{{CodeBase + 1, CodeBase + 2}}}
			if _, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: 0x123456789000}, out); err == nil {
				t.Errorf("return outside the image: no error")
			}
		})
	}
}

var syscallCode = map[target.Target][]byte{
	target.X86_64:    cat([]byte{0x0f, 0x05}, []byte{0x48, 0x83, 0xc0, 0x01}),             // syscall; add $1,%rax
	target.AArch64:   cat([]byte{0x01, 0x00, 0x00, 0xd4}, []byte{0x00, 0x04, 0x00, 0x91}), // svc #0; add x0,x0,#1
	target.AArch64BE: cat([]byte{0x01, 0x00, 0x00, 0xd4}, []byte{0x00, 0x04, 0x00, 0x91}), // same
	target.S390X:     cat([]byte{0x0a, 0x14}, []byte{0xa7, 0x2b, 0x00, 0x01}),             // svc 20 (getpid); aghi %r2,1
}

func TestLenientSyscall(t *testing.T) {
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			ret := 0
			if abi == target.S390X {
				ret = 2
			}
			regs := map[int]uint64{ret: 7}
			v, steps, err := lenientRun(t, m, syscallCode[abi], regs, &Lenient{})
			if err != nil || v != 1 || steps != 2 || m.Served().Syscalls != 1 {
				t.Errorf("return register %d, %d steps, served %+v, err %v; want 1, 2 steps, one system call", v, steps, m.Served(), err)
			}
			if _, _, err := lenientRun(t, m, syscallCode[abi], regs, nil); !errors.Is(err, ErrFault) {
				t.Errorf("without Lenient: %v, want a fault", err)
			}
		})
	}
}

// A load through a register from unmapped memory.
var loadCode = map[target.Target]struct {
	code []byte
	reg  int
}{
	target.X86_64:    {[]byte{0x48, 0x8b, 0x02}, 1},                   // mov (%rdx),%rax
	target.AArch64:   {[]byte{0x20, 0x00, 0x40, 0xf9}, 1},             // ldr x0,[x1]
	target.AArch64BE: {[]byte{0x20, 0x00, 0x40, 0xf9}, 1},             // same
	target.S390X:     {[]byte{0xe3, 0x20, 0x30, 0x00, 0x00, 0x04}, 3}, // lg %r2,0(%r3)
}

func TestLenientPages(t *testing.T) {
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			c := loadCode[abi]
			at := uint64(0x50000010) // in no region
			if abi == target.S390X {
				at = 0x2010 // the low window: s390x reports no address to map on demand
			}
			for _, fill := range []uint64{0, 0x100} {
				v, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: at}, &Lenient{Fill: fill})
				want := at ^ fill
				if fill == 0 {
					want = 0
				}
				if err != nil || v != want || m.Served().Pages == 0 {
					t.Errorf("fill %#x: loaded %#x, served %+v, err %v; want %#x", fill, v, m.Served(), err, want)
				}
				// The pages are gone after the run.
				if _, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: at}, nil); !errors.Is(err, ErrFault) {
					t.Errorf("fill %#x: the same load without Lenient: %v, want a fault", fill, err)
				}
			}
			if abi == target.S390X {
				// Outside the window an unmapped access stays a fault.
				if _, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: 0x50000010}, &Lenient{}); !errors.Is(err, ErrFault) {
					t.Errorf("s390x outside the window: %v, want a fault", err)
				}
				return
			}
			// MaxPages bounds the pages: a load that straddles two pages
			// needs both.
			straddle := uint64(0x50000ffc)
			if _, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: straddle}, &Lenient{MaxPages: 1}); !errors.Is(err, ErrFault) {
				t.Errorf("two pages with MaxPages 1: %v, want a fault", err)
			}
			if _, _, err := lenientRun(t, m, c.code, map[int]uint64{c.reg: straddle}, &Lenient{MaxPages: 2}); err != nil || m.Served().Pages != 2 {
				t.Errorf("two pages with MaxPages 2: served %+v, %v", m.Served(), err)
			}
		})
	}
}

// ReadWord reads the pages a lenient run mapped on demand, as the oracle
// must when an argument moved the SP onto one.
func TestLenientReadWord(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	for _, at := range []uint64{0x50000010, 0xfffffffead001fc8} { // the second: an SP a size argument moved
		lenientReadWord(t, m, at)
	}
}

func lenientReadWord(t *testing.T, m *Machine, at uint64) {
	var got uint64
	var ok bool
	code := cat([]byte{0x48, 0x8b, 0x02}, x86Nop) // mov (%rdx),%rax; nop
	onStep := func(s *Step) error {
		if s.Index == 1 {
			got, ok = s.ReadWord(at + 8)
		}
		return nil
	}
	l := &Lenient{Inside: []Range{{CodeBase, CodeBase + uint64(len(code))}}, Fill: 0x100}
	if _, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(code)), Regs: map[int]uint64{1: at}, Budget: 10, Lenient: l}, onStep); err != nil {
		t.Fatal(err)
	}
	// The pattern is made from the address Unicorn reports (52 bits on x86-64).
	if want := ((at + 8) & (1<<52 - 1)) ^ 0x100; !ok || got != want {
		t.Errorf("ReadWord(%#x) = %#x, %v; want %#x", at+8, got, ok, want)
	}
	if _, ok := m.readWord(at); ok {
		t.Errorf("ReadWord reads a demand page after the run")
	}
}

// An exit system call ends a lenient run with ErrExit: nothing after it
// runs.
func TestLenientExit(t *testing.T) {
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			regs := map[int]uint64{0: 60} // %rax
			code := syscallCode[abi]
			switch abi {
			case target.AArch64, target.AArch64BE:
				regs = map[int]uint64{8: 93}
			case target.S390X:
				regs, code = nil, cat([]byte{0x0a, 0x01}, []byte{0xa7, 0x2b, 0x00, 0x01}) // svc 1 (exit)
			}
			_, steps, err := lenientRun(t, m, code, regs, &Lenient{})
			if !errors.Is(err, ErrExit) || steps != 1 {
				t.Errorf("exit: %d steps, %v; want 1 step and ErrExit", steps, err)
			}
		})
	}
}
