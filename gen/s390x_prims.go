package gen

import (
	"encoding/binary"
	"fmt"
)

// s390x primitives of the skeletons in skeleton_*.go beyond the basic frame
// set: PLT stubs, padding, far calls and the switch to a new stack.

// s390xStubSize is an s390x PLT-like stub's size: ld's PLT entries are 32
// bytes too.
const s390xStubSize = 32

// s390xPLTStub: stmg %r14,%r15,112(%r15); aghi %r15,-160; lghi %r1,index;
// lmg %r14,%r15,272(%r15); nopr to 32 bytes; jg fn. The RA is saved and
// the CFA moves to %r15+320 inside the stub; the lmg reloads both before
// the jump. The nops come before the jump, so that a stub entered runs at
// every instruction of its 32 bytes: a PCMASK lookup is met at each.
func s390xPLTStub(b *builder, index int, fn string) {
	s390xSave(b, s390xR14)
	s390xAghi(b, s390xR15, -s390xSaveArea)
	s390xLghi(b, s390xR1, int16(index))
	s390xRestore(b, s390xR14, s390xR15)
	for range (s390xStubSize - b.size() - 6) / 2 { // jg is 6 bytes
		b.insn([]byte{0x07, 0x07}, "nopr %%r7")
	}
	s390xLong(b, 0xf4, "jg ", fn)
}

// s390xPad fills at least n bytes with an lgfi %r1 (6 bytes) repeated, then
// nopr.
func s390xPad(b *builder, n int) {
	imm := int32(b.rng.Uint32())
	b.padding(binary.BigEndian.AppendUint32([]byte{0xc0, s390xR1<<4 | 1}, uint32(imm)), n/6, "lgfi %%r1,%d", imm)
	b.padding([]byte{0x07, 0x07}, (n%6+1)/2, "nopr %%r7")
}

// s390xFarCall: llihf %r1,hi; iilf %r1,lo; basr %r14,%r1. %r1 is volatile
// and holds nothing across a call.
func s390xFarCall(b *builder, fn string) {
	b.jump(&branch{target: fn, text: "llihf %r1," + fn + "@hi", size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.BigEndian.AppendUint32([]byte{0xc0, s390xR1<<4 | 0xe}, uint32(tgt>>32)), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("llihf %%r1,%d", uint32(tgt>>32)) }})
	b.jump(&branch{target: fn, text: "iilf %r1," + fn + "@lo", size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.BigEndian.AppendUint32([]byte{0xc0, s390xR1<<4 | 9}, uint32(tgt)), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("iilf %%r1,%d", uint32(tgt)) }})
	b.insn([]byte{0x0d, s390xR14<<4 | s390xR1}, "basr %%r14,%%r1")
}

// s390xNewStack: lgfi %r15,top-160 (the register save area a callee may
// write lies at the top of the new stack); lghi %r11,0. The virtual CFA is
// SP + 320, so calls see the 160 bytes of save area they need.
func s390xNewStack(b *builder, top uint64) {
	sp := int64(top) - s390xSaveArea
	if top >= 1<<31 || sp%8 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not an 8-aligned 31-bit address", top))
	}
	b.insn(binary.BigEndian.AppendUint32([]byte{0xc0, s390xR15<<4 | 1}, uint32(sp)), "lgfi %%r15,%d", sp)
	b.becomeOutermost(2 * s390xSaveArea)
	s390xLghi(b, s390xR11, 0)
}
