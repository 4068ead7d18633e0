package emu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// Hand-encoded programs, with the instruction each group of bytes is.

func newMachine(t testing.TB, abi target.Target) *Machine {
	t.Helper()
	m, err := New(abi)
	if err != nil {
		t.Fatalf("New(%s): %v", abi.Name(), err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// run executes code at CodeBase up to its end.
func run(m *Machine, code []byte, regs map[int]uint64, onStep func(*Step) error) (int, error) {
	return m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(code)), Regs: regs, Budget: 1000}, onStep)
}

var (
	x86Nop  = []byte{0x90} // nop
	a64Nop  = []byte{0x1f, 0x20, 0x03, 0xd5}
	s390Nop = []byte{0x07, 0x00} // bcr 0,%r0 (nopr)
)

// TestCoreAgreesWithBinding runs a couple of instructions with a known
// result on every target: the binding's constants, the header the cgo
// helpers compiled against and the installed library must agree for this
// to work.
func TestCoreAgreesWithBinding(t *testing.T) {
	t.Parallel()
	major, minor := uc.Version()
	if major != 2 || minor != 1 {
		t.Fatalf("Unicorn core is %d.%d, want 2.1.x", major, minor)
	}
	if v := CoreVersion(); !strings.HasPrefix(v, "2.1.") {
		t.Fatalf("CoreVersion() = %q, want 2.1.x", v)
	}
	cases := []struct {
		abi  target.Target
		code []byte
		reg  int
	}{
		{target.X86_64, []byte{
			0xb8, 0x05, 0x00, 0x00, 0x00, // mov $5,%eax
			0x83, 0xc0, 0x03, // add $3,%eax
		}, 0},
		{target.AArch64, []byte{
			0xa0, 0x00, 0x80, 0xd2, // mov x0, #5
			0x00, 0x0c, 0x00, 0x91, // add x0, x0, #3
		}, 0},
		{target.AArch64BE, []byte{
			0xa0, 0x00, 0x80, 0xd2, // mov x0, #5
			0x00, 0x0c, 0x00, 0x91, // add x0, x0, #3
		}, 0},
		{target.S390X, []byte{
			0xa7, 0x29, 0x00, 0x05, // lghi %r2,5
			0xa7, 0x2b, 0x00, 0x03, // aghi %r2,3
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, c.abi)
			n, err := run(m, c.code, map[int]uint64{c.reg: 0xdead}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Errorf("executed %d instructions, want 2", n)
			}
			got, err := m.Reg(c.reg)
			if err != nil {
				t.Fatal(err)
			}
			if got != 8 {
				t.Errorf("DWARF register %d = %#x, want 8", c.reg, got)
			}
			if sp, _ := m.Reg(c.abi.SP()); sp != InitialSP {
				t.Errorf("SP = %#x, want %#x", sp, uint64(InitialSP))
			}
		})
	}
}

// TestStepsAndPCs checks every instruction is reported once, in order,
// with the hook's PC, and that the exit is not executed.
func TestStepsAndPCs(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	code := []byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0x5d, // pop %rbp
		0xc3, // ret (the exit: never executed)
	}
	var pcs []uint64
	var idx []int
	var sps, fps []uint64
	n, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 5, Budget: 10,
		Regs: map[int]uint64{6: 0x1234}}, func(s *Step) error {
		pcs = append(pcs, s.Regs.PC)
		idx = append(idx, s.Index)
		sp, ok1 := s.Regs.Get(7)
		fp, ok2 := s.Regs.Get(6)
		if !ok1 || !ok2 {
			return errors.New("SP or FP not valid")
		}
		sps, fps = append(sps, sp), append(fps, fp)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("steps = %d, want 3", n)
	}
	want := []uint64{CodeBase, CodeBase + 1, CodeBase + 4}
	if fmt.Sprint(pcs) != fmt.Sprint(want) || fmt.Sprint(idx) != "[0 1 2]" {
		t.Errorf("pcs %x indexes %v, want %x [0 1 2]", pcs, idx, want)
	}
	wantSP := []uint64{InitialSP, InitialSP - 8, InitialSP - 8}
	wantFP := []uint64{0x1234, 0x1234, InitialSP - 8}
	if fmt.Sprint(sps) != fmt.Sprint(wantSP) || fmt.Sprint(fps) != fmt.Sprint(wantFP) {
		t.Errorf("sp %x fp %x, want %x %x", sps, fps, wantSP, wantFP)
	}
}

