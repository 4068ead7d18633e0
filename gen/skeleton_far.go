package gen

// The far-code pattern: a function more than 4 GiB from the rest of the
// code, and so from the SFrame section a linker places after the text.
// SFrame version 3's 64-bit function start offsets reach it; version 2's
// 32-bit ones cannot. Layout puts it in a segment of its own at
// Base + FarOffset (the emulator maps a second code region there, and the
// assembly puts it in a section FarSection that a linker places with
// --section-start); every call into or out of it loads the callee's
// absolute address into a scratch register (x86-64 %r11, AArch64 x16,
// s390x %r1) and calls through it, as code built for a large code model
// does. It is never a tail-call target: a tail jump cannot reach it.

// FarOffset is how far above Base Layout places far functions: 5 GiB, so
// that they are more than 4 GiB from everything near Base in either
// direction.
const FarOffset = 5 << 30

// FarSection is the section the assembly puts far functions in: not
// .text.*, which GNU ld's default script merges into .text.
const FarSection = ".fartext"

var farCodeSkeleton = &pattern{
	name: "far-code",
	doc: "a frame-pointer function placed more than 4 GiB from the rest of the code and from .sframe, " +
		"called through a register; its calls go through a register too",
	calls:    true,
	far:      true,
	versions: []int{3},
	cannot:   "version 2 function starts are 32-bit offsets from the section (or the FDE); the function is more than 4 GiB away",
	build:    fpFrameSkeleton,
}
