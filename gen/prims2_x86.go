package gen

import (
	"encoding/binary"
	"fmt"
)

// x86-64 primitives of the far-code and new-stack patterns.

// x86FarCall: movabs $fn,%r11; call *%r11. %r11 is a scratch register
// no argument or callee-saved value lives in; movabs always takes the
// 10-byte form, whatever the address.
func x86FarCall(b *builder, fn string) {
	b.jump(&branch{target: fn, text: "movabs $" + fn + ",%r11", size: func(bool) int { return 10 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.LittleEndian.AppendUint64([]byte{0x49, 0xbb}, tgt), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("movabs $0x%x,%%r11", tgt) }})
	b.insn([]byte{0x41, 0xff, 0xd3}, "call *%%r11")
}

// x86NewStack: mov $top,%esp (zero-extends into %rsp: the stacks lie
// below 4 GiB); xor %ebp,%ebp, the psABI's mark of the outermost frame.
// At a call SP must be 16-aligned, as top is: SP is CFA - 0 there.
func x86NewStack(b *builder, top uint64) {
	if top >= 1<<32 || top%16 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not a 16-aligned 32-bit address", top))
	}
	b.insn(binary.LittleEndian.AppendUint32([]byte{0xbc}, uint32(top)), "mov $0x%x,%%esp", top)
	b.becomeOutermost(0)
	b.insn([]byte{0x31, 0xed}, "xor %%ebp,%%ebp")
}
