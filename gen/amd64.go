package gen

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sfconform/sfconform/target"
)

// x86-64 hardware register numbers (ModRM order).
const (
	xRAX = 0
	xRCX = 1
	xRDX = 2
	xRBX = 3
	xRSP = 4
	xRBP = 5
	xRSI = 6
	xRDI = 7
	xR10 = 10
	xR11 = 11
	xR12 = 12
	xR13 = 13
	xR14 = 14
	xR15 = 15
)

var x86Names64 = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
var x86Names32 = [16]string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"}

// x86 argument registers: DWARF rdi, rsi, rdx, rcx and their hardware numbers.
var x86ArgDwarf = []int{5, 4, 1, 2}
var x86ArgHW = []int{xRDI, xRSI, xRDX, xRCX}

func amd64Target() *isa {
	t := &isa{
		abi: target.X86_64, sp: target.RegX86SP, fp: target.RegX86FP, ra: 16,
		entrySPOff: 8,
		entryRA:    savedAt(-8),
		argRegs:    x86ArgDwarf,
		testBits:   31, // bit 31 would print as a negative immediate
		codeAlign:  1,

		typeDirective: "@function",
		regName:       x86DwarfName,
		callOK:        x86CallOK,
		testBranch:    x86TestBranch,
		call: func(b *builder, fn string) {
			b.jump(&branch{target: fn, text: "call " + fn, size: func(bool) int { return 5 },
				enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return x86Rel32([]byte{0xe8}, pc, tgt) }})
		},
		stub: func(b *builder, root string) {
			b.insn([]byte{0x48, 0x83, 0xe4, 0xf0}, "and $-0x10,%%rsp")
			x86MovImm(b, xRBP, 0x5fb0f00d)
			b.emitCall(root)
			b.insn([]byte{0xf4}, "hlt").exit = true
		},
		filler: x86Filler,
		loop: func(b *builder, n int) {
			x86MovImm(b, xRAX, uint32(n))
			l := b.newLabel()
			b.place(l)
			b.insn([]byte{0x83, 0xe8, 0x01}, "sub $0x1,%%eax")
			x86Jcc(b, 5, l)
		},
		own: amd64Own,
	}
	t.prims = prims{
		fpSetup:     x86FPSetup,
		fpTeardowns: []func(b *builder){x86Leave, x86MovPop, x86AddPop},
		spSetup: func(b *builder) {
			x86AdjSP(b, -(8 + 16*int64(b.rng.IntN(3))))
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			x86AdjSP(b, b.st.spOff-8)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -16 * (1 + int64(b.rng.IntN(9)))
			}
			x86AdjSP(b, exact)
			return exact
		},
		wiggle: func(b *builder) {
			// A push/pop pair moves the CFA offset once more, between calls.
			x86Push(b, xR10)
			x86Filler(b)
			x86Pop(b, xR11)
		},
		saveRegs:  x86SaveRegs,
		setReg:    func(b *builder, r int) { x86MovImm(b, r, b.rng.Uint32()) },
		fpSaveOne: x86FPSaveOne,
		ret:       x86Ret,
		tailJump:  x86Jmp,
		// prims_x86.go
		pltStub: x86PLTStub, pad: x86Pad, allocLarge: x86AllocLarge,
		farCall:  x86FarCall,
		newStack: x86NewStack,

		sigTrampoline: x86SigTrampoline,
	}
	return t
}

// x86CallOK: the RA is in its slot at CFA-8 (an unwinder reads it there
// in every frame; a register would not survive the callee), the CFA is
// based on SP or FP (any other register is known in the topmost frame
// only and a callee may clobber it), and SP is 16-byte aligned (psABI
// 3.2.2): CFA - SP is a multiple of 16, the CFA being the caller's SP at
// its own call + 8 + 8; while SP is lost, the distance below an SP known
// to be 16-aligned is.
func x86CallOK(st *frame) error {
	if st.ra != savedAt(-8) {
		return fmt.Errorf("the return address is not in its slot at CFA-8 (rule %+v)", st.ra)
	}
	if st.cfaReg != target.RegX86SP && st.cfaReg != target.RegX86FP {
		return fmt.Errorf("the CFA is based on %s, which only the topmost frame knows", x86DwarfName(st.cfaReg))
	}
	if st.spLost && st.spAlign%16 != 0 {
		return fmt.Errorf("SP is only known to be %d-byte aligned", st.spAlign)
	}
	return alignErr(st.spOff, 16)
}

