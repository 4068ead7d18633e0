package gen

import (
	"encoding/binary"
	"fmt"
)

// x86-64 primitives of the skeletons in skeleton_*.go beyond the basic frame
// set: PLT stubs, padding, large frames, far calls and the switch to a new stack.

// amd64StubSize is an x86-64 PLT-like stub's size: ld's PLT entries are 16
// bytes too.
const amd64StubSize = 16

// amd64PLTStub: push %r11; mov $index,%r11d; pop %r11; a nop to 16
// bytes; jmp fn (rel32 always, so every stub has the same size). Like a
// lazy-binding PLT entry's push of the relocation index, the push moves
// the CFA offset inside the stub; the jump leaves with SP where the call
// left it. The nop comes before the jump, so that a stub entered runs at
// every instruction of its 16 bytes: a PCMASK lookup is met at each.
func amd64PLTStub(b *builder, index int, fn string) {
	amd64Push(b, amd64R11)
	amd64MovImm(b, amd64R11, uint32(index))
	amd64Pop(b, amd64R11)
	for range amd64StubSize - b.size() - amd64JmpLongSize {
		b.insn([]byte{0x90}, "nop")
	}
	amd64JmpLong(b, fn)
}

// amd64JmpLongSize is the size of amd64JmpLong's jmp rel32.
const amd64JmpLongSize = 5

// amd64JmpLong is a jmp that GNU as never relaxes to 8 bits: the {disp32}
// pseudo prefix asks for the 32-bit displacement.
func amd64JmpLong(b *builder, target string) {
	b.jump(&branch{target: target, text: "{disp32} jmp " + target,
		size: func(bool) int { return 5 },
		enc:  func(pc, tgt uint64, _ bool) ([]byte, error) { return amd64Rel32([]byte{0xe9}, pc, tgt) }})
}

// amd64Pad fills n bytes with a movabs of a 64-bit immediate (10 bytes)
// repeated, then nops.
func amd64Pad(b *builder, n int) {
	// Bit 62 set: too wide for a sign-extended imm32, so GNU as encodes
	// movabs too.
	imm := b.rng.Uint64()>>2 | 1<<62
	b.padding(binary.LittleEndian.AppendUint64([]byte{0x48, 0xb8}, imm), n/10, "mov $0x%x,%%rax", imm)
	b.padding([]byte{0x90}, n%10, "nop")
}

// amd64AllocLarge grows the frame by min bytes or a little more, in 16-byte
// steps, with sub $imm32,%rsp.
func amd64AllocLarge(b *builder, min int64) int64 {
	n := (min+15)&^15 + 16*int64(b.rng.IntN(8))
	amd64AdjSP(b, -n)
	return -n
}

// amd64FarCall: movabs $fn,%r11; call *%r11. %r11 is a scratch register
// no argument or callee-saved value lives in; movabs always takes the
// 10-byte form, whatever the address.
func amd64FarCall(b *builder, fn string) {
	b.jump(&branch{target: fn, text: "movabs $" + fn + ",%r11", size: func(bool) int { return 10 },
		enc: func(pc, tgt uint64, _ bool) ([]byte, error) {
			return binary.LittleEndian.AppendUint64([]byte{0x49, 0xbb}, tgt), nil
		},
		textAt: func(tgt uint64) string { return fmt.Sprintf("movabs $0x%x,%%r11", tgt) }})
	b.insn([]byte{0x41, 0xff, 0xd3}, "call *%%r11")
}

// amd64NewStack: mov $top,%esp (zero-extends into %rsp: the stacks lie
// below 4 GiB); xor %ebp,%ebp, the psABI's mark of the outermost frame.
// At a call SP must be 16-aligned, as top is: SP is CFA - 0 there.
func amd64NewStack(b *builder, top uint64) {
	if top >= 1<<32 || top%16 != 0 {
		panic(fmt.Sprintf("gen: new stack top 0x%x is not a 16-aligned 32-bit address", top))
	}
	b.insn(binary.LittleEndian.AppendUint32([]byte{0xbc}, uint32(top)), "mov $0x%x,%%esp", top)
	b.becomeOutermost(0)
	b.insn([]byte{0x31, 0xed}, "xor %%ebp,%%ebp")
}
