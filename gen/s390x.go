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
	s390xSaveArea = 160
	s390xR1       = 1
	s390xR0       = 0
	s390xR11      = 11
	s390xR14      = 14
	s390xR15      = 15
)

func s390xSlot(r int) int64 { return 48 + 8*int64(r-6) }

func s390xTarget() *isa {
	t := &isa{
		abi: target.S390X, sp: target.RegS390XSP, fp: target.RegS390XFP, ra: target.RegS390XRA,
		entrySPOff: s390xSaveArea,
		entryRA:    sframe.Rule{Kind: sframe.RuleSame},
		argRegs:    []int{2, 3, 4, 5},
		testBits:   16,
		codeAlign:  2,

		typeDirective: "@function",
		regName:       s390xDwarfName,
		callOK: func(st *frame) error {
			if st.ra.Kind != sframe.RuleExpr {
				return errNoRA
			}
			if st.spOff < 2*s390xSaveArea {
				return fmt.Errorf("CFA-SP = %d leaves no register save area for the callee", st.spOff)
			}
			return alignErr(st.spOff, 8)
		},
		testBranch: func(b *builder, arg, bit int, set bool, label string) {
			r := b.t.argRegs[arg]
			imm := uint16(1) << bit
			b.insn([]byte{0xa7, byte(r)<<4 | 1, byte(imm >> 8), byte(imm)}, "tmll %%r%d,%d", r, imm)
			if set {
				s390xBrc(b, 7, "jne", label)
			} else {
				s390xBrc(b, 8, "je", label)
			}
		},
		call: func(b *builder, fn string) { s390xLong(b, 0xe5, "brasl %r14,", fn) },
		stub: func(b *builder, root string) {
			// Align SP down to 8 and give the root its register save area.
			s390xLghi(b, s390xR0, -8)
			b.insn([]byte{0xb9, 0x80, 0x00, s390xR15<<4 | s390xR0}, "ngr %%r15,%%r0")
			s390xAghi(b, s390xR15, -s390xSaveArea)
			b.insn(binary.BigEndian.AppendUint32([]byte{0xc0, s390xR11<<4 | 1}, 0x5fb0f00d), "lgfi %%r11,%d", 0x5fb0f00d)
			b.emitCall(root)
			b.insn([]byte{0x0a, 0x00}, "svc 0").exit = true
		},
		filler: s390xFiller,
		loop: func(b *builder, n int) {
			s390xLghi(b, s390xR1, int16(n))
			l := b.newLabel()
			b.place(l)
			s390xAghi(b, s390xR0, 1)
			b.jump(&branch{target: l, text: "brctg %r1," + l, size: func(bool) int { return 4 },
				enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return s390xRel16([]byte{0xa7, s390xR1<<4 | 7}, pc, tgt) }})
		},
	}
	t.prims = prims{
		fpSetup: func(b *builder) {
			s390xSave(b, s390xR11)
			s390xAghi(b, s390xR15, -(s390xSaveArea + 8*int64(b.rng.IntN(5))))
			s390xSetFP(b)
		},
		fpTeardowns: []func(b *builder){
			func(b *builder) { s390xRestore(b, s390xR11, s390xR11) },
			func(b *builder) { s390xRestore(b, s390xR11, s390xR15) },
		},
		spSetup: func(b *builder) {
			// Only %r14/%r15 saved; CFA from %r15.
			s390xSave(b, s390xR14)
			s390xAghi(b, s390xR15, -(s390xSaveArea + 8*int64(b.rng.IntN(4))))
		},
		spTeardown: func(b *builder, epi func()) {
			epi()
			if b.rng.IntN(2) == 0 {
				s390xAghi(b, s390xR15, b.st.spOff-s390xSaveArea)
			}
			s390xRestore(b, s390xR14, s390xR15)
		},
		alloc: func(b *builder, exact int64) int64 {
			if exact == 0 {
				exact = -8 * (1 + int64(b.rng.IntN(8)))
			}
			s390xAghi(b, s390xR15, exact)
			return exact
		},
		saveRegs: func(b *builder) ([]int, func(*builder, func())) {
			// The full stmg %r6,%r15 / lmg %r6,%r15 frame.
			s390xSave(b, 6)
			s390xAghi(b, s390xR15, -(s390xSaveArea + 8*int64(b.rng.IntN(4))))
			var regs []int
			for r := 6; r <= 10; r++ {
				if b.rng.IntN(2) == 0 {
					regs = append(regs, r)
				}
			}
			return regs, func(b *builder, epi func()) {
				epi()
				s390xRestore(b, 6, s390xR15)
			}
		},
		setReg: func(b *builder, r int) { s390xLghi(b, r, int16(b.rng.Uint32())) },
		fpSaveOne: func(b *builder) (int, [2]func(*builder)) {
			s390xSave(b, 6)
			s390xAghi(b, s390xR15, -(s390xSaveArea + 16))
			s390xSetFP(b)
			return 6, [2]func(*builder){
				func(b *builder) { s390xRestore(b, 6, s390xR11) },
				func(b *builder) { s390xRestore(b, 6, s390xR15) },
			}
		},
		ret:      s390xRet,
		tailJump: func(b *builder, fn string) { s390xLong(b, 0xf4, "jg ", fn) },
		// s390x_prims.go, s390x_signal.go
		pltStub: s390xPLTStub, pad: s390xPad,
		farCall:  s390xFarCall,
		newStack: s390xNewStack,

		sigTrampoline: s390xSigTrampoline,
	}
	t.own = s390xOwn()
	return t
}