// x86DwarfNames are the registers by DWARF number (psABI figure 3.36),
// 16 being the return-address column.
var x86DwarfNames = [17]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

func x86DwarfName(r int) string {
	if r >= 0 && r < len(x86DwarfNames) {
		return "%" + x86DwarfNames[r]
	}
	return fmt.Sprintf("%d", r)
}

// x86Dwarf is the DWARF number of hardware register hw (ModRM order).
func x86Dwarf(hw int) int {
	for d, n := range x86DwarfNames[:16] {
		if n == x86Names64[hw] {
			return d
		}
	}
	panic(fmt.Sprintf("gen: no DWARF number for x86 register %d", hw))
}

func x86Rel32(opc []byte, pc, tgt uint64) ([]byte, error) {
	rel := int64(tgt - (pc + uint64(len(opc)) + 4))
	if rel < math.MinInt32 || rel > math.MaxInt32 {
		return nil, fmt.Errorf("displacement %d does not fit 32 bits", rel)
	}
	return binary.LittleEndian.AppendUint32(append([]byte(nil), opc...), uint32(int32(rel))), nil
}

func x86Rel8(opc byte, pc, tgt uint64) ([]byte, error) {
	rel := int64(tgt - (pc + 2))
	if rel < math.MinInt8 || rel > math.MaxInt8 {
		return nil, fmt.Errorf("displacement %d does not fit 8 bits", rel)
	}
	return []byte{opc, byte(int8(rel))}, nil
}

var x86CondNames = map[byte]string{4: "je", 5: "jne"}

// x86Jcc emits a conditional jump (cc 4 = e, 5 = ne), relaxed like GNU as.
func x86Jcc(b *builder, cc byte, label string) {
	b.jump(&branch{target: label, text: x86CondNames[cc] + " " + label, relax: true,
		size: func(short bool) int {
			if short {
				return 2
			}
			return 6
		},
		enc: func(pc, tgt uint64, short bool) ([]byte, error) {
			if short {
				return x86Rel8(0x70+cc, pc, tgt)
			}
			return x86Rel32([]byte{0x0f, 0x80 + cc}, pc, tgt)
		}})
}

func x86Jmp(b *builder, target string) {
	b.jump(&branch{target: target, text: "jmp " + target, relax: true,
		size: func(short bool) int {
			if short {
				return 2
			}
			return 5
		},
		enc: func(pc, tgt uint64, short bool) ([]byte, error) {
			if short {
				return x86Rel8(0xeb, pc, tgt)
			}
			return x86Rel32([]byte{0xe9}, pc, tgt)
		}})
}

func x86TestBranch(b *builder, arg, bit int, set bool, label string) {
	r := x86ArgHW[arg]
	imm := uint32(1) << bit
	b.insn(binary.LittleEndian.AppendUint32([]byte{0xf7, 0xc0 | byte(r)}, imm), "test $0x%x,%%%s", imm, x86Names32[r])
	if set {
		x86Jcc(b, 5, label)
	} else {
		x86Jcc(b, 4, label)
	}
}

func x86Rex(r int) []byte {
	if r >= 8 {
		return []byte{0x41}
	}
	return nil
}

// x86MovImm emits mov $imm,%r32 (zero-extending into the 64-bit register).
func x86MovImm(b *builder, r int, imm uint32) {
	bytes := append(x86Rex(r), 0xb8+byte(r&7))
	b.insn(binary.LittleEndian.AppendUint32(bytes, imm), "mov $0x%x,%%%s", imm, x86Names32[r])
}

func x86Push(b *builder, r int) {
	b.insn(append(x86Rex(r), 0x50+byte(r&7)), "push %%%s", x86Names64[r])
	b.sp(-8)
	if r == xRBP {
		b.saveFP(0)
	}
}

func x86Pop(b *builder, r int) {
	b.insn(append(x86Rex(r), 0x58+byte(r&7)), "pop %%%s", x86Names64[r])
	if r == xRBP {
		b.restoreFP()
	}
	b.sp(8)
}

