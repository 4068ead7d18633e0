package gen

import "encoding/binary"

// x86-64 primitives of the skeletons in skel_*.go beyond the basic frame
// set: PLT stubs, padding, large frames.

// x86StubSize is an x86-64 PLT-like stub's size: ld's PLT entries are 16
// bytes too.
const x86StubSize = 16

// x86PLTStub: push %r11; mov $index,%r11d; pop %r11; jmp fn (rel32
// always, so every stub has the same size); a nop to 16 bytes. Like a
// lazy-binding PLT entry's push of the relocation index, the push moves
// the CFA offset inside the stub; the jump leaves with SP where the call
// left it.
func x86PLTStub(b *builder, index int, fn string) {
	x86Push(b, xR11)
	x86MovImm(b, xR11, uint32(index))
	x86Pop(b, xR11)
	x86JmpLong(b, fn)
	b.padding([]byte{0x90}, x86StubSize-b.size(), "nop")
}

// x86JmpLong is a jmp that GNU as never relaxes to 8 bits: the {disp32}
// pseudo prefix asks for the 32-bit displacement.
func x86JmpLong(b *builder, target string) {
	b.jump(&branch{target: target, text: "{disp32} jmp " + target,
		size: func(bool) int { return 5 },
		enc:  func(pc, tgt uint64, _ bool) ([]byte, error) { return x86Rel32([]byte{0xe9}, pc, tgt) }})
}

// x86Pad fills n bytes with a movabs of a 64-bit immediate (10 bytes)
// repeated, then nops.
func x86Pad(b *builder, n int) {
	// Bit 62 set: too wide for a sign-extended imm32, so GNU as encodes
	// movabs too.
	imm := b.rng.Uint64()>>2 | 1<<62
	b.padding(binary.LittleEndian.AppendUint64([]byte{0x48, 0xb8}, imm), n/10, "mov $0x%x,%%rax", imm)
	b.padding([]byte{0x90}, n%10, "nop")
}

// x86AllocLarge grows the frame by min bytes or a little more, in 16-byte
// steps, with sub $imm32,%rsp.
func x86AllocLarge(b *builder, min int64) int64 {
	n := (min+15)&^15 + 16*int64(b.rng.IntN(8))
	x86AdjSP(b, -n)
	return -n
}