// s390xFPRByDwarf is the FPR that DWARF number 16+i names (s390x ELF ABI).
var s390xFPRByDwarf = [16]int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}

func s390xDwarfName(r int) string {
	if r >= 16 && r < 32 {
		return fmt.Sprintf("%%f%d", s390xFPRByDwarf[r-16])
	}
	return fmt.Sprintf("%%r%d", r)
}

// s390xDwarfFPR is the DWARF number of FPR f.
func s390xDwarfFPR(f int) int {
	for i, x := range s390xFPRByDwarf {
		if x == f {
			return 16 + i
		}
	}
	panic(fmt.Sprintf("gen: no FPR %d", f))
}

// s390xRel16 and s390xRel32 encode halfword-relative displacements from the
// instruction's own address.
func s390xRel16(opc []byte, pc, tgt uint64) ([]byte, error) {
	d := int64(tgt - pc)
	if d%2 != 0 || d/2 < -1<<15 || d/2 >= 1<<15 {
		return nil, fmt.Errorf("displacement %d out of range for a 16-bit branch", d)
	}
	return binary.BigEndian.AppendUint16(append([]byte(nil), opc...), uint16(int16(d/2))), nil
}

func s390xRel32(opc []byte, pc, tgt uint64) ([]byte, error) {
	d := int64(tgt - pc)
	if d%2 != 0 || d/2 < -1<<31 || d/2 >= 1<<31 {
		return nil, fmt.Errorf("displacement %d out of range for a 32-bit branch", d)
	}
	return binary.BigEndian.AppendUint32(append([]byte(nil), opc...), uint32(int32(d/2))), nil
}

// s390xBrc emits brc mask,label under its extended mnemonic.
func s390xBrc(b *builder, mask byte, mnem, label string) {
	b.jump(&branch{target: label, text: mnem + " " + label, size: func(bool) int { return 4 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return s390xRel16([]byte{0xa7, mask<<4 | 4}, pc, tgt) }})
}

// s390xLong emits brasl (op2 5, with %r14) or brcl 15 = jg (op2 4).
func s390xLong(b *builder, op2 byte, prefix, target string) {
	b.jump(&branch{target: target, text: prefix + target, size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) { return s390xRel32([]byte{0xc0, op2}, pc, tgt) }})
}

func s390xAghi(b *builder, r int, imm int64) {
	b.insn(binary.BigEndian.AppendUint16([]byte{0xa7, byte(r)<<4 | 0xb}, uint16(int16(imm))), "aghi %%r%d,%d", r, imm)
	if r == s390xR15 {
		b.sp(imm)
	}
}

