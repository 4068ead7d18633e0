package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// s390x ABI facts the patterns rely on: the caller provides a 160-byte
// register save area at its SP; a callee saves r6-r15 into it at
// 48 + 8*(r-6); the CFA is the SP at entry + 160.
const (
	zSaveArea = 160
	zR1       = 1
	zR0       = 0
	zR11      = 11
	zR14      = 14
	zR15      = 15
)

func zSlot(r int) int64 { return 48 + 8*int64(r-6) }

func s390xTarget() *isa {
	t := &isa{
		abi: target.S390X, sp: target.RegS390XSP, fp: target.RegS390XFP, ra: target.RegS390XRA,
		entrySPOff: zSaveArea,
		entryRA:    sframe.Rule{Kind: sframe.RuleSame},
		argRegs:    []int{2, 3, 4, 5},
		testBits:   16,
		codeAlign:  2,

		typeDirective: "@function",
		regName:       zDwarfName,
		callOK: func(st *frame) error {
			if st.ra.Kind != sframe.RuleExpr {
				return errNoRA
			}
			if st.spOff < 2*zSaveArea {
				return fmt.Errorf("CFA-SP = %d leaves no register save area for the callee", st.spOff)
			}
			return alignErr(st.spOff, 8)
		},
		testBranch: func(b *builder, arg, bit int, set bool, label string) {
			r := b.t.argRegs[arg]
			imm := uint16(1) << bit
			b.insn([]byte{0xa7, byte(r)<<4 | 1, byte(imm >> 8), byte(imm)}, "tmll %%r%d,%d", r, imm)
			if set {
				zBrc(b, 7, "jne", label)
			} else {
				zBrc(b, 8, "je", label)
			}
		},
		call: func(b *builder, fn string) { zLong(b, 0xe5, "brasl %r14,", fn) },
		stub: func(b *builder, root string) {
			// Align SP down to 8 and give the root its register save area.
			zLghi(b, zR0, -8)
			b.insn([]byte{0xb9, 0x80, 0x00, zR15<<4 | zR0}, "ngr %%r15,%%r0")
			zAghi(b, zR15, -zSaveArea)
			b.insn(binary.BigEndian.AppendUint32([]byte{0xc0, zR11<<4 | 1}, 0x5fb0f00d), "lgfi %%r11,%d", 0x5fb0f00d)
			b.emitCall(root)
			b.insn([]byte{0x0a, 0x00}, "svc 0").exit = true
		},
		filler: zFiller,
		loop: func(b *builder, n int) {
			zLghi(b, zR1, int16(n))
			l := b.newLabel()
			b.place(l)
			zAghi(b, zR0, 1)
			b.jump(&branch{target: l, text: "brctg %r1," + l, size: func(bool) int { return 4 },
				enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return zRel16([]byte{0xa7, zR1<<4 | 7}, pc, tgt) }})
		},
	}
	t.prims = prims{
		fpSetup: func(b *builder) {
			zSave(b, zR11)
			zAghi(b, zR15, -(zSaveArea + 8*int64(b.rng.IntN(5))))
			zSetFP(b)
		},
		fpTeardowns: []func(b *builder){
			func(b *builder) { zRestore(b, zR11, zR11) },
			func(b *builder) { zRestore(b, zR11, zR15) },
		},
		spSetup: func(b *builder) {
			// Only %r14/%r15 saved; CFA from %r15.
			zSave(b, zR14)
			zAghi(b, zR15, -(zSaveArea + 8*int64(b.rng.IntN(4))))
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			if b.rng.IntN(2) == 0 {
				zAghi(b, zR15, b.st.spOff-zSaveArea)
			}
			zRestore(b, zR14, zR15)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -8 * (1 + int64(b.rng.IntN(8)))
			}
			zAghi(b, zR15, exact)
			return exact
		},
		saveRegs: func(b *builder) ([]int, func(*builder, func())) {
			// The full stmg %r6,%r15 / lmg %r6,%r15 frame.
			zSave(b, 6)
			zAghi(b, zR15, -(zSaveArea + 8*int64(b.rng.IntN(4))))
			var regs []int
			for r := 6; r <= 10; r++ {
				if b.rng.IntN(2) == 0 {
					regs = append(regs, r)
				}
			}
			return regs, func(b *builder, epi func()) {
				epi()
				zRestore(b, 6, zR15)
			}
		},
		setReg: func(b *builder, r int) { zLghi(b, r, int16(b.rng.Uint32())) },
		fpSaveOne: func(b *builder) (int, [2]func(*builder)) {
			zSave(b, 6)
			zAghi(b, zR15, -(zSaveArea + 16))
			zSetFP(b)
			return 6, [2]func(*builder){
				func(b *builder) { zRestore(b, 6, zR11) },
				func(b *builder) { zRestore(b, 6, zR15) },
			}
		},
		ret:      zRet,
		tailJump: func(b *builder, fn string) { zLong(b, 0xf4, "jg ", fn) },
		// prims_zarch.go
		pltStub: zPLTStub, pad: zPad,
		farCall:  zFarCall,
		newStack: zNewStack,

		sigTrampoline: zSigTrampoline,
	}
	t.own = zarchPatterns()
	return t
}

