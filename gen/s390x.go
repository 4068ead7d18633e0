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

		sigTrampoline: zSigTrampoline,
	}
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