// x86AdjSP emits sub (delta < 0) or add (delta > 0) of an immediate to %rsp.
func x86AdjSP(b *builder, delta int64) {
	if delta == 0 {
		return
	}
	op, name, n := byte(0xc4), "add", delta
	if delta < 0 {
		op, name, n = 0xec, "sub", -delta
	}
	if n <= 127 {
		b.insn([]byte{0x48, 0x83, op, byte(n)}, "%s $0x%x,%%rsp", name, n)
	} else {
		b.insn(binary.LittleEndian.AppendUint32([]byte{0x48, 0x81, op}, uint32(n)), "%s $0x%x,%%rsp", name, n)
	}
	b.sp(delta)
}

func x86FrameSetup(b *builder) {
	x86Push(b, xRBP)
	b.insn([]byte{0x48, 0x89, 0xe5}, "mov %%rsp,%%rbp")
	b.fpFromSP(0)
}

func x86Leave(b *builder) {
	b.insn([]byte{0xc9}, "leave")
	b.spFromFP(0)
	b.restoreFP()
	b.sp(8)
}

func x86Ret(b *builder) { b.insn([]byte{0xc3}, "ret") }

func x86Filler(b *builder) {
	switch b.rng.IntN(5) {
	case 0:
		x86MovImm(b, xRAX, b.rng.Uint32())
	case 1:
		x86MovImm(b, []int{xR10, xR11}[b.rng.IntN(2)], b.rng.Uint32())
	case 2:
		n := 1 + b.rng.IntN(127)
		b.insn([]byte{0x48, 0x83, 0xc0, byte(n)}, "add $0x%x,%%rax", n)
	case 3:
		b.insn([]byte{0x31, 0xc0}, "xor %%eax,%%eax")
	default:
		b.insn([]byte{0x90}, "nop")
	}
}

// x86FPSetup: push %rbp; mov %rsp,%rbp; [sub $N,%rsp].
func x86FPSetup(b *builder) {
	x86FrameSetup(b)
	x86AdjSP(b, -16*int64(b.rng.IntN(3)))
}

// x86MovPop is the long form of leave.
func x86MovPop(b *builder) {
	b.insn([]byte{0x48, 0x89, 0xec}, "mov %%rbp,%%rsp")
	b.spFromFP(0)
	x86Pop(b, xRBP)
}

// x86AddPop releases the locals with add, then pops %rbp.
func x86AddPop(b *builder) {
	x86AdjSP(b, b.st.spOff-b.st.fpOff)
	x86Pop(b, xRBP)
}

// x86SaveRegs pushes callee-saved registers (sometimes %rbp among them,
// saved but not used as a frame pointer) and aligns the stack for calls.
func x86SaveRegs(b *builder) ([]int, func(*builder, func())) {
	pool := []int{xRBX, xR12, xR13, xR14, xR15}
	b.rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	regs := pool[:1+b.rng.IntN(3)]
	if b.rng.IntN(2) == 0 {
		at := b.rng.IntN(len(regs) + 1)
		regs = append(regs[:at:at], append([]int{xRBP}, regs[at:]...)...)
	}
	for _, r := range regs {
		x86Push(b, r)
	}
	n := int64(16 * b.rng.IntN(2))
	if len(regs)%2 == 0 {
		n += 8
	}
	x86AdjSP(b, -n)
	var written []int
	for _, r := range regs {
		if r != xRBP {
			written = append(written, r)
		}
	}
	return written, func(b *builder, epi func()) {
		if len(regs)%2 == 0 {
			// After the release SP would be misaligned: call before it.
			epi()
			x86AdjSP(b, n)
		} else {
			x86AdjSP(b, n)
			epi()
		}
		for i := len(regs) - 1; i >= 0; i-- {
			x86Pop(b, regs[i])
		}
	}
}

// x86FPSaveOne: a frame with %rbx saved; one epilogue releases with
// add/pop, the other with mov/leave.
func x86FPSaveOne(b *builder) (int, [2]func(*builder)) {
	x86FrameSetup(b)
	x86Push(b, xRBX)
	x86AdjSP(b, -8)
	return xRBX, [2]func(*builder){
		func(b *builder) {
			x86AdjSP(b, 8)
			x86Pop(b, xRBX)
			x86Pop(b, xRBP)
		},
		func(b *builder) {
			b.insn([]byte{0x48, 0x8b, 0x5d, 0xf8}, "mov -0x8(%%rbp),%%rbx")
			x86Leave(b)
		},
	}
}
