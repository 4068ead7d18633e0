package gen

// s390xFPRSave is GCC's leaf idiom on z10 and later (s390_register_info_gprtofpr):
// a leaf that clobbers call-saved GPRs copies them into call-clobbered
// FPRs (f0-f7) with ldgr instead of storing them, and copies them back
// with lgdr. GCC 12 -O2 -fno-omit-frame-pointer, for a leaf that clobbers
// %r14 and has locals:
//
//	ldgr %f4,%r11   .cfi_register 11, 18
//	ldgr %f0,%r15   .cfi_register 15, 16
//	ldgr %f2,%r14   .cfi_register 14, 17
//	lay %r15,-224(%r15)
//	lgr %r11,%r15   .cfi_def_cfa_register 11
//	...
//	lgdr %r14,%f2   .cfi_restore 14
//	lgdr %r15,%f0   .cfi_def_cfa 15, 160
//	lgdr %r11,%f4   .cfi_restore 11
//	br %r14
//
// (with -mbackchain, std %f0,0(%r15) after the lay). The RA and the
// caller's FP are then in registers 16-23: SFrame version 2 writes odd
// data words (DWARF number << 1 | 1), version 3 a FLEX FDE with register
// rules. Those rules hold in the topmost frame only, so the function calls
// nothing. The FPRs are chosen at random among f0-f7, as GCC takes
// whichever are free, so the ABI's odd DWARF order (f0 16, f2 17, ...,
// f1 20, ...) is exercised.
func s390xFPRSave(b *builder, f *plan) {
	fprs := b.rng.Perm(8)
	useFP := b.rng.IntN(4) != 0
	saveFP := useFP || b.rng.IntN(2) == 0 // else %r11 is not touched
	frame := b.rng.IntN(2) == 0
	type save struct{ r, f int }
	saves := []save{{s390xR14, fprs[0]}}
	if saveFP {
		saves = append(saves, save{s390xR11, fprs[1]})
	}
	if frame {
		saves = append(saves, save{s390xR15, fprs[2]})
	}
	shuffle := func() { b.rng.Shuffle(len(saves), func(i, j int) { saves[i], saves[j] = saves[j], saves[i] }) }
	shuffle()
	for _, s := range saves {
		s390xLdgr(b, s.f, s.r)
	}
	if frame {
		s390xLay(b, s390xR15, s390xR15, -8*(1+int64(b.rng.IntN(64))))
		if b.rng.IntN(2) == 0 {
			s390xStd(b, fprs[2], s390xR15, 0) // the back chain
		}
	}
	switch {
	case useFP:
		s390xLgr(b, s390xR11, s390xR15)
	case saveFP:
		s390xScratch(b, s390xR11)
	}
	// What the copies are for: %r14 holds something else now.
	s390xScratch(b, s390xR14)
	b.body()
	shuffle()
	for _, s := range saves {
		s390xLgdr(b, s.r, s.f)
	}
	s390xRet(b)
}
