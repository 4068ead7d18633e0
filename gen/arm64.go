package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// AArch64 register numbers (hardware = DWARF for x0-x30; 31 is sp or xzr by context).
const (
	arm64X9  = 9
	arm64X10 = 10
	arm64X16 = 16
	arm64X19 = 19
	arm64X20 = 20
	arm64X21 = 21
	arm64FP  = 29
	arm64LR  = 30
	arm64SP  = 31
)

func arm64Target(abi target.Target) *isa {
	t := &isa{
		abi: abi, sp: target.RegAArch64SP, fp: target.RegAArch64FP, ra: target.RegAArch64LR,
		entrySPOff: 0,
		entryRA:    sframe.Rule{Kind: sframe.RuleSame},
		argRegs:    []int{0, 1, 2, 3},
		testBits:   64,
		codeAlign:  4,

		typeDirective: "%function",
		regName:       arm64Name,
		callOK: func(st *frame) error {
			if st.ra.Kind != sframe.RuleExpr {
				return errNoRA
			}
			return alignErr(st.spOff, 16)
		},
		testBranch: func(b *builder, arg, bit int, set bool, label string) {
			r := b.t.argRegs[arg]
			arm64TestBit(b, set, r, bit, label)
		},
		call: func(b *builder, fn string) { arm64Branch26(b, 0x94000000, "bl", fn) },
		stub: func(b *builder, root string) {
			// Align SP down to 16 whatever the loader chose.
			arm64Insn(b, 0x910003e9, "mov x9, sp")
			arm64Insn(b, 0x92400000|60<<16|59<<10|arm64X9<<5|arm64X9, "and x9, x9, #0xfffffffffffffff0")
			arm64Insn(b, 0x9100013f, "mov sp, x9")
			arm64Insn(b, 0xd2a00000|0xfb5f<<5|arm64FP, "mov x29, #0xfb5f0000")
			b.emitCall(root)
			arm64Insn(b, 0xd4200000, "brk #0x0").exit = true
		},
		filler: arm64Filler,
		loop: func(b *builder, n int) {
			arm64Movz(b, arm64X9, uint16(n))
			l := b.newLabel()
			b.place(l)
			arm64Insn(b, 0xf1000000|1<<10|arm64X9<<5|arm64X9, "subs x9, x9, #0x1")
			arm64Cond(b, 1, "ne", l)
		},
	}
	t.prims = prims{
		fpSetup:     arm64FPSetup,
		fpTeardowns: []func(b *builder){arm64ReleaseAddLoad, arm64ReleaseMovLoad},
		spSetup: func(b *builder) {
			// The frame record at the top of the frame, x29 not set.
			a := int64(16 * (1 + b.rng.IntN(3)))
			arm64AdjSP(b, -a)
			arm64SaveRecord(b, false, a-16)
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			a := b.st.spOff
			arm64LoadRecord(b, false, a-16)
			arm64AdjSP(b, a)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -16 * (1 + int64(b.rng.IntN(4)))
			}
			arm64AdjSP(b, exact)
			return exact
		},
		saveRegs:  arm64SaveRegs,
		setReg:    func(b *builder, r int) { arm64Movz(b, r, uint16(1+b.rng.IntN(0xfffe))) },
		fpSaveOne: arm64FPSaveOne,
		ret:       arm64Ret,
		tailJump:  func(b *builder, fn string) { arm64Branch26(b, 0x14000000, "b", fn) },
		// arm64_prims.go, arm64_signal.go
		pltStub: arm64PLTStub, pad: arm64Pad,
		farCall:  arm64FarCall,
		newStack: arm64NewStack,

		sigTrampoline: arm64SigTrampoline,
	}
	// AArch64's own patterns (arm64_frames.go, arm64_pac.go).
	t.own = []*pattern{arm64RecordBottom, arm64RecordTop, arm64LROnly, arm64BigFrame, arm64PACA, arm64PACB}
	return t
}

func arm64Name(r int) string {
	if r == arm64SP {
		return "sp"
	}
	return fmt.Sprintf("x%d", r)
}

// arm64Insn emits one instruction word; AArch64 code is little-endian in both
// data byte orders.
func arm64Insn(b *builder, word uint32, format string, args ...any) *op {
	return b.insn(binary.LittleEndian.AppendUint32(nil, word), format, args...)
}

func arm64Word(w uint32) []byte { return binary.LittleEndian.AppendUint32(nil, w) }

