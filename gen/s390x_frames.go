package gen

// s390x's own patterns. The idioms are GCC 12's (Debian bookworm's
// gcc-s390x-linux-gnu): -mbackchain stores the caller's SP at 0(%r15)
// after allocating; -O2 allocates with lay; a leaf keeps its RA in %r14
// and, on z10 and later, saves the registers it clobbers in call-clobbered
// FPRs (ldgr/lgdr) instead of the stack; for z900 it saves %r15 in its
// slot, or only the range of registers up to %r11, FP saved but RA not.

func s390xOwn() []*pattern {
	return []*pattern{
		{name: "back-chain", doc: "GCC -mbackchain frame: the caller's SP stored at 0(%r15) after allocating, CFA on SP or FP", calls: true, build: s390xBackChain},
		{name: "lay", doc: "frame allocated and released with lay, sizes past aghi's 16-bit immediate, lmg with 20-bit displacements", calls: true, build: s390xLayFrame},
		{name: "cfa-edges", doc: "CFA offsets whose stored words (offset-160)/8 are 127, 128, -128, -129, 32767, 32768: the edges of 1-, 2- and 4-byte data words", calls: true, build: s390xCFAEdges},
		{name: "leaf-r14", doc: "leaf allocating a frame without saving %r14: the RA stays in the register, the CFA moves with SP", build: s390xLeafR14},
		{name: "fp-without-ra", doc: "leaf saving the FP (%r11) on the stack but not the RA, which stays in %r14: SFrame's RA padding word", build: s390xFPWithoutRA},
		{name: "fpr-save", doc: "GCC leaf saving %r14 and %r11 (and %r15) in FPRs with ldgr/lgdr: RA and FP rules naming registers 16-23", build: s390xFPRSave},
	}
}

// s390xLargeLevels bounds the stack the s390x patterns use whatever the call
// depth: frames of up to 96 KiB that call (lay) come only in the first
// four levels of the call graph, and the larger ones (cfa-edges' 256 KiB,
// leaf-r14's 96 KiB) only in functions that call nothing, of which one at
// a time is on the stack. With every other frame at most 1.2 KiB (a
// cfa-edges frame that calls) that is about 4*96 + 256 KiB + 1.2 KiB a
// level, inside the 2 MiB the emulator's stack region leaves a run's own stack (above gen.AltStackTop) up to hundreds
// of levels (TestS390XStackFits).
const s390xLargeLevels = 4

// s390xFirstSaved picks the first register of a stmg ...,%r15 prologue: the
// RA only, the FP and RA, or every callee-saved register.
func s390xFirstSaved(b *builder) int { return []int{s390xR14, s390xR11, 6}[b.rng.IntN(3)] }

// s390xBackChain: stmg; lgr %rS,%r15; allocate; stg %rS,0(%r15), with %rS
// %r14 (GCC 12, once the RA is saved) or %r1 (the Linux kernel's
// assembly); lgr %r11,%r15 for a frame pointer.
func s390xBackChain(b *builder, f *plan) {
	first := s390xFirstSaved(b)
	s390xStoreRange(b, first, s390xR15)
	scratch := s390xR14
	if b.rng.IntN(2) == 0 {
		scratch = s390xR1
	}
	s390xLgr(b, scratch, s390xR15)
	s390xAdjust(b, -(s390xSaveArea + 8*int64(b.rng.IntN(8))))
	s390xStg(b, scratch, s390xR15, 0)
	fp := first <= s390xR11 && b.rng.IntN(3) != 0
	if fp {
		s390xLgr(b, s390xR11, s390xR15)
	}
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	base := s390xR15
	if fp && b.rng.IntN(2) == 0 {
		base = s390xR11
	}
	s390xLoadRange(b, first, s390xR15, base)
	s390xRet(b)
}

