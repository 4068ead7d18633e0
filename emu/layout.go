package emu

// The memory map is the same for every target and every run. Nothing else
// is mapped, so a stray access anywhere else faults.
const (
	// CodeBase is the start of the code region: Run.Code goes somewhere
	// inside [CodeBase, CodeBase+CodeSize), and Run.Entry and Run.Exit
	// must lie in it too.
	CodeBase = 0x10000000
	CodeSize = 16 << 20

	// FarCodeBase starts a second code region 5 GiB above CodeBase, for
	// Run.Segments: code there is more than 4 GiB away from everything
	// in the first region and from an SFrame section placed after it, a
	// distance only 64-bit offsets (SFrame version 3) express.
	FarCodeBase = CodeBase + 5<<30
	FarCodeSize = 1 << 20

	// LowCodeBase starts a third region, for Run.Segments too: what a
	// linker lays out before the code when it links a shared object, its
	// .plt among it (a batch's first segment goes 2 MiB below its code),
	// within the reach of a call from the code region. The MiB between it
	// and CodeBase stays unmapped, so running off the start of the code
	// still faults.
	LowCodeBase = CodeBase - 2<<20
	LowCodeSize = 1 << 20

	// StackBase and StackTop bound the stack region [StackBase, StackTop).
	// The pages just below StackBase and at StackTop are unmapped, so
	// running off either end of the stack faults instead of silently
	// reading other data.
	StackBase = 0x70000000
	StackSize = 16 << 20
	StackTop  = StackBase + StackSize

	// InitialSP is the stack pointer every run starts with. The 4 KiB above
	// it belong to the caller of the entry function: the s390x ABI gives a
	// callee a 160-byte register save area above its SP, and an x86-64 or
	// AArch64 entry stub may keep arguments there.
	InitialSP = StackTop - 4096
)
