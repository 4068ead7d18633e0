package gen

import "fmt"

// AArch64 primitives of the skeletons in skeleton_*.go beyond the basic frame
// set: PLT stubs, padding, far calls and the switch to a new stack.

// arm64PLTStub: stp x16, x30, [sp, #-16]!; mov x16, #index+1; ldp x16, x30,
// [sp], #16; b fn: 16 bytes, the size of ld's PLT entries. Like PLT0's
// stp x16, x30 it moves SP and saves the RA inside the stub; the jump
// leaves with both as the call left them.
func arm64PLTStub(b *builder, index int, fn string) {
	const x16 = 16
	arm64Pair(b, false, 1, x16, arm64LR, -16)
	b.sp(-16)
	b.saveRA(8)
	arm64Movz(b, x16, uint16(index+1))
	arm64Pair(b, true, 2, x16, arm64LR, 16)
	b.restoreRA()
	b.sp(16)
	arm64Branch26(b, 0x14000000, "b", fn)
}

// arm64Pad fills at least n bytes with nops.
func arm64Pad(b *builder, n int) {
	b.padding(arm64Word(0xd503201f), (n+3)/4, "nop")
}

// arm64FarCall: mov x16, #a[15:0]; movk x16 with bits 16-63; blr x16.
// Always four moves, so the size is known before the address is.
func arm64FarCall(b *builder, fn string) {
	for hw := 0; hw < 4; hw++ {
		b.jump(&branch{target: fn, text: fmt.Sprintf("movk x16, #:abs_g%d:%s", hw, fn), size: func(bool) int { return 4 },
			enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
				imm := uint32(tgt>>(16*hw)) & 0xffff
				if hw == 0 {
					return arm64Word(0xd2800000 | imm<<5 | arm64X16), nil
				}
				return arm64Word(0xf2800000 | uint32(hw)<<21 | imm<<5 | arm64X16), nil
			},
			textAt: func(tgt uint64) string {
				imm := tgt >> (16 * hw) & 0xffff
				if hw == 0 {
					return fmt.Sprintf("mov x16, #0x%x", imm)
				}
				return fmt.Sprintf("movk x16, #0x%x, lsl #%d", imm, 16*hw)
			}})
	}
	arm64Insn(b, 0xd63f0200, "blr x16")
}

// arm64NewStack: x16 = top; mov sp, x16; mov x29, #0.
func arm64NewStack(b *builder, top uint64) {
	if top >= 1<<32 || top%16 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not a 16-aligned 32-bit address", top))
	}
	arm64Movz(b, arm64X16, uint16(top))
	arm64Insn(b, 0xf2a00000|uint32(top>>16)<<5|arm64X16, "movk x16, #0x%x, lsl #16", top>>16)
	arm64Insn(b, 0x9100021f, "mov sp, x16")
	b.becomeOutermost(0)
	arm64Movz(b, arm64FP, 0)
}