func s390xLghi(b *builder, r int, imm int16) {
	b.insn(binary.BigEndian.AppendUint16([]byte{0xa7, byte(r)<<4 | 9}, uint16(imm)), "lghi %%r%d,%d", r, imm)
}

// s390xMulti emits stmg (store) or lmg of r1..r3 at disp(base).
func s390xMulti(b *builder, load bool, r1, r3, base int, disp int64) {
	op, mnem := byte(0x24), "stmg"
	if load {
		op, mnem = 0x04, "lmg"
	}
	dl, dh := uint32(disp)&0xfff, byte(disp>>12)
	b.insn([]byte{0xeb, byte(r1<<4 | r3), byte(base<<4) | byte(dl>>8), byte(dl), dh, op}, "%s %%r%d,%%r%d,%d(%%r%d)", mnem, r1, r3, disp, base)
}

// s390xSave stores r1..r15 in the caller's register save area.
func s390xSave(b *builder, r1 int) {
	s390xMulti(b, false, r1, s390xR15, s390xR15, s390xSlot(r1))
	if r1 <= s390xR11 {
		b.saveFP(s390xSlot(s390xR11))
	}
	if r1 <= s390xR14 {
		b.saveRA(s390xSlot(s390xR14))
	}
}

// s390xRestore reloads r1..r15 from the save area, addressed from base; the
// reload of %r15 pops the whole frame.
func s390xRestore(b *builder, r1, base int) {
	var disp int64
	switch base {
	case s390xR15:
		disp = b.st.spOff - s390xSaveArea + s390xSlot(r1)
	case s390xR11:
		disp = b.st.fpOff - s390xSaveArea + s390xSlot(r1)
	}
	s390xMulti(b, true, r1, s390xR15, base, disp)
	b.spReload()
	b.restoreFP()
	b.restoreRA()
}

func s390xSetFP(b *builder) {
	b.insn([]byte{0xb9, 0x04, 0x00, s390xR11<<4 | s390xR15}, "lgr %%r11,%%r15")
	b.fpFromSP(0)
}

func s390xRet(b *builder) { b.insn([]byte{0x07, 0xfe}, "br %%r14") }

func s390xFiller(b *builder) {
	switch b.rng.IntN(4) {
	case 0:
		s390xLghi(b, s390xR1, int16(b.rng.Uint32()))
	case 1:
		s390xLghi(b, s390xR0, int16(b.rng.Uint32()))
	case 2:
		s390xAghi(b, s390xR1, int64(1+b.rng.IntN(1000)))
	default:
		b.insn([]byte{0x07, 0x07}, "nopr %%r7")
	}
}

// The instructions the s390x-only patterns add (s390x_frames.go, s390x_fpr.go). Each records
// what it does to the frame, as s390xAghi and s390xSave do.

// s390xDisp20 checks a long (20-bit signed) displacement and splits it into
// the DL and DH fields of an RXY or RSY instruction.
func s390xDisp20(d int64) (dl uint32, dh byte) {
	if d < -1<<19 || d >= 1<<19 {
		panic(fmt.Sprintf("gen: displacement %d does not fit 20 bits", d))
	}
	return uint32(d) & 0xfff, byte(d >> 12)
}

// s390xRXY emits an RXY instruction (e3 .. op) with no index register.
func s390xRXY(b *builder, op byte, text string, r1, base int, d int64) {
	dl, dh := s390xDisp20(d)
	b.insn([]byte{0xe3, byte(r1 << 4), byte(base<<4) | byte(dl>>8), byte(dl), dh, op}, "%s", text)
}

// s390xStg stores GPR r at d(base). Storing %r11 into its slot is the FP's
// save; other stores (the back chain, %r15 into its slot) change no rule.
func s390xStg(b *builder, r, base int, d int64) {
	s390xRXY(b, 0x24, fmt.Sprintf("stg %%r%d,%d(%%r%d)", r, d, base), r, base, d)
	if r == s390xR11 && base == s390xR15 && d == b.st.spOff-s390xSaveArea+s390xSlot(s390xR11) {
		b.saveFP(d)
	}
}

