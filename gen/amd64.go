package gen

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sfconform/sfconform/target"
)

// x86-64 hardware register numbers (ModRM order).
const (
	amd64RAX = 0
	amd64RCX = 1
	amd64RDX = 2
	amd64RBX = 3
	amd64RSP = 4
	amd64RBP = 5
	amd64RSI = 6
	amd64RDI = 7
	amd64R10 = 10
	amd64R11 = 11
	amd64R12 = 12
	amd64R13 = 13
	amd64R14 = 14
	amd64R15 = 15
)

var amd64Names64 = [16]string{"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
var amd64Names32 = [16]string{"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"}

// x86 argument registers: DWARF rdi, rsi, rdx, rcx and their hardware numbers.
var amd64ArgDwarf = []int{5, 4, 1, 2}
var amd64ArgHW = []int{amd64RDI, amd64RSI, amd64RDX, amd64RCX}

func amd64Target() *isa {
	t := &isa{
		abi: target.X86_64, sp: target.RegX86SP, fp: target.RegX86FP, ra: 16,
		entrySPOff: 8,
		entryRA:    savedAt(-8),
		argRegs:    amd64ArgDwarf,
		testBits:   31, // bit 31 would print as a negative immediate
		codeAlign:  1,

		typeDirective: "@function",
		regName:       amd64DwarfName,
		callOK:        amd64CallOK,
		testBranch:    amd64TestBranch,
		call: func(b *builder, fn string) {
			b.jump(&branch{target: fn, text: "call " + fn, size: func(bool) int { return 5 },
				enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return amd64Rel32([]byte{0xe8}, pc, tgt) }})
		},
		stub: func(b *builder, root string) {
			b.insn([]byte{0x48, 0x83, 0xe4, 0xf0}, "and $-0x10,%%rsp")
			amd64MovImm(b, amd64RBP, 0x5fb0f00d)
			b.emitCall(root)
			b.insn([]byte{0xf4}, "hlt").exit = true
		},
		filler: amd64Filler,
		loop: func(b *builder, n int) {
			amd64MovImm(b, amd64RAX, uint32(n))
			l := b.newLabel()
			b.place(l)
			b.insn([]byte{0x83, 0xe8, 0x01}, "sub $0x1,%%eax")
			amd64Jcc(b, 5, l)
		},
		own: amd64Own,
	}
	t.prims = prims{
		fpSetup:     amd64FPSetup,
		fpTeardowns: []func(b *builder){amd64Leave, amd64MovPop, amd64AddPop},
		spSetup: func(b *builder) {
			amd64AdjSP(b, -(8 + 16*int64(b.rng.IntN(3))))
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			amd64AdjSP(b, b.st.spOff-8)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -16 * (1 + int64(b.rng.IntN(9)))
			}
			amd64AdjSP(b, exact)
			return exact
		},
		wiggle: func(b *builder) {
			// A push/pop pair moves the CFA offset once more, between calls.
			amd64Push(b, amd64R10)
			amd64Filler(b)
			amd64Pop(b, amd64R11)
		},
		saveRegs:  amd64SaveRegs,
		setReg:    func(b *builder, r int) { amd64MovImm(b, r, b.rng.Uint32()) },
		fpSaveOne: amd64FPSaveOne,
		ret:       amd64Ret,
		tailJump:  amd64Jmp,
		// amd64_prims.go, amd64_signal.go
		pltStub: amd64PLTStub, pad: amd64Pad, allocLarge: amd64AllocLarge,
		farCall:  amd64FarCall,
		newStack: amd64NewStack,

		sigTrampoline: amd64SigTrampoline,
	}
	return t
}

// amd64CallOK: the RA is in its slot at CFA-8 (an unwinder reads it there
// in every frame; a register would not survive the callee), the CFA is
// based on SP or FP (any other register is known in the topmost frame
// only and a callee may clobber it), and SP is 16-byte aligned (psABI
// 3.2.2): CFA - SP is a multiple of 16, the CFA being the caller's SP at
// its own call + 8 + 8; while SP is lost, the distance below an SP known
// to be 16-aligned is.
func amd64CallOK(st *frame) error {
	if st.ra != savedAt(-8) {
		return fmt.Errorf("the return address is not in its slot at CFA-8 (rule %+v)", st.ra)
	}
	if st.cfaReg != target.RegX86SP && st.cfaReg != target.RegX86FP {
		return fmt.Errorf("the CFA is based on %s, which only the topmost frame knows", amd64DwarfName(st.cfaReg))
	}
	if st.spLost && st.spAlign%16 != 0 {
		return fmt.Errorf("SP is only known to be %d-byte aligned", st.spAlign)
	}
	return alignErr(st.spOff, 16)
}

