package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// AArch64 register numbers (hardware = DWARF for x0-x30; 31 is sp or xzr by context).
const (
	aX9  = 9
	aX10 = 10
	aX16 = 16
	aX19 = 19
	aX20 = 20
	aX21 = 21
	aFP  = 29
	aLR  = 30
	aSP  = 31
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
		regName:       a64Name,
		callOK: func(st *frame) error {
			if st.ra.Kind != sframe.RuleExpr {
				return errNoRA
			}
			return alignErr(st.spOff, 16)
		},
		testBranch: func(b *builder, arg, bit int, set bool, label string) {
			r := b.t.argRegs[arg]
			a64TestBit(b, set, r, bit, label)
		},
		call: func(b *builder, fn string) { a64Branch26(b, 0x94000000, "bl", fn) },
		stub: func(b *builder, root string) {
			// Align SP down to 16 whatever the loader chose.
			a64(b, 0x910003e9, "mov x9, sp")
			a64(b, 0x92400000|60<<16|59<<10|aX9<<5|aX9, "and x9, x9, #0xfffffffffffffff0")
			a64(b, 0x9100013f, "mov sp, x9")
			a64(b, 0xd2a00000|0xfb5f<<5|aFP, "mov x29, #0xfb5f0000")
			b.emitCall(root)
			a64(b, 0xd4200000, "brk #0x0").exit = true
		},
		filler: a64Filler,
		loop: func(b *builder, n int) {
			a64Movz(b, aX9, uint16(n))
			l := b.newLabel()
			b.place(l)
			a64(b, 0xf1000000|1<<10|aX9<<5|aX9, "subs x9, x9, #0x1")
			a64Cond(b, 1, "ne", l)
		},
	}
	t.prims = prims{
		fpSetup:     a64FPSetup,
		fpTeardowns: []func(b *builder){a64ReleaseAddLoad, a64ReleaseMovLoad},
		spSetup: func(b *builder) {
			// The frame record at the top of the frame, x29 not set.
			a := int64(16 * (1 + b.rng.IntN(3)))
			a64AdjSP(b, -a)
			a64SaveRecord(b, false, a-16)
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			a := b.st.spOff
			a64LoadRecord(b, false, a-16)
			a64AdjSP(b, a)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -16 * (1 + int64(b.rng.IntN(4)))
			}
			a64AdjSP(b, exact)
			return exact
		},
		saveRegs:  a64SaveRegs,
		setReg:    func(b *builder, r int) { a64Movz(b, r, uint16(1+b.rng.IntN(0xfffe))) },
		fpSaveOne: a64FPSaveOne,
		ret:       a64Ret,
		tailJump:  func(b *builder, fn string) { a64Branch26(b, 0x14000000, "b", fn) },
		// prims_a64.go
		pltStub: a64PLTStub, pad: a64Pad,
		farCall:  a64FarCall,
		newStack: a64NewStack,

		sigTrampoline: a64SigTrampoline,
	}
	// AArch64's own patterns (arm64_frames.go, arm64_pac.go).
	t.own = []*pattern{a64RecordBottom, a64RecordTop, a64LROnly, a64BigFrame, a64PACA, a64PACB}
	return t
}

func a64Name(r int) string {
	if r == aSP {
		return "sp"
	}
	return fmt.Sprintf("x%d", r)
}

// a64 emits one instruction word; AArch64 code is little-endian in both
// data byte orders.
func a64(b *builder, word uint32, format string, args ...any) *op {
	return b.insn(binary.LittleEndian.AppendUint32(nil, word), format, args...)
}

func a64Word(w uint32) []byte { return binary.LittleEndian.AppendUint32(nil, w) }

// a64Disp checks a branch displacement for an imm field of bits and
// returns it in words.
func a64Disp(pc, tgt uint64, bits uint) (uint32, error) {
	d := int64(tgt - pc)
	lim := int64(1) << (bits + 1) // bytes: imm is in words, signed
	if d%4 != 0 || d < -lim || d >= lim {
		return 0, fmt.Errorf("displacement %d out of range for a %d-bit branch", d, bits)
	}
	return uint32(d/4) & (1<<bits - 1), nil
}

func a64Branch26(b *builder, opc uint32, mnem, target string) {
	b.jump(&branch{target: target, text: mnem + " " + target, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			imm, err := a64Disp(pc, tgt, 26)
			return a64Word(opc | imm), err
		}})
}

// a64Cond emits b.<cond> to label.
func a64Cond(b *builder, cond uint32, name, label string) {
	b.jump(&branch{target: label, text: "b." + name + " " + label, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			imm, err := a64Disp(pc, tgt, 19)
			return a64Word(0x54000000 | imm<<5 | cond), err
		}})
}

// a64TestBit emits tbnz (set) or tbz to label on bit of register r.
func a64TestBit(b *builder, set bool, r, bit int, label string) {
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
			imm, err := a64Disp(pc, tgt, 14)
			return a64Word(opc | imm<<5), err
		}})
}

func a64Movz(b *builder, r int, imm uint16) {
	a64(b, 0xd2800000|uint32(imm)<<5|uint32(r), "mov x%d, #0x%x", r, imm)
}