// s390xLg loads GPR r from d(base): %r11 gets the caller's FP back, %r15 its
// value at entry (the caller's SP, from its slot).
func s390xLg(b *builder, r, base int, d int64) {
	s390xRXY(b, 0x04, fmt.Sprintf("lg %%r%d,%d(%%r%d)", r, d, base), r, base, d)
	switch r {
	case s390xR11:
		b.restoreFP()
	case s390xR15:
		b.spReload()
	}
}

// s390xLay emits lay r1,d(base): SP moved (r1 = base = %r15), SP set from the
// FP (%r15 from %r11) or the FP set from SP (%r11 from %r15).
func s390xLay(b *builder, r1, base int, d int64) {
	s390xRXY(b, 0x71, fmt.Sprintf("lay %%r%d,%d(%%r%d)", r1, d, base), r1, base, d)
	s390xAddressOf(b, r1, base, d)
}

// s390xLa emits la r1,d(base), d a 12-bit unsigned displacement.
func s390xLa(b *builder, r1, base int, d int64) {
	if d < 0 || d > 0xfff {
		panic(fmt.Sprintf("gen: la displacement %d out of range", d))
	}
	b.insn([]byte{0x41, byte(r1 << 4), byte(base<<4) | byte(d>>8), byte(d)}, "la %%r%d,%d(%%r%d)", r1, d, base)
	s390xAddressOf(b, r1, base, d)
}

func s390xAddressOf(b *builder, r1, base int, d int64) {
	switch {
	case r1 == s390xR15 && base == s390xR15:
		b.sp(d)
	case r1 == s390xR15 && base == s390xR11:
		b.spFromFP(d)
	case r1 == s390xR11 && base == s390xR15:
		b.fpFromSP(d)
	default:
		panic(fmt.Sprintf("gen: no frame effect for %%r%d = %d(%%r%d)", r1, d, base))
	}
}

// s390xLgr emits lgr r1,r2. Only the moves the patterns make are allowed: the
// FP from SP, SP from the FP, or a copy of SP into a scratch register
// (%r1, or %r14 once the RA is saved: GCC's back chain).
func s390xLgr(b *builder, r1, r2 int) {
	b.insn([]byte{0xb9, 0x04, 0x00, byte(r1<<4 | r2)}, "lgr %%r%d,%%r%d", r1, r2)
	switch {
	case r1 == s390xR11 && r2 == s390xR15:
		b.fpFromSP(0)
	case r1 == s390xR15 && r2 == s390xR11:
		b.spFromFP(0)
	case r2 == s390xR15 && (r1 == s390xR1 || r1 == s390xR14):
		s390xClobbers(b, r1)
	default:
		panic(fmt.Sprintf("gen: no frame effect for lgr %%r%d,%%r%d", r1, r2))
	}
}

// s390xClobbers panics when register r still holds what a rule says the
// caller needs from it.
func s390xClobbers(b *builder, r int) {
	if r == s390xR14 && b.st.ra.Kind == sframe.RuleSame {
		panic(fmt.Sprintf("gen: %s: %%r14 overwritten while it holds the return address", b.name))
	}
	if r == s390xR11 && b.st.fp.Kind == sframe.RuleSame {
		panic(fmt.Sprintf("gen: %s: %%r11 overwritten while it holds the caller's FP", b.name))
	}
}

// s390xScratch writes a random value to GPR r, as code that needs one more
// register does; r must be saved.
func s390xScratch(b *builder, r int) {
	s390xClobbers(b, r)
	s390xLghi(b, r, int16(b.rng.Uint32()))
}

