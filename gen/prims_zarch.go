package gen

import "encoding/binary"

// s390x primitives of the skeletons in skel_*.go beyond the basic frame
// set: PLT stubs and padding.

// zStubSize is an s390x PLT-like stub's size: ld's PLT entries are 32
// bytes too.
const zStubSize = 32

// zPLTStub: stmg %r14,%r15,112(%r15); aghi %r15,-160; lghi %r1,index;
// lmg %r14,%r15,272(%r15); jg fn; nopr to 32 bytes. The RA is saved and
// the CFA moves to %r15+320 inside the stub; the lmg reloads both before
// the jump.
func zPLTStub(b *builder, index int, fn string) {
	zSave(b, zR14)
	zAghi(b, zR15, -zSaveArea)
	zLghi(b, zR1, int16(index))
	zRestore(b, zR14, zR15)
	zLong(b, 0xf4, "jg ", fn)
	b.padding([]byte{0x07, 0x07}, (zStubSize-b.size())/2, "nopr %%r7")
}

// zPad fills at least n bytes with an lgfi %r1 (6 bytes) repeated, then
// nopr.
func zPad(b *builder, n int) {
	imm := int32(b.rng.Uint32())
	b.padding(binary.BigEndian.AppendUint32([]byte{0xc0, zR1<<4 | 1}, uint32(imm)), n/6, "lgfi %%r1,%d", imm)
	b.padding([]byte{0x07, 0x07}, (n%6+1)/2, "nopr %%r7")
}
