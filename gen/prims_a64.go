package gen

// AArch64 primitives of the skeletons in skel_*.go beyond the basic frame
// set: PLT stubs and padding.

// a64PLTStub: stp x16, x30, [sp, #-16]!; mov x16, #index+1; ldp x16, x30,
// [sp], #16; b fn: 16 bytes, the size of ld's PLT entries. Like PLT0's
// stp x16, x30 it moves SP and saves the RA inside the stub; the jump
// leaves with both as the call left them.
func a64PLTStub(b *builder, index int, fn string) {
	const x16 = 16
	a64Pair(b, false, 1, x16, aLR, -16)
	b.sp(-16)
	b.saveRA(8)
	a64Movz(b, x16, uint16(index+1))
	a64Pair(b, true, 2, x16, aLR, 16)
	b.restoreRA()
	b.sp(16)
	a64Branch26(b, 0x14000000, "b", fn)
}

// a64Pad fills at least n bytes with nops.
func a64Pad(b *builder, n int) {
	b.padding(a64Word(0xd503201f), (n+3)/4, "nop")
}
