package gen

import "fmt"

// AArch64's own frame layouts, beyond the skeletons' (fp-frame: the frame
// record pre-indexed at the bottom, x29 = sp, small frames; sp-frame: the
// record at the top, x29 not set up):
//
//	record-bottom  GCC's layout for larger locals: the frame record at
//	               sp+0, stored by a separate stp after sub sp, locals
//	               above it; CFA = x29 + frame size, with RA and FP words
//	               too wide for one byte
//	record-top     clang's layout: sub sp; stp x29, x30, [sp, #N-16];
//	               add x29, sp, #N-16: the record at the top, x29 pointing
//	               at it, CFA = x29 + 16
//	lr-only        only x30 saved (str x30, [sp, #-N]! or sub; str), FP
//	               untouched: rows with the RA saved and the FP "same"
//	big-frame      frames beyond one add/sub immediate (sub sp, sp, #k,
//	               lsl #12 / mov x16, #N; sub sp, sp, x16): CFA, RA and FP
//	               offsets that need 2- and 4-byte data words
var (
	arm64RecordBottom = &pattern{name: "record-bottom",
		doc:   "frame record at the bottom of a larger frame (GCC: sub sp; stp x29, x30, [sp]; mov x29, sp), locals above it",
		calls: true, build: arm64RecordBottomPattern}
	arm64RecordTop = &pattern{name: "record-top",
		doc:   "frame record at the top of the frame (clang: sub sp; stp x29, x30, [sp, #N-16]; add x29, sp, #N-16): CFA = x29+16",
		calls: true, build: arm64RecordTopPattern}
	arm64LROnly = &pattern{name: "lr-only",
		doc:   "only x30 saved (str x30, [sp, #-N]!), x29 untouched: RA saved, FP the caller's",
		calls: true, epilogueCalls: true, build: arm64LROnlyPattern}
	arm64BigFrame = &pattern{name: "big-frame",
		doc:   "frame larger than one immediate (sub sp, sp, #k, lsl #12 / mov x16, #N; sub sp, sp, x16): offsets > 4095 and > 32767",
		calls: true, build: arm64BigFramePattern}
)

// arm64RecordBottomPattern: GCC -O2 keeps the frame record at sp+0 and the
// locals above it. Up to 504 bytes the stp allocates (pre-index); beyond
// the stp's reach a sub allocates and a plain stp stores.
func arm64RecordBottomPattern(b *builder, f *plan) {
	var n int64
	pre := b.rng.IntN(2) == 0
	if pre {
		n = 16 * int64(4+b.rng.IntN(28)) // 64..496: fp-frame's are 16..48
		arm64SaveRecord(b, true, n)
	} else {
		n = 16 * int64(32+b.rng.IntN(224)) // 512..4080
		arm64AdjSP(b, -n)
		arm64SaveRecord(b, false, 0)
	}
	arm64SetFP(b)
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	if b.rng.IntN(3) == 0 {
		// GCC -O0 resets sp from x29 even when nothing moved it.
		arm64Insn(b, 0x910003bf, "mov sp, x29")
		b.spFromFP(0)
	}
	if pre && b.rng.IntN(2) == 0 {
		arm64LoadRecord(b, true, n)
	} else {
		arm64LoadRecord(b, false, 0)
		arm64AdjSP(b, n)
	}
	arm64Ret(b)
}

// arm64RecordTopPattern: the record at the top of an N-byte frame, x29 set
// to its address with add: the CFA is x29 + 16 whatever N is. Locals may
// grow below; the epilogue releases them with add or resets sp from x29.
func arm64RecordTopPattern(b *builder, f *plan) {
	n := 16 * int64(2+b.rng.IntN(31)) // 32..512: the stp reaches 496
	arm64AdjSP(b, -n)
	arm64SaveRecord(b, false, n-16)
	arm64FPAt(b, n-16)
	var extra int64
	if b.rng.IntN(2) == 0 {
		extra = b.t.prims.alloc(b, 0)
	}
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	if b.rng.IntN(2) == 0 {
		arm64SPFromFP(b, n-16)
	} else {
		arm64AdjSP(b, -extra)
	}
	arm64LoadRecord(b, false, n-16)
	arm64AdjSP(b, n)
	arm64Ret(b)
}

// arm64LROnlyPattern: GCC -fomit-frame-pointer saves x30 alone, pre-indexed
// for small frames (str x30, [sp, #-32]!) or at sp+0 after a sub. Locals
// may follow; calls are legal until x30 is reloaded.
func arm64LROnlyPattern(b *builder, f *plan) {
	var n int64
	pre := b.rng.IntN(2) == 0
	if pre {
		n = 16 * int64(1+b.rng.IntN(15)) // 16..240: ldr's post-index reach
		arm64StrLRPre(b, n)
	} else {
		n = 16 * int64(1+b.rng.IntN(60))
		arm64AdjSP(b, -n)
		arm64LdSt(b, false, arm64LR, arm64SP, 0)
		b.saveRA(0)
	}
	var extra int64
	if b.rng.IntN(3) == 0 {
		extra = b.t.prims.alloc(b, 0)
	}
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	arm64AdjSP(b, -extra)
	b.calls(posEpilogue)
	if pre && b.rng.IntN(3) != 0 {
		arm64LdrLRPost(b, n)
	} else {
		arm64LdSt(b, true, arm64LR, arm64SP, 0)
		b.restoreRA()
		arm64AdjSP(b, n)
	}
	arm64Ret(b)
}