// TestReadWordSeesPush stores a word on the stack and reads it back at the
// next step, on all four targets. The read one byte further shows the byte
// order of memory independently of ReadWord's own decoding of the aligned word.
func TestReadWordSeesPush(t *testing.T) {
	t.Parallel()
	const v = 0x1122334455667788
	cases := []struct {
		abi   target.Target
		code  []byte
		reg   int
		delta uint64 // how far the SP moved
	}{
		{target.X86_64, cat([]byte{
			0x50, // push %rax
		}, x86Nop), 0, 8},
		{target.AArch64, cat([]byte{
			0xe0, 0x0f, 0x1f, 0xf8, // str x0, [sp, #-16]!
		}, a64Nop), 0, 16},
		{target.AArch64BE, cat([]byte{
			0xe0, 0x0f, 0x1f, 0xf8, // str x0, [sp, #-16]!
		}, a64Nop), 0, 16},
		{target.S390X, cat([]byte{
			0xa7, 0xfb, 0xff, 0xf8, // aghi %r15,-8
			0xe3, 0x20, 0xf0, 0x00, 0x00, 0x24, // stg %r2,0(%r15)
		}, s390Nop), 2, 8},
	}
	for _, c := range cases {
		t.Run(c.abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, c.abi)
			for round := 0; round < 2; round++ { // the second run sees a reset stack
				var at, off1, before uint64
				var ok bool
				last := -1
				_, err := run(m, c.code, map[int]uint64{c.reg: v}, func(s *Step) error {
					sp, _ := s.Regs.Get(c.abi.SP())
					if s.Index == 0 {
						before, _ = s.ReadWord(InitialSP - c.delta)
					}
					last = s.Index
					at, ok = s.ReadWord(sp)
					off1, _ = s.ReadWord(sp + 1)
					if sp != InitialSP-c.delta && s.Regs.PC == CodeBase+uint64(len(c.code)-len(x86Nop)) {
						return fmt.Errorf("sp %#x", sp)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if before != 0 {
					t.Errorf("round %d: stack slot held %#x before the store, want 0", round, before)
				}
				if !ok || at != v {
					t.Errorf("round %d (last step %d): ReadWord(SP) = %#x, %v; want %#x", round, last, at, ok, uint64(v))
				}
				want1 := uint64(0x0011223344556677) // bytes 77 66 .. 11 00
				if c.abi.ByteOrder().String() == "BigEndian" {
					want1 = 0x2233445566778800 // bytes 22 33 .. 88 00
				}
				if off1 != want1 {
					t.Errorf("round %d: ReadWord(SP+1) = %#x, want %#x", round, off1, want1)
				}
			}
		})
	}
}

func TestReadWordBounds(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	_, err := run(m, x86Nop, nil, func(s *Step) error {
		for _, c := range []struct {
			addr uint64
			ok   bool
		}{
			{StackBase, true}, {StackTop - 8, true}, {StackTop - 7, false}, {StackBase - 1, false},
			{StackBase - 8, false}, {StackTop, false}, {0, false}, {^uint64(0), false},
			{CodeBase, true}, {CodeBase - 8, false}, {CodeBase + CodeSize - 8, true}, {CodeBase + CodeSize - 4, false},
			{LowCodeBase, true}, {LowCodeBase + LowCodeSize - 8, true}, {LowCodeBase + LowCodeSize - 4, false}, {LowCodeBase - 8, false},
		} {
			if _, ok := s.ReadWord(c.addr); ok != c.ok {
				return fmt.Errorf("ReadWord(%#x) ok = %v, want %v", c.addr, ok, c.ok)
			}
		}
		if w, _ := s.ReadWord(CodeBase); w&0xff != 0x90 {
			return fmt.Errorf("ReadWord(CodeBase) = %#x, want the nop in its low byte", w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPointerAuth checks that paciasp and pacibsp really sign x30 (key A
// and key B: SCTLR_EL1.EnIA and EnIB), each with its own key, and autiasp
// and autibsp restore it.
func TestPointerAuth(t *testing.T) {
	t.Parallel()
	code := cat([]byte{
		0x3f, 0x23, 0x03, 0xd5, // paciasp
	}, a64Nop, []byte{
		0xbf, 0x23, 0x03, 0xd5, // autiasp
	}, a64Nop, []byte{
		0x7f, 0x23, 0x03, 0xd5, // pacibsp
	}, a64Nop, []byte{
		0xff, 0x23, 0x03, 0xd5, // autibsp
	}, a64Nop)
	const lr = 0x10000abc
	for _, abi := range []target.Target{target.AArch64, target.AArch64BE} {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, abi)
			for round := 0; round < 2; round++ { // stays enabled across runs
				var x30 [8]uint64
				_, err := run(m, code, map[int]uint64{30: lr}, func(s *Step) error {
					x30[s.Index], _ = s.Regs.Get(30)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if x30[0] != lr {
					t.Errorf("x30 before paciasp = %#x", x30[0])
				}
				if x30[1] == x30[5] {
					t.Errorf("paciasp and pacibsp both sign %#x as %#x: keys A and B are the same", lr, x30[1])
				}
				for i, key := range []string{"paciasp", "pacibsp"} {
					signed, authed := x30[4*i+1], x30[4*i+3]
					if signed == lr || signed&0xffffffffffff != lr {
						t.Errorf("x30 after %s = %#x: want %#x with a signature in the top bits", key, signed, lr)
					}
					if authed != lr {
						t.Errorf("x30 after aut%s = %#x, want %#x", key[3:], authed, lr)
					}
				}
			}
		})
	}
}

// TestS390XFloatRegisters moves a value through FPRs and reads them
// through Track, checking the DWARF numbering of f0 (16) and f1 (20).
func TestS390XFloatRegisters(t *testing.T) {
	t.Parallel()
	const v = 0x0123456789abcdef
	m := newMachine(t, target.S390X)
	m.Track(16, 20, 2)
	code := cat([]byte{
		0xb3, 0xc1, 0x00, 0x0e, // ldgr %f0,%r14
		0xb3, 0xc1, 0x00, 0x1e, // ldgr %f1,%r14
		0xb3, 0xcd, 0x00, 0x20, // lgdr %r2,%f0
	}, s390Nop)
	var f0, f1, r2 [4]uint64
	_, err := run(m, code, map[int]uint64{14: v}, func(s *Step) error {
		f0[s.Index], _ = s.Regs.Get(16)
		f1[s.Index], _ = s.Regs.Get(20)
		r2[s.Index], _ = s.Regs.Get(2)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if f0[0] != 0 || f0[1] != v || f1[1] != 0 || f1[2] != v || r2[2] != 0 || r2[3] != v {
		t.Errorf("f0 %x, f1 %x, r2 %x: want the value to appear in f0 at step 1, f1 at 2, r2 at 3", f0, f1, r2)
	}
}

// TestNoStaleCode runs programs at the same address: each must run as
// written, and stop at its own exit, not an earlier run's. The jump keeps
// the changed instruction out of the block Unicorn itself retranslates
// after each run (the one ending at the exit).
func TestNoStaleCode(t *testing.T) {
	t.Parallel()
	prog := func(v byte) []byte {
		return []byte{
			0xb8, v, 0x00, 0x00, 0x00, // mov $v,%eax
			0xeb, 0x02, // jmp .+4
			0x90, 0x90, // nop; nop (skipped)
			0x90, // nop
			0x90, // nop (exit)
		}
	}
	rec := func(rax *[]uint64) func(s *Step) error {
		return func(s *Step) error {
			v, _ := s.Regs.Get(0)
			*rax = append(*rax, v)
			return nil
		}
	}
	exec := func(m *Machine, code []byte, exit uint64) (int, []uint64, error) {
		var rax []uint64
		n, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + exit, Budget: 100}, rec(&rax))
		return n, rax, err
	}

	// Both hazards are real (measured with Unicorn 2.1.4): on a machine
	// that does not invalidate, the rewritten program runs the first one's
	// translation, and a run whose exit lies inside a block translated for
	// another exit runs through it. Should a Unicorn drop stale blocks by
	// itself, this fails: the checks below would then pass without
	// Execute's invalidation and would have to find another hazard.
	raw := newMachine(t, target.X86_64)
	raw.Track(0)
	raw.noInvalidate = true
	if n, rax, err := exec(raw, prog(1), 10); err != nil || fmt.Sprint(rax) != "[0 1 1]" {
		t.Fatalf("first program without invalidation: %d steps, rax %v, %v; want rax [0 1 1]", n, rax, err)
	}
	if n, rax, err := exec(raw, prog(2), 10); err != nil || fmt.Sprint(rax) != "[0 1 1]" {
		t.Fatalf("without invalidation the rewritten program gave %d steps, rax %v, %v; want the stale translation "+
			"of the first program (rax [0 1 1]): this Unicorn drops stale code by itself", n, rax, err)
	}
	if n, _, err := exec(raw, prog(2), 5); err == nil && n == 1 {
		t.Fatal("without invalidation a run stopped at an exit inside a block translated for another exit: " +
			"this Unicorn drops stale exits by itself")
	}

	m := newMachine(t, target.X86_64)
	m.Track(0)
	for _, v := range []byte{1, 2, 2, 1, 3} { // 2 twice: the same image again
		n, rax, err := exec(m, prog(v), 10)
		if err != nil || n != 3 || fmt.Sprint(rax) != fmt.Sprintf("[0 %d %d]", v, v) {
			t.Fatalf("program %d: %d steps, rax %v, %v; want 3 steps, rax [0 %d %d]", v, n, rax, err, v, v)
		}
	}
	// An exit the cached code ran through, and back.
	for _, c := range []struct {
		exit  uint64
		steps int
	}{{9, 2}, {10, 3}, {5, 1}, {10, 3}} {
		n, _, err := exec(m, prog(3), c.exit)
		if err != nil || n != c.steps {
			t.Errorf("exit at +%d: %d steps, %v; want %d", c.exit, n, err, c.steps)
		}
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	type fault struct {
		name  string
		code  []byte
		regs  map[int]uint64
		pc    uint64
		index int
		text  string // in the disassembly; "" when the instruction is unreadable
		cause string // in the cause
		kind  error
	}
	good := map[target.Target][]byte{
		target.X86_64:    x86Nop,
		target.AArch64:   a64Nop,
		target.AArch64BE: a64Nop,
		target.S390X:     s390Nop,
	}
	a64 := []fault{
		{"read", cat(a64Nop, []byte{0x20, 0x00, 0x40, 0xf9}), nil, CodeBase + 4, 1, "ldr", "unmapped read at 0x0", ErrFault},                                                 // ldr x0, [x1]
		{"write", []byte{0x20, 0x00, 0x00, 0xf9}, map[int]uint64{1: 0x5000}, CodeBase, 0, "str", "unmapped write at 0x5000", ErrFault},                                       // str x0, [x1]
		{"fetch", []byte{0x00, 0x00, 0x1f, 0xd6}, map[int]uint64{0: 0x4000}, 0x4000, 1, "", "unmapped fetch at 0x4000", ErrFault},                                            // br x0
		{"brk", []byte{0x00, 0x00, 0x20, 0xd4}, nil, CodeBase, 0, "brk", "interrupt 7 (breakpoint)", ErrFault},                                                               // brk #0
		{"svc", []byte{0x01, 0x00, 0x00, 0xd4}, nil, CodeBase, 0, "svc", "supervisor call", ErrFault},                                                                        // svc #0
		{"udf", cat(a64Nop, []byte{0x00, 0x00, 0x00, 0x00}), nil, CodeBase + 4, 1, "(bad)", "undefined instruction", ErrFault},                                               // udf #0
		{"stack guard", []byte{0xe0, 0x0f, 0x1f, 0xf8, 0xff, 0xff, 0xff, 0x17}, nil, CodeBase, 2 * (StackSize - 4096) / 16, "str", "unmapped write at 0x6ffffff0", ErrFault}, // str x0,[sp,#-16]!; b .-4
		{"budget", []byte{0x00, 0x00, 0x00, 0x14}, nil, CodeBase, 1000, "b", "1000 instructions", ErrBudget},                                                                 // b .
	}
	cases := map[target.Target][]fault{
		target.X86_64: {
			{"read", []byte{0x48, 0x8b, 0x04, 0x25, 0x08, 0x00, 0x00, 0x00}, nil, CodeBase, 0, "mov 0x8,%rax", "unmapped read at 0x8", ErrFault},                          // mov 0x8,%rax
			{"write", cat(x86Nop, []byte{0x48, 0x89, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00}), nil, CodeBase + 1, 1, "mov %rax,0x1000", "unmapped write at 0x1000", ErrFault}, // mov %rax,0x1000
			{"fetch", []byte{0xff, 0xe0}, map[int]uint64{0: 0x3000}, 0x3000, 1, "", "unmapped fetch at 0x3000", ErrFault},                                                 // jmp *%rax
			{"stack fetch", []byte{0xff, 0xe0}, map[int]uint64{0: StackBase}, StackBase, 1, "add %al,(%rax)", "fetch from non-executable memory", ErrFault},               // jmp *%rax to the zeroed stack
			{"int3", []byte{0xcc}, nil, CodeBase, 0, "int3", "interrupt 3 (breakpoint)", ErrFault},                                                                        // int3
			{"hlt", cat(x86Nop, []byte{0xf4}, x86Nop), nil, CodeBase + 1, 1, "hlt", "before reaching exit", ErrFault},                                                     // hlt
			{"syscall", cat(x86Nop, []byte{0x0f, 0x05}, x86Nop), nil, CodeBase + 1, 1, "syscall", "system call", ErrFault},                                                // syscall
			{"ud2", []byte{0x0f, 0x0b}, nil, CodeBase, 0, "ud2", "invalid instruction", ErrFault},                                                                         // ud2
			{"stack guard", []byte{0x50, 0xeb, 0xfd}, nil, CodeBase, 2 * (StackSize - 4096) / 8, "push %rax", "unmapped write at 0x6ffffff8", ErrFault},                   // push %rax; jmp .-3
			{"budget", []byte{0xeb, 0xfe}, nil, CodeBase, 1000, "jmp", "1000 instructions", ErrBudget},                                                                    // jmp .
		},
		target.AArch64:   a64,
		target.AArch64BE: a64,
		target.S390X: {
			{"read", []byte{0xe3, 0x20, 0x10, 0x00, 0x00, 0x04}, map[int]uint64{1: 0x8000}, CodeBase, 0, "lg", "program interruption", ErrFault},                                                              // lg %r2,0(%r1)
			{"write", cat(s390Nop, []byte{0xe3, 0x20, 0x10, 0x00, 0x00, 0x24}), map[int]uint64{1: 0x8000}, CodeBase + 2, 1, "stg", "program interruption", ErrFault},                                          // stg %r2,0(%r1)
			{"fetch", []byte{0x07, 0xf1}, map[int]uint64{1: 0x6000}, 0x6000, 1, "", "fetching from unmapped 0x6000", ErrFault},                                                                                // br %r1
			{"invalid", []byte{0x00, 0x00}, nil, CodeBase, 0, ".long 0x0", "program interruption", ErrFault},                                                                                                  // (illegal opcode 0x0000)
			{"svc", []byte{0x0a, 0x00}, nil, CodeBase, 0, "svc", "supervisor call", ErrFault},                                                                                                                 // svc 0
			{"stack guard", []byte{0xa7, 0xfb, 0xff, 0xf8, 0xe3, 0x20, 0xf0, 0x00, 0x00, 0x24, 0xa7, 0xf4, 0xff, 0xfb}, nil, CodeBase + 4, 3*(StackSize-4096)/8 + 1, "stg", "program interruption", ErrFault}, // aghi %r15,-8; stg %r2,0(%r15); j .-10
			{"budget", []byte{0xa7, 0xf4, 0x00, 0x00}, nil, CodeBase, 1000, "j", "1000 instructions", ErrBudget},                                                                                              // j .
		},
	}
	for _, abi := range target.All {
		m := newMachine(t, abi)
		for _, f := range cases[abi] {
			// One machine per target for all its faults (it must stay
			// usable after each): these subtests run one at a time.
			t.Run(abi.Name()+"/"+f.name, func(t *testing.T) {
				budget := 1000
				if f.name == "stack guard" {
					budget = 4 * StackSize / 8 // a loop of 3 instructions down the whole stack
				}
				n, err := m.Execute(&Run{Code: f.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(f.code)), Regs: f.regs, Budget: budget}, nil)
				var re *RunError
				if !errors.As(err, &re) {
					t.Fatalf("got %v (%d steps), want a *RunError", err, n)
				}
				t.Log(err)
				if !errors.Is(err, f.kind) {
					t.Errorf("error %v is not %v", err, f.kind)
				}
				if re.Target != abi || re.PC != f.pc || re.Index != f.index || n != f.index {
					t.Errorf("target %s pc %#x index %d steps %d, want %s %#x %d", re.Target.Name(), re.PC, re.Index, n, abi.Name(), f.pc, f.index)
				}
				if f.text == "" {
					if re.Text != "" || len(re.Insn) != 0 {
						t.Errorf("instruction %q (% x) at %#x, want it unreadable", re.Text, re.Insn, re.PC)
					}
				} else if !strings.Contains(re.Text, f.text) || len(re.Insn) == 0 {
					t.Errorf("instruction %q (% x), want it to mention %q", re.Text, re.Insn, f.text)
				}
				if !strings.Contains(re.Cause.Error(), f.cause) {
					t.Errorf("cause %q, want it to mention %q", re.Cause, f.cause)
				}
				if !strings.HasPrefix(err.Error(), abi.Name()+": ") || !strings.Contains(err.Error(), fmt.Sprintf("pc %#x", f.pc)) {
					t.Errorf("message %q does not name the target and pc", err)
				}
				// The machine stays usable.
				if n, err := run(m, good[abi], nil, nil); err != nil || n != 1 {
					t.Errorf("run after the fault: %d steps, %v", n, err)
				}
			})
		}
	}
}

func TestCallbackError(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	stop := errors.New("stop here")
	code := []byte{0x90, 0x90, 0x90, 0x90} // nop x4
	n, err := run(m, code, nil, func(s *Step) error {
		if s.Index == 2 {
			return stop
		}
		return nil
	})
	var re *RunError
	if !errors.Is(err, stop) || !errors.As(err, &re) || re.Index != 2 || re.PC != CodeBase+2 || n != 2 {
		t.Fatalf("got %d steps, %v; want the callback's error at step 2, pc %#x", n, err, CodeBase+2)
	}
	n, err = run(m, code, nil, func(s *Step) error {
		if s.Index == 1 {
			panic("boom")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") || n != 1 {
		t.Fatalf("panicking callback: %d steps, %v", n, err)
	}
	if n, err := run(m, code, nil, nil); n != 4 || err != nil {
		t.Fatalf("run after callback errors: %d steps, %v", n, err)
	}
}

func TestBadRuns(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	for _, c := range []struct {
		r    Run
		want string
	}{
		{Run{Code: x86Nop, CodeAddr: CodeBase - 1, Entry: CodeBase, Exit: CodeBase + 1, Budget: 1}, "outside the code region"},
		{Run{Code: x86Nop, CodeAddr: CodeBase, Entry: 0, Exit: CodeBase + 1, Budget: 1}, "entry 0x0"},
		{Run{Code: x86Nop, CodeAddr: CodeBase, Entry: CodeBase, Exit: StackBase, Budget: 1}, "exit 0x70000000"},
		{Run{Code: x86Nop, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 1}, "budget 0"},
		{Run{Code: x86Nop, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 1, Budget: 1, Regs: map[int]uint64{7: 1}}, "SP"},
		{Run{Code: x86Nop, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 1, Budget: 1, Regs: map[int]uint64{40: 1}}, "no DWARF register 40"},
	} {
		if _, err := m.Execute(&c.r, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error mentioning %q", c.r, err, c.want)
		}
	}
	m.Track(99)
	if _, err := run(m, x86Nop, nil, nil); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("tracking DWARF 99: got %v", err)
	}
}

func TestNestedExecuteRefused(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	var inner error
	if _, err := run(m, x86Nop, nil, func(*Step) error {
		_, inner = run(m, x86Nop, nil, nil)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if inner == nil || !strings.Contains(inner.Error(), "step callback") {
		t.Fatalf("nested Execute: %v, want a refusal", inner)
	}
}

// TestConcurrentMachines runs one machine per goroutine, each with its own
// loop count, and checks every run counted its own instructions.
func TestConcurrentMachines(t *testing.T) {
	t.Parallel()
	errs := make(chan error, len(target.All))
	for i, abi := range target.All {
		go func() {
			m, err := New(abi)
			if err != nil {
				errs <- err
				return
			}
			defer m.Close()
			l := loops[abi]
			for round := 0; round < 20; round++ {
				iters := 100 + 10*i + round
				steps := 0
				n, err := m.Execute(&Run{Code: l.code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(l.code)),
					Regs: map[int]uint64{l.reg: uint64(iters)}, Budget: 10000}, func(s *Step) error {
					if s.Index != steps {
						return fmt.Errorf("step index %d, want %d", s.Index, steps)
					}
					steps++
					return nil
				})
				if err != nil || n != 2*iters || steps != n {
					errs <- fmt.Errorf("%s round %d: %d steps (%d delivered), %v; want %d", abi.Name(), round, n, steps, err, 2*iters)
					return
				}
			}
			errs <- nil
		}()
	}
	for range target.All {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestRegistersReset checks a run starts from zeroed registers and clear
// flags whatever the previous run left.
func TestRegistersReset(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	m.Track(0, 3)
	dirty := []byte{
		0xf9,                         // stc
		0xbb, 0x07, 0x00, 0x00, 0x00, // mov $7,%ebx
	}
	if _, err := run(m, dirty, nil, nil); err != nil {
		t.Fatal(err)
	}
	if rbx, _ := m.Reg(3); rbx != 7 {
		t.Fatalf("rbx after the first run = %d, want 7", rbx)
	}
	probe := cat([]byte{
		0x0f, 0x92, 0xc0, // setb %al
	}, x86Nop)
	var rax, rbx uint64
	if _, err := run(m, probe, nil, func(s *Step) error {
		rax, _ = s.Regs.Get(0)
		rbx, _ = s.Regs.Get(3)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if rax != 0 || rbx != 0 {
		t.Errorf("second run: carry %d, rbx %d; want both reset to 0", rax, rbx)
	}
}

// TestStackReset: what a run wrote to the stack reads as zero in the next
// one, both near the top (cleared in place) and megabytes below it (pages
// returned to the kernel), and the pages handed back stay usable.
func TestStackReset(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	deep := cat([]byte{
		0x48, 0x81, 0xec, 0x00, 0x00, 0x20, 0x00, // sub $0x200000,%rsp
		0x48, 0xc7, 0x04, 0x24, 0x55, 0x00, 0x00, 0x00, // movq $0x55,(%rsp)
		0x48, 0xc7, 0x84, 0x24, 0x00, 0x00, 0x10, 0x00, 0x66, 0x00, 0x00, 0x00, // movq $0x66,0x100000(%rsp)
		0x48, 0xc7, 0x84, 0x24, 0xf0, 0xff, 0x1f, 0x00, 0x77, 0x00, 0x00, 0x00, // movq $0x77,0x1ffff0(%rsp)
		0x48, 0x81, 0xc4, 0x00, 0x00, 0x20, 0x00, // add $0x200000,%rsp
	}, x86Nop)
	words := map[uint64]uint64{InitialSP - 0x200000: 0x55, InitialSP - 0x100000: 0x66, InitialSP - 16: 0x77}
	for round := 0; round < 2; round++ {
		if _, err := run(m, deep, nil, nil); err != nil {
			t.Fatal(err)
		}
		for a, want := range words {
			if w, _ := m.readWord(a); w != want {
				t.Fatalf("round %d: word at %#x = %#x after the run, want %#x", round, a, w, want)
			}
		}
		if _, err := run(m, x86Nop, nil, nil); err != nil {
			t.Fatal(err)
		}
		for a := range words {
			if w, _ := m.readWord(a); w != 0 {
				t.Errorf("round %d: word at %#x = %#x in the next run, want 0", round, a, w)
			}
		}
	}
}

// TestGuestWrittenCode: a program that rewrites its own code leaves memory
// different from what was loaded; running the rewritten bytes as the next
// image (which Execute does not write again, as they are already there)
// must execute them, not the translation of the original.
func TestGuestWrittenCode(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	m.Track(0)
	prog := func(v byte) []byte {
		return []byte{
			0xb8, v, 0x00, 0x00, 0x00, // mov $v,%eax
			0xc6, 0x05, 0xf5, 0xff, 0xff, 0xff, 0x02, // movb $2,-11(%rip): the immediate above
			0xeb, 0x02, // jmp .+4: the exit's block, which Unicorn drops after each run, starts apart
			0x90, 0x90, // nop; nop
			0x90, // nop (exit)
		}
	}
	var rax uint64
	rec := func(s *Step) error { rax, _ = s.Regs.Get(0); return nil }
	exec := func(code []byte) {
		t.Helper()
		if _, err := m.Execute(&Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + 16, Budget: 10}, rec); err != nil {
			t.Fatal(err)
		}
	}
	exec(prog(1))
	if rax != 1 {
		t.Fatalf("first run: rax %d at the jump, want 1", rax)
	}
	if w, _ := m.readWord(CodeBase); w&0xffff != 0x02b8 {
		t.Fatalf("code after the first run starts %#x, want the rewritten immediate", w&0xffff)
	}
	exec(prog(2))
	if rax != 2 {
		t.Fatalf("rewritten image: rax %d at the jump, want 2", rax)
	}
}

// TestFarSegment calls through a register into a segment in the far code
// region, 5 GiB above the code, and back: the function there sets a
// register, and its code reads back through ReadWord.
func TestFarSegment(t *testing.T) {
	t.Parallel()
	le := func(w ...uint32) []byte {
		var b []byte
		for _, x := range w {
			b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
		}
		return b
	}
	a64 := struct{ near, far []byte }{
		le(0xd2800010, // mov x16, #0x0
			0xf2aa0010,  // movk x16, #0x5000, lsl #16
			0xf2c00030,  // movk x16, #0x1, lsl #32
			0xd63f0200), // blr x16
		le(0xd28000e0, // mov x0, #0x7
			0xd65f03c0), // ret
	}
	cases := []struct {
		abi       target.Target
		near, far []byte
		reg       int
	}{
		{target.X86_64, []byte{
			0x49, 0xbb, 0x00, 0x00, 0x00, 0x50, 0x01, 0x00, 0x00, 0x00, // movabs $0x150000000,%r11
			0x41, 0xff, 0xd3, // call *%r11
		}, []byte{
			0xb8, 0x07, 0x00, 0x00, 0x00, // mov $7,%eax
			0xc3, // ret
		}, 0},
		{target.AArch64, a64.near, a64.far, 0},
		{target.AArch64BE, a64.near, a64.far, 0},
		{target.S390X, []byte{
			0xc0, 0x1e, 0x00, 0x00, 0x00, 0x01, // llihf %r1,1
			0xc0, 0x19, 0x50, 0x00, 0x00, 0x00, // iilf %r1,0x50000000
			0x0d, 0xe1, // basr %r14,%r1
		}, []byte{
			0xa7, 0x29, 0x00, 0x07, // lghi %r2,7
			0x07, 0xfe, // br %r14
		}, 2},
	}
	if FarCodeBase != 0x1_5000_0000 {
		t.Fatalf("FarCodeBase = %#x: the hand-encoded addresses below assume 0x150000000", uint64(FarCodeBase))
	}
	for _, c := range cases {
		t.Run(c.abi.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMachine(t, c.abi)
			far := 0
			var word uint64
			var ok bool
			r := &Run{Code: c.near, CodeAddr: CodeBase, Entry: CodeBase, Exit: CodeBase + uint64(len(c.near)),
				Segments: []Segment{{Addr: FarCodeBase, Code: c.far}}, Budget: 100}
			_, err := m.Execute(r, func(s *Step) error {
				if s.Regs.PC >= FarCodeBase {
					far++
					word, ok = s.ReadWord(FarCodeBase)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if far != 2 {
				t.Errorf("%d steps in the far segment, want 2", far)
			}
			if v, err := m.Reg(c.reg); err != nil || v != 7 {
				t.Errorf("register %d = %d (%v), want 7: the far function did not run", c.reg, v, err)
			}
			if !ok || word == 0 {
				t.Errorf("ReadWord in the far segment = %#x, %v", word, ok)
			}
			r.Segments[0].Addr = FarCodeBase + FarCodeSize - 2
			if _, err := m.Execute(r, nil); err == nil || !strings.Contains(err.Error(), "outside the code regions") {
				t.Errorf("segment past the far region's end: err = %v", err)
			}
		})
	}
}

// TestLowSegment: code in the low code region (a shared object's .plt)
// runs, reached by a call from the code region, and reads data in a
// segment of the code region (its GOT); the MiB between the low region
// and the code stays unmapped.
func TestLowSegment(t *testing.T) {
	t.Parallel()
	m := newMachine(t, target.X86_64)
	const plt, got = LowCodeBase + 0x1000, CodeBase + 0x100
	near := x86Rel32Call(CodeBase, plt)                                 // call plt
	pltCode := append([]byte{0xff, 0x25}, le32(uint32(got-(plt+6)))...) // jmp *got(%rip)
	ret := uint64(CodeBase + 0x80)
	gotData := append(le32(uint32(ret)), le32(uint32(ret>>32))...)
	code := make([]byte, 0x81)
	copy(code, near)
	code[0x80] = 0xc3 // ret, reached through the GOT
	exit := uint64(CodeBase + len(near))
	r := &Run{Code: code, CodeAddr: CodeBase, Entry: CodeBase, Exit: exit, Budget: 10,
		Segments: []Segment{{Addr: plt, Code: pltCode}, {Addr: got, Code: gotData}}}
	low := 0
	_, err := m.Execute(r, func(s *Step) error {
		if s.Regs.PC >= LowCodeBase && s.Regs.PC < LowCodeBase+LowCodeSize {
			low++
			if w, ok := s.ReadWord(plt); !ok || w&0xffff != 0x25ff {
				return fmt.Errorf("ReadWord(%#x) = %#x, %v", uint64(plt), w, ok)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if low != 1 {
		t.Errorf("%d steps in the low segment, want 1", low)
	}
	r.Segments[0].Addr = LowCodeBase + LowCodeSize - 2
	if _, err := m.Execute(r, nil); err == nil || !strings.Contains(err.Error(), "outside the code regions") {
		t.Errorf("segment past the low region's end: err = %v", err)
	}
	r.Segments[0].Addr = CodeBase - 0x1000 // in the unmapped MiB below the code
	if _, err := m.Execute(r, nil); err == nil || !strings.Contains(err.Error(), "outside the code regions") {
		t.Errorf("segment between the low region and the code: err = %v", err)
	}
}

func x86Rel32Call(pc, target uint64) []byte {
	return append([]byte{0xe8}, le32(uint32(target-(pc+5)))...)
}
