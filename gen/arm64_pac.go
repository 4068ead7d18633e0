package gen

import "github.com/sfconform/sfconform/sframe"

// Pointer authentication (GCC -mbranch-protection=pac-ret, +b-key): the
// function signs x30 first thing (paciasp, pacibsp: SP is the modifier),
// saves and reloads the signed value with its frame, and authenticates it
// right before returning (autiasp, autibsp). From the signing to the
// authentication every row has MangledRA, wherever the RA is: in x30 (the
// topmost frame only) or on the stack (so deeper frames unwind through a
// signed RA too). The key is function-wide: b.key, which the FDE takes
// (.cfi_b_key_frame for key B). A function that calls nothing may sign
// without any stack frame, as -mbranch-protection=pac-ret+leaf does, and
// sometimes strips with xpaclri instead of authenticating.
var (
	arm64PACA = &pattern{name: "pac-a",
		doc:   "return address signed with key A (paciasp ... autiasp) around a frame, or in x30 alone in a leaf",
		calls: true, build: arm64PACPattern(sframe.PAuthKeyA)}
	arm64PACB = &pattern{name: "pac-b",
		doc:   "return address signed with key B (pacibsp ... autibsp, .cfi_b_key_frame) around a frame, or in x30 alone in a leaf",
		calls: true, build: arm64PACPattern(sframe.PAuthKeyB)}
)

func arm64PACPattern(key sframe.PAuthKey) func(b *builder, f *plan) {
	return func(b *builder, f *plan) {
		b.key = key
		if len(f.calls) == 0 && b.rng.IntN(2) == 0 {
			arm64PACLeaf(b)
			return
		}
		arm64Sign(b)
		p := &b.t.prims
		var teardown func()
		switch b.rng.IntN(3) {
		case 0:
			p.fpSetup(b)
			teardown = func() { p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b) }
		case 1:
			p.spSetup(b)
			teardown = func() { p.spTeardown(b, func() {}) }
		default:
			n := 16 * int64(1+b.rng.IntN(4))
			arm64StrLRPre(b, n)
			teardown = func() { arm64LdrLRPost(b, n) }
		}
		b.calls(posPrologue)
		b.body()
		b.calls(posBody)
		teardown()
		arm64Auth(b)
		arm64Ret(b)
	}
}

// arm64PACLeaf signs x30 and keeps it there: no frame, no calls; an early
// return behind a branch sometimes.
func arm64PACLeaf(b *builder) {
	arm64Sign(b)
	b.body()
	if b.rng.IntN(2) == 0 {
		l := b.newLabel()
		b.cond(l)
		signed := b.st
		b.t.filler(b)
		arm64Auth(b)
		arm64Ret(b)
		b.st = signed
		b.place(l)
	}
	if b.rng.IntN(4) == 0 {
		// Strip without authenticating: the RA is plain again.
		arm64Insn(b, 0xd50320ff, "xpaclri")
		b.signRA(false)
	} else {
		arm64Auth(b)
	}
	arm64Ret(b)
}

// arm64Sign emits paciasp or pacibsp, after which x30 is signed.
func arm64Sign(b *builder) {
	if b.key == sframe.PAuthKeyB {
		arm64Insn(b, 0xd503237f, "pacibsp")
	} else {
		arm64Insn(b, 0xd503233f, "paciasp")
	}
	b.signRA(true)
}

// arm64Auth emits autiasp or autibsp, after which x30 is plain again.
func arm64Auth(b *builder) {
	if b.key == sframe.PAuthKeyB {
		arm64Insn(b, 0xd50323ff, "autibsp")
	} else {
		arm64Insn(b, 0xd50323bf, "autiasp")
	}
	b.signRA(false)
}