// zFPRByDwarf is the FPR that DWARF number 16+i names (s390x ELF ABI).
var zFPRByDwarf = [16]int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}

func zDwarfName(r int) string {
	if r >= 16 && r < 32 {
		return fmt.Sprintf("%%f%d", zFPRByDwarf[r-16])
	}
	return fmt.Sprintf("%%r%d", r)
}

// zDwarfFPR is the DWARF number of FPR f.
func zDwarfFPR(f int) int {
	for i, x := range zFPRByDwarf {
		if x == f {
			return 16 + i
		}
	}
	panic(fmt.Sprintf("gen: no FPR %d", f))
}

// zRel16 and zRel32 encode halfword-relative displacements from the
// instruction's own address.
func zRel16(opc []byte, pc, tgt uint64) ([]byte, error) {
	d := int64(tgt - pc)
	if d%2 != 0 || d/2 < -1<<15 || d/2 >= 1<<15 {
		return nil, fmt.Errorf("displacement %d out of range for a 16-bit branch", d)
	}
	return binary.BigEndian.AppendUint16(append([]byte(nil), opc...), uint16(int16(d/2))), nil
}

func zRel32(opc []byte, pc, tgt uint64) ([]byte, error) {
	d := int64(tgt - pc)
	if d%2 != 0 || d/2 < -1<<31 || d/2 >= 1<<31 {
		return nil, fmt.Errorf("displacement %d out of range for a 32-bit branch", d)
	}
	return binary.BigEndian.AppendUint32(append([]byte(nil), opc...), uint32(int32(d/2))), nil
}

// zBrc emits brc mask,label under its extended mnemonic.
func zBrc(b *builder, mask byte, mnem, label string) {
	b.jump(&branch{target: label, text: mnem + " " + label, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return zRel16([]byte{0xa7, mask<<4 | 4}, pc, tgt) }})
}

// zLong emits brasl (op2 5, with %r14) or brcl 15 = jg (op2 4).
func zLong(b *builder, op2 byte, prefix, target string) {
	b.jump(&branch{target: target, text: prefix + target, size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return zRel32([]byte{0xc0, op2}, pc, tgt) }})
}

func zAghi(b *builder, r int, imm int64) {
	b.insn(binary.BigEndian.AppendUint16([]byte{0xa7, byte(r)<<4 | 0xb}, uint16(int16(imm))), "aghi %%r%d,%d", r, imm)
	if r == zR15 {
		b.sp(imm)
	}
}

func zLghi(b *builder, r int, imm int16) {
	b.insn(binary.BigEndian.AppendUint16([]byte{0xa7, byte(r)<<4 | 9}, uint16(imm)), "lghi %%r%d,%d", r, imm)
}

// zMulti emits stmg (store) or lmg of r1..r3 at disp(base).
func zMulti(b *builder, load bool, r1, r3, base int, disp int64) {
	op, mnem := byte(0x24), "stmg"
	if load {
		op, mnem = 0x04, "lmg"
	}
	dl, dh := uint32(disp)&0xfff, byte(disp>>12)
	b.insn([]byte{0xeb, byte(r1<<4 | r3), byte(base<<4) | byte(dl>>8), byte(dl), dh, op}, "%s %%r%d,%%r%d,%d(%%r%d)", mnem, r1, r3, disp, base)
}

// zSave stores r1..r15 in the caller's register save area.
func zSave(b *builder, r1 int) {
	zMulti(b, false, r1, zR15, zR15, zSlot(r1))
	if r1 <= zR11 {
		b.saveFP(zSlot(zR11))
	}
	if r1 <= zR14 {
		b.saveRA(zSlot(zR14))
	}
}

// zRestore reloads r1..r15 from the save area, addressed from base; the
// reload of %r15 pops the whole frame.
func zRestore(b *builder, r1, base int) {
	var disp int64
	switch base {
	case zR15:
		disp = b.st.spOff - zSaveArea + zSlot(r1)
	case zR11:
		disp = b.st.fpOff - zSaveArea + zSlot(r1)
	}
	zMulti(b, true, r1, zR15, base, disp)
	b.spReload()
	b.restoreFP()
	b.restoreRA()
}