// amd64DwarfNames are the registers by DWARF number (psABI figure 3.36),
// 16 being the return-address column.
var amd64DwarfNames = [17]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

func amd64DwarfName(r int) string {
	if r >= 0 && r < len(amd64DwarfNames) {
		return "%" + amd64DwarfNames[r]
	}
	return fmt.Sprintf("%d", r)
}

// amd64Dwarf is the DWARF number of hardware register hw (ModRM order).
func amd64Dwarf(hw int) int {
	for d, n := range amd64DwarfNames[:16] {
		if n == amd64Names64[hw] {
			return d
		}
	}
	panic(fmt.Sprintf("gen: no DWARF number for x86 register %d", hw))
}

func amd64Rel32(opc []byte, pc, tgt uint64) ([]byte, error) {
	rel := int64(tgt - (pc + uint64(len(opc)) + 4))
	if rel < math.MinInt32 || rel > math.MaxInt32 {
		return nil, fmt.Errorf("displacement %d does not fit 32 bits", rel)
	}
	return binary.LittleEndian.AppendUint32(append([]byte(nil), opc...), uint32(int32(rel))), nil
}

func amd64Rel8(opc byte, pc, tgt uint64) ([]byte, error) {
	rel := int64(tgt - (pc + 2))
	if rel < math.MinInt8 || rel > math.MaxInt8 {
		return nil, fmt.Errorf("displacement %d does not fit 8 bits", rel)
	}
	return []byte{opc, byte(int8(rel))}, nil
}

var amd64CondNames = map[byte]string{4: "je", 5: "jne"}

// amd64Jcc emits a conditional jump (cc 4 = e, 5 = ne), relaxed like GNU as.
func amd64Jcc(b *builder, cc byte, label string) {
	b.jump(&branch{target: label, text: amd64CondNames[cc] + " " + label, relax: true,
		size: func(short bool) int {
			if short {
				return 2
			}
			return 6
		},
		enc: func(pc, tgt uint64, short bool) ([]byte, error) {
			if short {
				return amd64Rel8(0x70+cc, pc, tgt)
			}
			return amd64Rel32([]byte{0x0f, 0x80 + cc}, pc, tgt)
		}})
}

func amd64Jmp(b *builder, target string) {
	b.jump(&branch{target: target, text: "jmp " + target, relax: true,
		size: func(short bool) int {
			if short {
				return 2
			}
			return 5
		},
		enc: func(pc, tgt uint64, short bool) ([]byte, error) {
			if short {
				return amd64Rel8(0xeb, pc, tgt)
			}
			return amd64Rel32([]byte{0xe9}, pc, tgt)
		}})
}

func amd64TestBranch(b *builder, arg, bit int, set bool, label string) {
	r := amd64ArgHW[arg]
	imm := uint32(1) << bit
	b.insn(binary.LittleEndian.AppendUint32([]byte{0xf7, 0xc0 | byte(r)}, imm), "test $0x%x,%%%s", imm, amd64Names32[r])
	if set {
		amd64Jcc(b, 5, label)
	} else {
		amd64Jcc(b, 4, label)
	}
}

func amd64Rex(r int) []byte {
	if r >= 8 {
		return []byte{0x41}
	}
	return nil
}

// amd64MovImm emits mov $imm,%r32 (zero-extending into the 64-bit register).
func amd64MovImm(b *builder, r int, imm uint32) {
	bytes := append(amd64Rex(r), 0xb8+byte(r&7))
	b.insn(binary.LittleEndian.AppendUint32(bytes, imm), "mov $0x%x,%%%s", imm, amd64Names32[r])
}

func amd64Push(b *builder, r int) {
	b.insn(append(amd64Rex(r), 0x50+byte(r&7)), "push %%%s", amd64Names64[r])
	b.sp(-8)
	if r == amd64RBP {
		b.saveFP(0)
	}
}

