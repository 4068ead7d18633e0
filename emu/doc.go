// Package emu runs machine code for the four SFrame targets on the Unicorn
// CPU emulator (2.1.x, https://www.unicorn-engine.org) and reports every
// instruction before it executes, with the registers an unwinder starts
// from and read access to memory. It is the only package that uses
// Unicorn; the oracle reads the truth off what it reports.
//
// # Targets
//
//	x86-64      ARCH_X86   MODE_64
//	aarch64     ARCH_ARM64 MODE_ARM, CPU model MAX
//	aarch64_be  ARCH_ARM64 MODE_ARM|MODE_BIG_ENDIAN, CPU model MAX: data is
//	            big-endian, instructions are still fetched little-endian,
//	            so Run.Code holds little-endian instruction words
//	s390x       ARCH_S390X MODE_BIG_ENDIAN, PSW in 64-bit addressing mode
//
// # Memory map
//
// The same for every target and run; nothing else is mapped:
//
//	[CodeBase, CodeBase+CodeSize)  0x10000000, 16 MiB  code, read/write/execute
//	[FarCodeBase, +FarCodeSize)    0x150000000, 1 MiB  far code (Run.Segments),
//	                               5 GiB above CodeBase, read/write/execute
//	[LowCodeBase, +LowCodeSize)    0x0fe00000, 1 MiB   code and data a linker puts
//	                               before the code (a .plt; Run.Segments),
//	                               2 MiB below CodeBase, read/write/execute
//	[StackBase, StackTop)          0x70000000, 16 MiB  stack, read/write
//	InitialSP                      StackTop-4096       SP at entry to every run
//
// The pages around the stack are unmapped guards: overflowing or
// underflowing it faults. The 4 KiB above InitialSP belong to the entry
// code's caller (the s390x ABI gives a callee a 160-byte save area above
// its SP). The stack is host memory mapped into Unicorn (uc_mem_map_ptr),
// so Step.ReadWord is a slice read (2-3 ns) instead of a uc_mem_read
// (70-125 ns); Unicorn's stores land there before the next instruction's
// hook runs, so a read at a step sees memory exactly as that instruction
// will. Code region reads go through uc_mem_read.
//
// # Stepping
//
// A C code hook runs on every instruction: it enforces the budget, reads
// the SP, FP, link register (x30, r14) and any register asked for with
// Machine.Track in one uc_reg_read_batch, and calls into Go once to run
// the step callback. The PC is the hook's address argument (Unicorn 2.0's
// s390x reported the block start from a register read). Measured CPU time
// per instruction (cpu-ns/instr; x86-64, aarch64, aarch64_be, s390x; a
// two-instruction loop; `go test -bench . ./emu`):
//
//	BenchmarkBareHook           Go code hook via the binding, empty   64  70  62  78
//	BenchmarkAltGoHookRegBatch  that hook + RegBatch of SP/FP/RA     168 178 115 127
//	BenchmarkNoCallback         this package's C hook, no Go call     24  28  34  15
//	BenchmarkStep               C hook + Step to a Go callback        76  92  88  72
//	BenchmarkStepReadWords      ... + 4 ReadWord per step            125 144  98  81
//
// so delivering a Step costs about what an empty Go hook does, and leaves
// most of a microsecond per instruction to an unwinder at 1M instructions
// per second. Wall-clock figures on an idle machine were 105-135 ns for
// Step.
//
// # Reusing a Machine
//
// A Machine runs many programs. Each Execute writes Run.Code, resets every
// register (zero, then Run.Regs, SP = InitialSP, flags cleared) and zeroes
// the part of the stack the previous run used (from 4 KiB below the lowest
// SP it saw; the whole stack after a failed run). Zeroing 12 KiB costs
// 0.2-0.6 us; a whole MiB, 13-55 us (BenchmarkStackReset). So only the top
// 64 KiB are zeroed in place; the pages below are given back to the kernel
// (madvise MADV_DONTNEED), which costs what the run touched there: the
// generator's frames of megabytes made clearing 5% of the main job.
//
// Unicorn keeps translated code across runs and does not notice our writes:
// a program rewritten at an address already executed runs the old
// translation (TestNoStaleCode shows it). Two strategies were measured
// (BenchmarkReuse, a 5-instruction call with Step delivery; CPU time per
// run for x86-64, aarch64, aarch64_be, s390x):
//
//	invalidate: same address, uc_ctl_remove_cache of the written range  25  18  23  15 us
//	fresh: a new address each run, full flush when the region wraps     29  31  22  24 us
//	same: the same image again (bytes unchanged, nothing to write)       8  10   6   5 us
//	a full flush (uc_ctl_flush_tb, BenchmarkFlush, x86-64)              ~30-45 us
//	New (BenchmarkNew)                                                 237 691 760 344 us
//	the first run of a new instance (wall clock)                       ~550-1100 us
//
// Invalidating is as fast or faster on three targets and within noise on
// the fourth, and it lets images keep the addresses
// they were laid out for, so Execute writes code where Run.CodeAddr says
// and invalidates that range. When the bytes already in memory equal
// Run.Code, it writes nothing and keeps the translations: guest writes to
// code are caught by Unicorn itself, and ours are always invalidated.
// Unicorn compiles the stop at the exit address into the translated block,
// so when Run.Exit changes the blocks at the old and new exit are dropped
// too. The translation buffer is 8 MiB instead of Unicorn's 1 GiB: each run
// retranslates at least the block leading to the exit, and in a huge
// buffer every new block lands on untouched memory the kernel must zero.
//
// # CPU features
//
// AArch64 pointer authentication: New selects CPU model MAX before the
// first emulation, sets SCR_EL3.{NS,RW,APK,API} and HCR_EL2.{RW,APK,API}
// through the UC_ARM64_REG_CP_REG interface (a cgo helper: the Go
// binding's RegWrite cannot pass the register struct), gives instruction
// key B a value of its own (both keys start at zero, which would make
// pacibsp sign like paciasp), then emulates
// "mrs x0, sctlr_el1; orr x0, x0, #0xc0000000; msr sctlr_el1, x0; isb"
// once, since writing SCTLR_EL1 through the API does not take effect, and
// checks EnIA and EnIB are set. paciasp and pacibsp then sign x30 and
// autiasp and autibsp restore it, in both byte orders, for every later run.
//
// s390x floating point: New puts the PSW in 64-bit addressing mode (the CPU
// starts with a zero mask, in 24-bit mode, where data accesses to the stack
// raise a program interruption), then emulates
// "stctg %c0,%c0,0(%r15); oi 5(%r15),4; lctlg %c0,%c0,0(%r15)" once to set
// CR0's AFP-register control, without which ldgr/lgdr trap. The code
// region is mapped writable: read-only code makes this stub trap.
//
// Setup stubs run before the hooks are added, and their code and
// translations are removed afterwards.
//
// # Signals
//
// Run.Signal delivers one signal during a run, as the Linux kernel does
// (the layouts are package sigframe's): before the instruction at
// Signal.At executes for the Signal.Count-th time, the C hook stops the
// emulation instead of counting or reporting that instruction; Execute
// reads every register the kernel saves (the general registers, PC and
// flags; on s390x also the FPRs and access registers), writes the frame
// below the SP, sets the handler's registers and resumes at the handler.
// When a system call instruction then turns out to be rt_sigreturn (x86-64
// syscall with %rax 15, AArch64 svc #0 with x8 139, s390x svc 173), the
// registers are loaded back from the frame and emulation resumes at the
// interrupted instruction, which is then reported as a step like any
// other. Every other system call stays a fault, and so does rt_sigreturn
// in a run that delivered no signal. A run without a signal pays one test
// per instruction in the C hook. Floating-point and vector registers other
// than the s390x FPRs are neither saved nor restored: the generated
// programs do not use them.
//
// # Lenient runs
//
// Run.Lenient runs code that expects a process around it (package check
// runs functions of files it did not build): a call or jump that leaves
// the image returns at once with 0 in the return register, a system call
// is skipped with 0, and an unmapped read or write maps the pages it
// touches, filled with a pattern of the caller's choosing (Lenient),
// unmapped again when the run ends. Leaving the image is caught where it
// happens: the C code hook stops at the first instruction outside
// Lenient.Inside (mapped or not), the unmapped-fetch hook and the
// prefetch abort (AArch64) or program interruption (s390x) at an
// unmapped target stop too; the Go side then pops or takes the return
// address and resumes, as it does after a signal. An unmapped read or
// write stops the run too (EMU_STOP_MAP): the Go side maps the page and
// resumes at the same instruction, which the code hook lets pass once
// uncounted; mapping inside the hook made Unicorn 2.1 read a TLB it had
// just freed, a SIGSEGV in one run of three on a static zlib build.
// Mapping is bounded by Lenient.MaxPages. s390x raises a program interruption
// without the address for an unmapped data access, so a lenient s390x
// run maps its low 64 KiB (S390XWindow) up front instead. Machine.Served
// counts what a run was served. A run without Lenient pays one test per
// instruction in the C hook.
//
// # Errors
//
// A run ends early with a *RunError naming the target, the PC, the
// instruction's bytes and disassembly, and how many instructions completed:
//
//	x86-64: fault at pc 0x10000001 (mov %rax,0x1000; bytes 48 89 04 25 00 10 00 00) after 1 instructions: unmapped write at 0x1000 (8 bytes)
//
// Its Cause is errors.Is ErrFault (unmapped or protected read, write or
// fetch; an invalid instruction; an interrupt or exception such as int3,
// brk or an s390x program interruption; emulation stopping short of the
// exit), errors.Is ErrBudget (Run.Budget instructions without reaching the
// exit), errors.Is ErrExit (a lenient run's exit or exit_group system
// call), or the step callback's own error, unchanged inside. A panic in
// the callback is recovered (it must not unwind through Unicorn's C
// frames) and reported as an error. For a fetch fault the PC is the
// unreachable target and the count includes the jump. On s390x an access
// to unmapped data is a program interruption at the accessing instruction:
// Unicorn does not report the address. After any of these the Machine is
// ready for the next run.
//
// # Security
//
// Run.Code is executed only inside the emulator, in the memory map above;
// it cannot reach host memory other than the stack buffer. A Machine is not
// safe for concurrent use; separate Machines may run in parallel.
package emu