func zSetFP(b *builder) {
	b.insn([]byte{0xb9, 0x04, 0x00, zR11<<4 | zR15}, "lgr %%r11,%%r15")
	b.fpFromSP(0)
}

func zRet(b *builder) { b.insn([]byte{0x07, 0xfe}, "br %%r14") }

func zFiller(b *builder) {
	switch b.rng.IntN(4) {
	case 0:
		zLghi(b, zR1, int16(b.rng.Uint32()))
	case 1:
		zLghi(b, zR0, int16(b.rng.Uint32()))
	case 2:
		zAghi(b, zR1, int64(1+b.rng.IntN(1000)))
	default:
		b.insn([]byte{0x07, 0x07}, "nopr %%r7")
	}
}

// The instructions the s390x-only patterns add (zarch_*.go). Each records
// what it does to the frame, as zAghi and zSave do.

// zDisp20 checks a long (20-bit signed) displacement and splits it into
// the DL and DH fields of an RXY or RSY instruction.
func zDisp20(d int64) (dl uint32, dh byte) {
	if d < -1<<19 || d >= 1<<19 {
		panic(fmt.Sprintf("gen: displacement %d does not fit 20 bits", d))
	}
	return uint32(d) & 0xfff, byte(d >> 12)
}

// zRXY emits an RXY instruction (e3 .. op) with no index register.
func zRXY(b *builder, op byte, text string, r1, base int, d int64) {
	dl, dh := zDisp20(d)
	b.insn([]byte{0xe3, byte(r1 << 4), byte(base<<4) | byte(dl>>8), byte(dl), dh, op}, "%s", text)
}

// zStg stores GPR r at d(base). Storing %r11 into its slot is the FP's
// save; other stores (the back chain, %r15 into its slot) change no rule.
func zStg(b *builder, r, base int, d int64) {
	zRXY(b, 0x24, fmt.Sprintf("stg %%r%d,%d(%%r%d)", r, d, base), r, base, d)
	if r == zR11 && base == zR15 && d == b.st.spOff-zSaveArea+zSlot(zR11) {
		b.saveFP(d)
	}
}

// zLg loads GPR r from d(base): %r11 gets the caller's FP back, %r15 its
// value at entry (the caller's SP, from its slot).
func zLg(b *builder, r, base int, d int64) {
	zRXY(b, 0x04, fmt.Sprintf("lg %%r%d,%d(%%r%d)", r, d, base), r, base, d)
	switch r {
	case zR11:
		b.restoreFP()
	case zR15:
		b.spReload()
	}
}

// zLay emits lay r1,d(base): SP moved (r1 = base = %r15), SP set from the
// FP (%r15 from %r11) or the FP set from SP (%r11 from %r15).
func zLay(b *builder, r1, base int, d int64) {
	zRXY(b, 0x71, fmt.Sprintf("lay %%r%d,%d(%%r%d)", r1, d, base), r1, base, d)
	zAddressOf(b, r1, base, d)
}

// zLa emits la r1,d(base), d a 12-bit unsigned displacement.
func zLa(b *builder, r1, base int, d int64) {
	if d < 0 || d > 0xfff {
		panic(fmt.Sprintf("gen: la displacement %d out of range", d))
	}
	b.insn([]byte{0x41, byte(r1 << 4), byte(base<<4) | byte(d>>8), byte(d)}, "la %%r%d,%d(%%r%d)", r1, d, base)
	zAddressOf(b, r1, base, d)
}

func zAddressOf(b *builder, r1, base int, d int64) {
	switch {
	case r1 == zR15 && base == zR15:
		b.sp(d)
	case r1 == zR15 && base == zR11:
		b.spFromFP(d)
	case r1 == zR11 && base == zR15:
		b.fpFromSP(d)
	default:
		panic(fmt.Sprintf("gen: no frame effect for %%r%d = %d(%%r%d)", r1, d, base))
	}
}

// zLgr emits lgr r1,r2. Only the moves the patterns make are allowed: the
// FP from SP, SP from the FP, or a copy of SP into a scratch register
// (%r1, or %r14 once the RA is saved: GCC's back chain).
func zLgr(b *builder, r1, r2 int) {
	b.insn([]byte{0xb9, 0x04, 0x00, byte(r1<<4 | r2)}, "lgr %%r%d,%%r%d", r1, r2)
	switch {
	case r1 == zR11 && r2 == zR15:
		b.fpFromSP(0)
	case r1 == zR15 && r2 == zR11:
		b.spFromFP(0)
	case r2 == zR15 && (r1 == zR1 || r1 == zR14):
		zClobbers(b, r1)
	default:
		panic(fmt.Sprintf("gen: no frame effect for lgr %%r%d,%%r%d", r1, r2))
	}
}

