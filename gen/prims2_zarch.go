package gen

import (
	"encoding/binary"
	"fmt"
)

// s390x primitives of the far-code and new-stack patterns.

// zFarCall: llihf %r1,hi; iilf %r1,lo; basr %r14,%r1. %r1 is volatile
// and holds nothing across a call.
func zFarCall(b *builder, fn string) {
	b.jump(&branch{target: fn, text: "llihf %r1," + fn + "@hi", size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.BigEndian.AppendUint32([]byte{0xc0, zR1<<4 | 0xe}, uint32(tgt>>32)), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("llihf %%r1,%d", uint32(tgt>>32)) }})
	b.jump(&branch{target: fn, text: "iilf %r1," + fn + "@lo", size: func(bool) int { return 6 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.BigEndian.AppendUint32([]byte{0xc0, zR1<<4 | 9}, uint32(tgt)), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("iilf %%r1,%d", uint32(tgt)) }})
	b.insn([]byte{0x0d, zR14<<4 | zR1}, "basr %%r14,%%r1")
}

// zNewStack: lgfi %r15,top-160 (the register save area a callee may
// write lies at the top of the new stack); lghi %r11,0. The virtual CFA is
// SP + 320, so calls see the 160 bytes of save area they need.
func zNewStack(b *builder, top uint64) {
	sp := int64(top) - zSaveArea
	if top >= 1<<31 || sp%8 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not an 8-aligned 31-bit address", top))
	}
	b.insn(binary.BigEndian.AppendUint32([]byte{0xc0, zR15<<4 | 1}, uint32(sp)), "lgfi %%r15,%d", sp)
	b.becomeOutermost(2 * zSaveArea)
	zLghi(b, zR11, 0)
}