// s390xLdgr copies GPR r into FPR f (ldgr): the RA (%r14) or the caller's FP
// (%r11) is then in f, as GCC saves them in leaf functions; SP (%r15)
// saved there changes no rule.
func s390xLdgr(b *builder, f, r int) {
	b.insn([]byte{0xb3, 0xc1, 0x00, byte(f<<4 | r)}, "ldgr %%f%d,%%r%d", f, r)
	switch r {
	case s390xR14:
		b.raIn(s390xDwarfFPR(f))
	case s390xR11:
		b.fpIn(s390xDwarfFPR(f))
	}
}

// s390xLgdr copies FPR f back into GPR r (lgdr).
func s390xLgdr(b *builder, r, f int) {
	b.insn([]byte{0xb3, 0xcd, 0x00, byte(r<<4 | f)}, "lgdr %%r%d,%%f%d", r, f)
	switch r {
	case s390xR14:
		b.restoreRA()
	case s390xR11:
		b.restoreFP()
	case s390xR15:
		b.spReload()
	}
}

// s390xStd stores FPR f at d(base), d a 12-bit unsigned displacement: the
// back chain when the old SP was saved in f.
func s390xStd(b *builder, f, base int, d int64) {
	b.insn([]byte{0x60, byte(f << 4), byte(base<<4) | byte(d>>8), byte(d)}, "std %%f%d,%d(%%r%d)", f, d, base)
}

// s390xLogicalImm emits slgfi (grow) or algfi (shrink) of %r15 by n, the
// 32-bit unsigned immediates GCC uses past lay's range.
func s390xLogicalImm(b *builder, delta int64) {
	op, mnem, n := byte(0xa), "algfi", delta
	if delta < 0 {
		op, mnem, n = 0x4, "slgfi", -delta
	}
	b.insn(binary.BigEndian.AppendUint32([]byte{0xc2, s390xR15<<4 | op}, uint32(n)), "%s %%r15,%d", mnem, n)
	b.sp(delta)
}

// s390xAdjust moves SP by delta in one of the forms GCC uses: aghi where the
// immediate fits 16 bits, lay within 20 bits, slgfi/algfi beyond.
func s390xAdjust(b *builder, delta int64) {
	fits16 := delta >= -1<<15 && delta < 1<<15
	fits20 := delta >= -1<<19 && delta < 1<<19
	switch {
	case fits16 && b.rng.IntN(2) == 0:
		s390xAghi(b, s390xR15, delta)
	case fits16 || (fits20 && b.rng.IntN(4) != 0):
		s390xLay(b, s390xR15, s390xR15, delta)
	default:
		s390xLogicalImm(b, delta)
	}
}

// s390xStoreRange stores r1..r3 into their slots of the caller's register
// save area, addressed from %r15 (stg for one register, as GCC does).
func s390xStoreRange(b *builder, r1, r3 int) {
	d := b.st.spOff - s390xSaveArea + s390xSlot(r1)
	if r1 == r3 {
		s390xStg(b, r1, s390xR15, d)
		return
	}
	s390xMulti(b, false, r1, r3, s390xR15, d)
	if r1 <= s390xR11 && s390xR11 <= r3 {
		b.saveFP(d + s390xSlot(s390xR11) - s390xSlot(r1))
	}
	if r1 <= s390xR14 && s390xR14 <= r3 {
		b.saveRA(d + s390xSlot(s390xR14) - s390xSlot(r1))
	}
}

// s390xLoadRange reloads r1..r3 from their slots, addressed from base (%r15
// or %r11).
func s390xLoadRange(b *builder, r1, r3, base int) {
	var d int64
	switch base {
	case s390xR15:
		d = b.st.spOff - s390xSaveArea + s390xSlot(r1)
	case s390xR11:
		d = b.st.fpOff - s390xSaveArea + s390xSlot(r1)
	default:
		panic("gen: save area addressed from neither SP nor FP")
	}
	if r1 == r3 {
		s390xLg(b, r1, base, d)
		return
	}
	s390xMulti(b, true, r1, r3, base, d)
	if r3 == s390xR15 {
		b.spReload()
	}
	if r1 <= s390xR11 && s390xR11 <= r3 {
		b.restoreFP()
	}
	if r1 <= s390xR14 && s390xR14 <= r3 {
		b.restoreRA()
	}
}