// a64Pair emits stp/ldp of x29, x30 or another pair with sp as base.
// mode: 0 signed offset, 1 pre-index (stp), 2 post-index (ldp).
func a64Pair(b *builder, load bool, mode int, rt, rt2 int, off int64) {
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
	w := opc | uint32(off/8)&0x7f<<15 | uint32(rt2)<<10 | aSP<<5 | uint32(rt)
	switch {
	case mode == 0 && off == 0:
		a64(b, w, "%s x%d, x%d, [sp]", mnem, rt, rt2)
	case mode == 0:
		a64(b, w, "%s x%d, x%d, [sp, #%d]", mnem, rt, rt2, off)
	case mode == 1:
		a64(b, w, "%s x%d, x%d, [sp, #%d]!", mnem, rt, rt2, off)
	case mode == 2:
		a64(b, w, "%s x%d, x%d, [sp], #%d", mnem, rt, rt2, off)
	}
}

// a64Record stores the frame record (x29, x30): pre-indexed allocating n
// bytes when pre, else at sp+off.
func a64SaveRecord(b *builder, pre bool, n int64) {
	if pre {
		a64Pair(b, false, 1, aFP, aLR, -n)
		b.sp(-n)
		b.saveFP(0)
		b.saveRA(8)
		return
	}
	a64Pair(b, false, 0, aFP, aLR, n)
	b.saveFP(n)
	b.saveRA(n + 8)
}

func a64LoadRecord(b *builder, post bool, n int64) {
	if post {
		a64Pair(b, true, 2, aFP, aLR, n)
	} else {
		a64Pair(b, true, 0, aFP, aLR, n)
	}
	b.restoreFP()
	b.restoreRA()
	if post {
		b.sp(n)
	}
}

// a64LdSt emits str/ldr xt, [xn, #off] (unsigned scaled offset).
func a64LdSt(b *builder, load bool, rt, rn int, off int64) {
	opc, mnem := uint32(0xf9000000), "str"
	if load {
		opc, mnem = 0xf9400000, "ldr"
	}
	w := opc | uint32(off/8)<<10 | uint32(rn)<<5 | uint32(rt)
	if off == 0 {
		a64(b, w, "%s x%d, [%s]", mnem, rt, a64Name(rn))
		return
	}
	a64(b, w, "%s x%d, [%s, #%d]", mnem, rt, a64Name(rn), off)
}

// a64AdjSP emits sub sp, sp, #n (delta < 0) or add sp, sp, #n.
func a64AdjSP(b *builder, delta int64) {
	if delta == 0 {
		return
	}
	opc, mnem, n := uint32(0x91000000), "add", delta
	if delta < 0 {
		opc, mnem, n = 0xd1000000, "sub", -delta
	}
	a64(b, opc|uint32(n)<<10|aSP<<5|aSP, "%s sp, sp, #0x%x", mnem, n)
	b.sp(delta)
}

func a64SetFP(b *builder) {
	a64(b, 0x910003fd, "mov x29, sp")
	b.fpFromSP(0)
}

func a64Ret(b *builder) { a64(b, 0xd65f03c0, "ret") }

func a64Filler(b *builder) {
	switch b.rng.IntN(4) {
	case 0:
		a64Movz(b, aX9, uint16(1+b.rng.IntN(0xfffe)))
	case 1:
		a64Movz(b, aX10, uint16(1+b.rng.IntN(0xfffe)))
	case 2:
		n := 1 + b.rng.IntN(4095)
		a64(b, 0x91000000|uint32(n)<<10|aX9<<5|aX9, "add x9, x9, #0x%x", n)
	default:
		a64(b, 0xd503201f, "nop")
	}
}

// a64FPSetup: stp x29, x30, [sp, #-N]!; mov x29, sp; [sub sp, sp, #L].
func a64FPSetup(b *builder) {
	a64SaveRecord(b, true, int64(16*(1+b.rng.IntN(3))))
	a64SetFP(b)
	a64AdjSP(b, -16*int64(b.rng.IntN(3)))
}

// a64ReleaseAddLoad releases the locals with add, then reloads the frame
// record post-indexed; a64ReleaseMovLoad resets sp from x29 instead.
func a64ReleaseAddLoad(b *builder) {
	a64AdjSP(b, b.st.spOff-b.st.fpOff)
	a64LoadRecord(b, true, b.st.fpOff)
}

func a64ReleaseMovLoad(b *builder) {
	if b.st.spOff != b.st.fpOff {
		a64(b, 0x910003bf, "mov sp, x29")
		b.spFromFP(0)
	}
	a64LoadRecord(b, true, b.st.spOff)
}

// a64SaveRegs: frame record plus x19-x21, x29 set up or not.
func a64SaveRegs(b *builder) ([]int, func(*builder, func())) {
	a64SaveRecord(b, true, 48)
	if b.rng.IntN(2) == 0 {
		a64SetFP(b)
	}
	a64Pair(b, false, 0, aX19, aX20, 16)
	a64LdSt(b, false, aX21, aSP, 32)
	return []int{aX19, aX20, aX21}, func(b *builder, epi func()) {
		a64LdSt(b, true, aX21, aSP, 32)
		a64Pair(b, true, 0, aX19, aX20, 16)
		epi()
		a64LoadRecord(b, true, 48)
	}
}

// a64FPSaveOne: a frame with x19 saved; the epilogues restore x19 through
// sp or through x29.
func a64FPSaveOne(b *builder) (int, [2]func(*builder)) {
	a64SaveRecord(b, true, 32)
	a64SetFP(b)
	a64LdSt(b, false, aX19, aSP, 16)
	epilogue := func(base int) func(*builder) {
		return func(b *builder) {
			a64LdSt(b, true, aX19, base, 16)
			a64LoadRecord(b, true, 32)
		}
	}
	return aX19, [2]func(*builder){epilogue(aSP), epilogue(aFP)}
}