// zClobbers panics when register r still holds what a rule says the
// caller needs from it.
func zClobbers(b *builder, r int) {
	if r == zR14 && b.st.ra.Kind == sframe.RuleSame {
		panic(fmt.Sprintf("gen: %s: %%r14 overwritten while it holds the return address", b.name))
	}
	if r == zR11 && b.st.fp.Kind == sframe.RuleSame {
		panic(fmt.Sprintf("gen: %s: %%r11 overwritten while it holds the caller's FP", b.name))
	}
}

// zScratch writes a random value to GPR r, as code that needs one more
// register does; r must be saved.
func zScratch(b *builder, r int) {
	zClobbers(b, r)
	zLghi(b, r, int16(b.rng.Uint32()))
}

// zLdgr copies GPR r into FPR f (ldgr): the RA (%r14) or the caller's FP
// (%r11) is then in f, as GCC saves them in leaf functions; SP (%r15)
// saved there changes no rule.
func zLdgr(b *builder, f, r int) {
	b.insn([]byte{0xb3, 0xc1, 0x00, byte(f<<4 | r)}, "ldgr %%f%d,%%r%d", f, r)
	switch r {
	case zR14:
		b.raIn(zDwarfFPR(f))
	case zR11:
		b.fpIn(zDwarfFPR(f))
	}
}

// zLgdr copies FPR f back into GPR r (lgdr).
func zLgdr(b *builder, r, f int) {
	b.insn([]byte{0xb3, 0xcd, 0x00, byte(r<<4 | f)}, "lgdr %%r%d,%%f%d", r, f)
	switch r {
	case zR14:
		b.restoreRA()
	case zR11:
		b.restoreFP()
	case zR15:
		b.spReload()
	}
}

// zStd stores FPR f at d(base), d a 12-bit unsigned displacement: the
// back chain when the old SP was saved in f.
func zStd(b *builder, f, base int, d int64) {
	b.insn([]byte{0x60, byte(f << 4), byte(base<<4) | byte(d>>8), byte(d)}, "std %%f%d,%d(%%r%d)", f, d, base)
}

// zLogicalImm emits slgfi (grow) or algfi (shrink) of %r15 by n, the
// 32-bit unsigned immediates GCC uses past lay's range.
func zLogicalImm(b *builder, delta int64) {
	op, mnem, n := byte(0xa), "algfi", delta
	if delta < 0 {
		op, mnem, n = 0x4, "slgfi", -delta
	}
	b.insn(binary.BigEndian.AppendUint32([]byte{0xc2, zR15<<4 | op}, uint32(n)), "%s %%r15,%d", mnem, n)
	b.sp(delta)
}

// zAdjust moves SP by delta in one of the forms GCC uses: aghi where the
// immediate fits 16 bits, lay within 20 bits, slgfi/algfi beyond.
func zAdjust(b *builder, delta int64) {
	fits16 := delta >= -1<<15 && delta < 1<<15
	fits20 := delta >= -1<<19 && delta < 1<<19
	switch {
	case fits16 && b.rng.IntN(2) == 0:
		zAghi(b, zR15, delta)
	case fits16 || (fits20 && b.rng.IntN(4) != 0):
		zLay(b, zR15, zR15, delta)
	default:
		zLogicalImm(b, delta)
	}
}

// zStoreRange stores r1..r3 into their slots of the caller's register
// save area, addressed from %r15 (stg for one register, as GCC does).
func zStoreRange(b *builder, r1, r3 int) {
	d := b.st.spOff - zSaveArea + zSlot(r1)
	if r1 == r3 {
		zStg(b, r1, zR15, d)
		return
	}
	zMulti(b, false, r1, r3, zR15, d)
	if r1 <= zR11 && zR11 <= r3 {
		b.saveFP(d + zSlot(zR11) - zSlot(r1))
	}
	if r1 <= zR14 && zR14 <= r3 {
		b.saveRA(d + zSlot(zR14) - zSlot(r1))
	}
}

// zLoadRange reloads r1..r3 from their slots, addressed from base (%r15
// or %r11).
func zLoadRange(b *builder, r1, r3, base int) {
	var d int64
	switch base {
	case zR15:
		d = b.st.spOff - zSaveArea + zSlot(r1)
	case zR11:
		d = b.st.fpOff - zSaveArea + zSlot(r1)
	default:
		panic("gen: save area addressed from neither SP nor FP")
	}
	if r1 == r3 {
		zLg(b, r1, base, d)
		return
	}
	zMulti(b, true, r1, r3, base, d)
	if r3 == zR15 {
		b.spReload()
	}
	if r1 <= zR11 && zR11 <= r3 {
		b.restoreFP()
	}
	if r1 <= zR14 && zR14 <= r3 {
		b.restoreRA()
	}
}