// arm64BigFramePattern: GCC's frames beyond one 12-bit immediate. The size
// is either above 4095 (2-byte data words) or above 32767 (4-byte), kept
// under 37 KiB so that the deepest chains stay far inside the stack.
// Allocation is a pair of immediates (one shifted by 12) or a size loaded
// into x16; the frame record (or x30 alone) goes to sp+0.
func arm64BigFramePattern(b *builder, f *plan) {
	var n int64
	if b.rng.IntN(2) == 0 {
		n = 16 * int64(257+b.rng.IntN(1791)) // 4112..32752
	} else {
		n = 16 * int64(2048+b.rng.IntN(257)) // 32768..36864
	}
	arm64AdjSPBig(b, -n)
	record := b.rng.IntN(3) != 0
	if record {
		arm64SaveRecord(b, false, 0)
		arm64SetFP(b)
	} else {
		arm64LdSt(b, false, arm64LR, arm64SP, 0)
		b.saveRA(0)
	}
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	if record {
		if b.rng.IntN(2) == 0 {
			arm64Insn(b, 0x910003bf, "mov sp, x29")
			b.spFromFP(0)
		}
		arm64LoadRecord(b, false, 0)
	} else {
		arm64LdSt(b, true, arm64LR, arm64SP, 0)
		b.restoreRA()
	}
	arm64AdjSPBig(b, n)
	arm64Ret(b)
}

// arm64StrLRPre emits str x30, [sp, #-n]! (n <= 256).
func arm64StrLRPre(b *builder, n int64) {
	arm64Insn(b, 0xf8000c00|uint32(-n)&0x1ff<<12|arm64SP<<5|arm64LR, "str x30, [sp, #-%d]!", n)
	b.sp(-n)
	b.saveRA(0)
}

// arm64LdrLRPost emits ldr x30, [sp], #n (n <= 255).
func arm64LdrLRPost(b *builder, n int64) {
	arm64Insn(b, 0xf8400400|uint32(n)&0x1ff<<12|arm64SP<<5|arm64LR, "ldr x30, [sp], #%d", n)
	b.restoreRA()
	b.sp(n)
}

// arm64FPAt emits add x29, sp, #off: x29 points off bytes above sp.
func arm64FPAt(b *builder, off int64) {
	arm64Insn(b, 0x91000000|uint32(off)<<10|arm64SP<<5|arm64FP, "add x29, sp, #0x%x", off)
	b.fpFromSP(off)
}

// arm64SPFromFP emits sub sp, x29, #off: sp back off bytes below x29.
func arm64SPFromFP(b *builder, off int64) {
	arm64Insn(b, 0xd1000000|uint32(off)<<10|arm64FP<<5|arm64SP, "sub sp, x29, #0x%x", off)
	b.spFromFP(-off)
}

// arm64AdjSPBig moves sp by delta, any multiple of 16 below 16 MiB, in one
// of the forms compilers use when it does not fit 12 bits: a shifted
// immediate and a plain one (in either order), or the size in x16 and a
// register operand.
func arm64AdjSPBig(b *builder, delta int64) {
	n := delta
	opc, mnem := uint32(0x91000000), "add"
	if delta < 0 {
		n, opc, mnem = -delta, 0xd1000000, "sub"
	}
	if n <= 0xffff && b.rng.IntN(2) == 0 {
		arm64Movz(b, arm64X16, uint16(n))
		arm64Insn(b, opc&0x40000000|0x8b2063ff|arm64X16<<16, "%s sp, sp, x16", mnem)
		b.sp(delta)
		return
	}
	hi, lo := n>>12, n&0xfff
	if hi == 0 || hi > 0xfff {
		panic(fmt.Sprintf("gen: %s: sp adjustment %d is not a big one", b.name, delta))
	}
	shifted := func() {
		arm64Insn(b, opc|1<<22|uint32(hi)<<10|arm64SP<<5|arm64SP, "%s sp, sp, #0x%x, lsl #12", mnem, hi)
		if delta < 0 {
			b.sp(-hi << 12)
		} else {
			b.sp(hi << 12)
		}
	}
	plain := func() {
		if delta < 0 {
			arm64AdjSP(b, -lo)
		} else {
			arm64AdjSP(b, lo)
		}
	}
	if b.rng.IntN(2) == 0 {
		shifted()
		plain()
	} else {
		plain()
		shifted()
	}
}