// arm64Disp checks a branch displacement for an imm field of bits and
// returns it in words.
func arm64Disp(pc, tgt uint64, bits uint) (uint32, error) {
	d := int64(tgt - pc)
	lim := int64(1) << (bits + 1) // bytes: imm is in words, signed
	if d%4 != 0 || d < -lim || d >= lim {
		return 0, fmt.Errorf("displacement %d out of range for a %d-bit branch", d, bits)
	}
	return uint32(d/4) & (1<<bits - 1), nil
}

func arm64Branch26(b *builder, opc uint32, mnem, target string) {
	b.jump(&branch{target: target, text: mnem + " " + target, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			imm, err := arm64Disp(pc, tgt, 26)
			return arm64Word(opc | imm), err
		}})
}

// arm64Cond emits b.<cond> to label.
func arm64Cond(b *builder, cond uint32, name, label string) {
	b.jump(&branch{target: label, text: "b." + name + " " + label, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			imm, err := arm64Disp(pc, tgt, 19)
			return arm64Word(0x54000000 | imm<<5 | cond), err
		}})
}

// arm64TestBit emits tbnz (set) or tbz to label on bit of register r.
func arm64TestBit(b *builder, set bool, r, bit int, label string) {
	opc, mnem := uint32(0x36000000), "tbz"
	if set {
		opc, mnem = 0x37000000, "tbnz"
	}
	reg := fmt.Sprintf("x%d", r)
	if bit < 32 {
		reg = fmt.Sprintf("w%d", r)
	}
	opc |= uint32(bit>>5)<<31 | uint32(bit&31)<<19 | uint32(r)
	b.jump(&branch{target: label, text: fmt.Sprintf("%s %s, #%d, %s", mnem, reg, bit, label), size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			imm, err := arm64Disp(pc, tgt, 14)
			return arm64Word(opc | imm<<5), err
		}})
}

func arm64Movz(b *builder, r int, imm uint16) {
	arm64Insn(b, 0xd2800000|uint32(imm)<<5|uint32(r), "mov x%d, #0x%x", r, imm)
}

// arm64Pair emits stp/ldp of x29, x30 or another pair with sp as base.
// mode: 0 signed offset, 1 pre-index (stp), 2 post-index (ldp).
func arm64Pair(b *builder, load bool, mode int, rt, rt2 int, off int64) {
	var opc uint32
	mnem := "stp"
	switch {
	case !load && mode == 0:
		opc = 0xa9000000
	case !load && mode == 1:
		opc = 0xa9800000
	case load && mode == 0:
		opc, mnem = 0xa9400000, "ldp"
	case load && mode == 2:
		opc, mnem = 0xa8c00000, "ldp"
	default:
		panic("gen: unsupported stp/ldp form")
	}
	w := opc | uint32(off/8)&0x7f<<15 | uint32(rt2)<<10 | arm64SP<<5 | uint32(rt)
	switch {
	case mode == 0 && off == 0:
		arm64Insn(b, w, "%s x%d, x%d, [sp]", mnem, rt, rt2)
	case mode == 0:
		arm64Insn(b, w, "%s x%d, x%d, [sp, #%d]", mnem, rt, rt2, off)
	case mode == 1:
		arm64Insn(b, w, "%s x%d, x%d, [sp, #%d]!", mnem, rt, rt2, off)
	case mode == 2:
		arm64Insn(b, w, "%s x%d, x%d, [sp], #%d", mnem, rt, rt2, off)
	}
}

// arm64SaveRecord stores the frame record (x29, x30): pre-indexed allocating n
// bytes when pre, else at sp+off.
func arm64SaveRecord(b *builder, pre bool, n int64) {
	if pre {
		arm64Pair(b, false, 1, arm64FP, arm64LR, -n)
		b.sp(-n)
		b.saveFP(0)
		b.saveRA(8)
		return
	}
	arm64Pair(b, false, 0, arm64FP, arm64LR, n)
	b.saveFP(n)
	b.saveRA(n + 8)
}

func arm64LoadRecord(b *builder, post bool, n int64) {
	if post {
		arm64Pair(b, true, 2, arm64FP, arm64LR, n)
	} else {
		arm64Pair(b, true, 0, arm64FP, arm64LR, n)
	}
	b.restoreFP()
	b.restoreRA()
	if post {
		b.sp(n)
	}
}

