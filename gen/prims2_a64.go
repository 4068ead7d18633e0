package gen

import "fmt"

// AArch64 primitives of the far-code and new-stack patterns.

// a64FarCall: mov x16, #a[15:0]; movk x16 with bits 16-63; blr x16.
// Always four moves, so the size is known before the address is.
func a64FarCall(b *builder, fn string) {
	for hw := 0; hw < 4; hw++ {
		b.jump(&branch{target: fn, text: fmt.Sprintf("movk x16, #:abs_g%d:%s", hw, fn), size: func(bool) int { return 4 },
			enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
				imm := uint32(tgt>>(16*hw)) & 0xffff
				if hw == 0 {
					return a64Word(0xd2800000 | imm<<5 | aX16), nil
				}
				return a64Word(0xf2800000 | uint32(hw)<<21 | imm<<5 | aX16), nil
			},
			textAt: func(tgt uint64) string {
				imm := tgt >> (16 * hw) & 0xffff
				if hw == 0 {
					return fmt.Sprintf("mov x16, #0x%x", imm)
				}
				return fmt.Sprintf("movk x16, #0x%x, lsl #%d", imm, 16*hw)
			}})
	}
	a64(b, 0xd63f0200, "blr x16")
}

// a64NewStack: x16 = top; mov sp, x16; mov x29, #0.
func a64NewStack(b *builder, top uint64) {
	if top >= 1<<32 || top%16 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not a 16-aligned 32-bit address", top))
	}
	a64Movz(b, aX16, uint16(top))
	a64(b, 0xf2a00000|uint32(top>>16)<<5|aX16, "movk x16, #0x%x, lsl #16", top>>16)
	a64(b, 0x9100021f, "mov sp, x16")
	b.becomeOutermost(0)
	a64Movz(b, aFP, 0)
}
