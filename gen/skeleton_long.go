package gen

// long-function: a function past the sizes a one-byte FRE start offset
// covers. SFrame sizes an FDE's FRE start offsets by the function size:
// one byte below 256 bytes, two below 64 KiB, four above. The function
// jumps over a region of instructions that never execute, so its
// epilogue's rows start past offset 256 or, in one function in
// hugeOneIn, past 65536, and run. On targets with allocLarge (x86-64)
// half of them also allocate a frame of 128+ bytes, a quarter of those
// 32 KiB+: CFA offsets that need data words of two and four bytes.
func longFunctionSkeleton(b *builder, f *plan) {
	p := &b.t.prims
	p.spSetup(b)
	b.calls(posPrologue)
	var adj int64
	if p.allocLarge != nil && b.rng.IntN(2) == 0 {
		least := int64(128)
		if b.rng.IntN(4) == 0 {
			least = 32768
		}
		adj = p.allocLarge(b, least)
	} else {
		adj = p.alloc(b, 0)
	}
	b.body()
	over := b.newLabel()
	p.tailJump(b, over)
	end := 0x100 + b.rng.IntN(0x100)
	if b.rng.IntN(hugeOneIn) == 0 {
		end = 0x10000 + b.rng.IntN(0x100)
	}
	p.pad(b, end-b.size())
	b.place(over)
	b.calls(posBody)
	p.alloc(b, -adj)
	p.spTeardown(b, func() { b.calls(posEpilogue) })
	p.ret(b)
}

// hugeOneIn: one long function in this many is 64 KiB or more. Such a
// function is thousands of instructions the generator builds and the
// emulator maps for every program that has one.
const hugeOneIn = 8