// s390xLayFrame: stmg; lay %r15,-N(%r15) with N small or past 32767; more
// locals with lay; released by lay from SP or FP, or by the lmg itself
// with a displacement past 4095.
func s390xLayFrame(b *builder, f *plan) {
	first := s390xFirstSaved(b)
	s390xStoreRange(b, first, s390xR15)
	n := s390xSaveArea + 8*int64(b.rng.IntN(32))
	if f.level <= s390xLargeLevels && b.rng.IntN(2) == 0 {
		// 32768..98296: no aghi can allocate it.
		n = 1<<15 + 8*int64(b.rng.IntN(1<<13))
	}
	s390xLay(b, s390xR15, s390xR15, -n)
	fp := first <= s390xR11 && b.rng.IntN(2) == 0
	if fp {
		s390xLgr(b, s390xR11, s390xR15)
	}
	b.calls(posPrologue)
	b.t.filler(b)
	var m int64
	if b.rng.IntN(2) == 0 {
		m = 8 * (1 + int64(b.rng.IntN(16)))
		s390xLay(b, s390xR15, s390xR15, -m)
	}
	b.body()
	b.calls(posBody)
	switch {
	case fp && b.rng.IntN(3) == 0:
		// Through the FP: the locals need no release first.
		s390xLoadRange(b, first, s390xR15, s390xR11)
	case fp && b.rng.IntN(2) == 0:
		s390xLay(b, s390xR15, s390xR11, b.st.fpOff-s390xSaveArea) // SP back at its entry value
		s390xLoadRange(b, first, s390xR15, s390xR15)
	default:
		if m != 0 {
			s390xLay(b, s390xR15, s390xR15, m)
		}
		if b.rng.IntN(2) == 0 {
			s390xLay(b, s390xR15, s390xR15, b.st.spOff-s390xSaveArea)
		}
		s390xLoadRange(b, first, s390xR15, s390xR15)
	}
	s390xRet(b)
}

// s390xEdgeWords are the stored CFA words at the edges of SFrame's data word
// sizes: 127 is the last 1-byte word, 128 the first 2-byte one, -128 the
// last 1-byte negative (2 bytes in version 2, whose assemblers sized
// words symmetrically), -129 the first 2-byte negative, 32767 and 32768
// the last 2-byte and first 4-byte words. The last two mean frames of
// 256 KiB.
var s390xEdgeWords = []int64{127, 128, -128, -129, 32767, 32768}

// s390xCFAEdges allocates a frame whose CFA word is one of s390xEdgeWords.
// Positive words: SP moved to CFA-SP = 160+8w, the CFA on SP or on FP set
// from it. Negative words mean a CFA less than 160 bytes above its base
// register: SP can never be that base (SP at or above its entry value
// would free the caller's register save area), so the base is an FP set
// above the entry SP, as code addressing its stack arguments might keep
// it: la %r11,D(%r15).
//
// The 256 KiB frames only come in functions that call nothing, so at most
// one is on the stack at a time; the 2 MiB of a run's own stack hold it.
func s390xCFAEdges(b *builder, f *plan) {
	calls := len(f.calls) > 0 || f.tail != ""
	words := s390xEdgeWords
	if calls {
		words = words[:4]
	}
	w := words[b.rng.IntN(len(words))]
	off := s390xSaveArea + 8*w // the CFA offset w stands for
	var first int              // first register saved, 0 for none
	base := s390xR15
	if w < 0 {
		first = s390xR11
		s390xStoreRange(b, first, s390xR15)
		s390xAdjust(b, -s390xSaveArea)
		d := b.st.spOff - off // FP = SP + d, CFA = FP + off
		if b.rng.IntN(2) == 0 {
			s390xLa(b, s390xR11, s390xR15, d)
		} else {
			s390xLay(b, s390xR11, s390xR15, d)
		}
		if b.rng.IntN(2) == 0 {
			base = s390xR11
		}
	} else {
		fp := b.rng.IntN(2) == 0
		switch {
		case fp:
			first = s390xR11
		case calls || b.rng.IntN(2) == 0:
			first = s390xR14
		}
		if first != 0 {
			s390xStoreRange(b, first, s390xR15)
		}
		s390xAdjust(b, b.st.spOff-off)
		if fp {
			s390xLgr(b, s390xR11, s390xR15)
			if b.rng.IntN(2) == 0 {
				base = s390xR11
			}
		}
	}
	b.calls(posPrologue)
	b.body()
	b.calls(posBody)
	switch {
	case first == 0:
		s390xAdjust(b, b.st.spOff-s390xSaveArea)
	case base == s390xR11:
		s390xLoadRange(b, first, s390xR15, s390xR11)
	default:
		if b.rng.IntN(2) == 0 {
			s390xAdjust(b, b.st.spOff-s390xSaveArea)
		}
		s390xLoadRange(b, first, s390xR15, s390xR15)
	}
	s390xRet(b)
}