func amd64Pop(b *builder, r int) {
	b.insn(append(amd64Rex(r), 0x58+byte(r&7)), "pop %%%s", amd64Names64[r])
	if r == amd64RBP {
		b.restoreFP()
	}
	b.sp(8)
}

// amd64AdjSP emits sub (delta < 0) or add (delta > 0) of an immediate to %rsp.
func amd64AdjSP(b *builder, delta int64) {
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

func amd64FrameSetup(b *builder) {
	amd64Push(b, amd64RBP)
	b.insn([]byte{0x48, 0x89, 0xe5}, "mov %%rsp,%%rbp")
	b.fpFromSP(0)
}

func amd64Leave(b *builder) {
	b.insn([]byte{0xc9}, "leave")
	b.spFromFP(0)
	b.restoreFP()
	b.sp(8)
}

func amd64Ret(b *builder) { b.insn([]byte{0xc3}, "ret") }

func amd64Filler(b *builder) {
	switch b.rng.IntN(5) {
	case 0:
		amd64MovImm(b, amd64RAX, b.rng.Uint32())
	case 1:
		amd64MovImm(b, []int{amd64R10, amd64R11}[b.rng.IntN(2)], b.rng.Uint32())
	case 2:
		n := 1 + b.rng.IntN(127)
		b.insn([]byte{0x48, 0x83, 0xc0, byte(n)}, "add $0x%x,%%rax", n)
	case 3:
		b.insn([]byte{0x31, 0xc0}, "xor %%eax,%%eax")
	default:
		b.insn([]byte{0x90}, "nop")
	}
}

// amd64FPSetup: push %rbp; mov %rsp,%rbp; [sub $N,%rsp].
func amd64FPSetup(b *builder) {
	amd64FrameSetup(b)
	amd64AdjSP(b, -16*int64(b.rng.IntN(3)))
}

// amd64MovPop is the long form of leave.
func amd64MovPop(b *builder) {
	b.insn([]byte{0x48, 0x89, 0xec}, "mov %%rbp,%%rsp")
	b.spFromFP(0)
	amd64Pop(b, amd64RBP)
}

// amd64AddPop releases the locals with add, then pops %rbp.
func amd64AddPop(b *builder) {
	amd64AdjSP(b, b.st.spOff-b.st.fpOff)
	amd64Pop(b, amd64RBP)
}

// amd64SaveRegs pushes callee-saved registers (sometimes %rbp among them,
// saved but not used as a frame pointer) and aligns the stack for calls.
func amd64SaveRegs(b *builder) ([]int, func(*builder, func())) {
	pool := []int{amd64RBX, amd64R12, amd64R13, amd64R14, amd64R15}
	b.rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	regs := pool[:1+b.rng.IntN(3)]
	if b.rng.IntN(2) == 0 {
		at := b.rng.IntN(len(regs) + 1)
		regs = append(regs[:at:at], append([]int{amd64RBP}, regs[at:]...)...)
	}
	for _, r := range regs {
		amd64Push(b, r)
	}
	n := int64(16 * b.rng.IntN(2))
	if len(regs)%2 == 0 {
		n += 8
	}
	amd64AdjSP(b, -n)
	var written []int
	for _, r := range regs {
		if r != amd64RBP {
			written = append(written, r)
		}
	}
	return written, func(b *builder, epi func()) {
		if len(regs)%2 == 0 {
			// After the release SP would be misaligned: call before it.
			epi()
			amd64AdjSP(b, n)
		} else {
			amd64AdjSP(b, n)
			epi()
		}
		for i := len(regs) - 1; i >= 0; i-- {
			amd64Pop(b, regs[i])
		}
	}
}

// amd64FPSaveOne: a frame with %rbx saved; one epilogue releases with
// add/pop, the other with mov/leave.
func amd64FPSaveOne(b *builder) (int, [2]func(*builder)) {
	amd64FrameSetup(b)
	amd64Push(b, amd64RBX)
	amd64AdjSP(b, -8)
	return amd64RBX, [2]func(*builder){
		func(b *builder) {
			amd64AdjSP(b, 8)
			amd64Pop(b, amd64RBX)
			amd64Pop(b, amd64RBP)
		},
		func(b *builder) {
			b.insn([]byte{0x48, 0x8b, 0x5d, 0xf8}, "mov -0x8(%%rbp),%%rbx")
			amd64Leave(b)
		},
	}
}