// arm64LdSt emits str/ldr xt, [xn, #off] (unsigned scaled offset).
func arm64LdSt(b *builder, load bool, rt, rn int, off int64) {
	opc, mnem := uint32(0xf9000000), "str"
	if load {
		opc, mnem = 0xf9400000, "ldr"
	}
	w := opc | uint32(off/8)<<10 | uint32(rn)<<5 | uint32(rt)
	if off == 0 {
		arm64Insn(b, w, "%s x%d, [%s]", mnem, rt, arm64Name(rn))
		return
	}
	arm64Insn(b, w, "%s x%d, [%s, #%d]", mnem, rt, arm64Name(rn), off)
}

// arm64AdjSP emits sub sp, sp, #n (delta < 0) or add sp, sp, #n.
func arm64AdjSP(b *builder, delta int64) {
	if delta == 0 {
		return
	}
	opc, mnem, n := uint32(0x91000000), "add", delta
	if delta < 0 {
		opc, mnem, n = 0xd1000000, "sub", -delta
	}
	arm64Insn(b, opc|uint32(n)<<10|arm64SP<<5|arm64SP, "%s sp, sp, #0x%x", mnem, n)
	b.sp(delta)
}

func arm64SetFP(b *builder) {
	arm64Insn(b, 0x910003fd, "mov x29, sp")
	b.fpFromSP(0)
}

func arm64Ret(b *builder) { arm64Insn(b, 0xd65f03c0, "ret") }

func arm64Filler(b *builder) {
	switch b.rng.IntN(4) {
	case 0:
		arm64Movz(b, arm64X9, uint16(1+b.rng.IntN(0xfffe)))
	case 1:
		arm64Movz(b, arm64X10, uint16(1+b.rng.IntN(0xfffe)))
	case 2:
		n := 1 + b.rng.IntN(4095)
		arm64Insn(b, 0x91000000|uint32(n)<<10|arm64X9<<5|arm64X9, "add x9, x9, #0x%x", n)
	default:
		arm64Insn(b, 0xd503201f, "nop")
	}
}

// arm64FPSetup: stp x29, x30, [sp, #-N]!; mov x29, sp; [sub sp, sp, #L].
func arm64FPSetup(b *builder) {
	arm64SaveRecord(b, true, int64(16*(1+b.rng.IntN(3))))
	arm64SetFP(b)
	arm64AdjSP(b, -16*int64(b.rng.IntN(3)))
}

// arm64ReleaseAddLoad releases the locals with add, then reloads the frame
// record post-indexed; arm64ReleaseMovLoad resets sp from x29 instead.
func arm64ReleaseAddLoad(b *builder) {
	arm64AdjSP(b, b.st.spOff-b.st.fpOff)
	arm64LoadRecord(b, true, b.st.fpOff)
}

func arm64ReleaseMovLoad(b *builder) {
	if b.st.spOff != b.st.fpOff {
		arm64Insn(b, 0x910003bf, "mov sp, x29")
		b.spFromFP(0)
	}
	arm64LoadRecord(b, true, b.st.spOff)
}

// arm64SaveRegs: frame record plus x19-x21, x29 set up or not.
func arm64SaveRegs(b *builder) ([]int, func(*builder, func())) {
	arm64SaveRecord(b, true, 48)
	if b.rng.IntN(2) == 0 {
		arm64SetFP(b)
	}
	arm64Pair(b, false, 0, arm64X19, arm64X20, 16)
	arm64LdSt(b, false, arm64X21, arm64SP, 32)
	return []int{arm64X19, arm64X20, arm64X21}, func(b *builder, epi func()) {
		arm64LdSt(b, true, arm64X21, arm64SP, 32)
		arm64Pair(b, true, 0, arm64X19, arm64X20, 16)
		epi()
		arm64LoadRecord(b, true, 48)
	}
}

// arm64FPSaveOne: a frame with x19 saved; the epilogues restore x19 through
// sp or through x29.
func arm64FPSaveOne(b *builder) (int, [2]func(*builder)) {
	arm64SaveRecord(b, true, 32)
	arm64SetFP(b)
	arm64LdSt(b, false, arm64X19, arm64SP, 16)
	epilogue := func(base int) func(*builder) {
		return func(b *builder) {
			arm64LdSt(b, true, arm64X19, base, 16)
			arm64LoadRecord(b, true, 32)
		}
	}
	return arm64X19, [2]func(*builder){epilogue(arm64SP), epilogue(arm64FP)}
}