// s390xLeafR14: a leaf with locals and no register saved on the stack: GCC
// for z900 stores %r15 in its slot and reloads it; for z10 and later it
// keeps %r15 in an FPR; or SP is simply moved and moved back. With
// -mbackchain the old SP goes to 0(%r15). The RA never leaves %r14.
func s390xLeafR14(b *builder, f *plan) {
	n := 8 * (1 + int64(b.rng.IntN(256)))
	if b.rng.IntN(4) == 0 {
		n = 1<<15 + 8*int64(b.rng.IntN(1<<13))
	}
	chain := b.rng.IntN(2) == 0
	switch b.rng.IntN(3) {
	case 0:
		if chain {
			s390xLgr(b, s390xR1, s390xR15)
		}
		s390xStg(b, s390xR15, s390xR15, s390xSlot(s390xR15))
		s390xAdjust(b, -n)
		if chain {
			s390xStg(b, s390xR1, s390xR15, 0)
		}
		b.body()
		s390xLg(b, s390xR15, s390xR15, b.st.spOff-s390xSaveArea+s390xSlot(s390xR15))
	case 1:
		fr := b.rng.IntN(8)
		s390xLdgr(b, fr, s390xR15)
		s390xLay(b, s390xR15, s390xR15, -n)
		if chain {
			s390xStd(b, fr, s390xR15, 0)
		}
		b.body()
		s390xLgdr(b, s390xR15, fr)
	default:
		s390xAdjust(b, -n)
		b.body()
		s390xAdjust(b, n)
	}
	s390xRet(b)
}

// s390xFPWithoutRA: a leaf that saves %r11 on the stack, alone (stg) or with
// the registers below it (stmg %rN,%r11, GCC for z900), and uses it as
// the FP or as one more register; the RA stays in %r14. SFrame writes
// [CFA, 0, FP]: the 0 RA word is padding.
func s390xFPWithoutRA(b *builder, f *plan) {
	first := s390xR11
	if b.rng.IntN(2) == 0 {
		first = 6 + b.rng.IntN(5)
	}
	s390xStoreRange(b, first, s390xR11)
	fp := b.rng.IntN(4) != 0
	fpFirst := fp && b.rng.IntN(2) == 0 // FP at the entry SP, locals below it
	if fpFirst {
		s390xLgr(b, s390xR11, s390xR15)
	}
	var n int64
	if b.rng.IntN(3) != 0 {
		n = 8 * (1 + int64(b.rng.IntN(64)))
		s390xAdjust(b, -n)
	}
	switch {
	case fp && !fpFirst:
		s390xLgr(b, s390xR11, s390xR15)
	case !fp:
		s390xScratch(b, s390xR11)
	}
	if first < s390xR11 {
		s390xScratch(b, first)
	}
	b.body()
	switch {
	case fp && b.rng.IntN(2) == 0:
		s390xLoadRange(b, first, s390xR11, s390xR11)
		if n != 0 {
			s390xAdjust(b, n)
		}
	case fpFirst && n != 0 && b.rng.IntN(2) == 0:
		s390xLgr(b, s390xR15, s390xR11)
		s390xLoadRange(b, first, s390xR11, s390xR15)
	default:
		if n != 0 {
			s390xAdjust(b, n)
		}
		s390xLoadRange(b, first, s390xR11, s390xR15)
	}
	s390xRet(b)
}
