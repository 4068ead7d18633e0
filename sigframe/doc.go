// Package sigframe holds what the Linux kernel writes on the user stack
// when it delivers a signal to a handler installed with SA_SIGINFO, on the
// three architectures sfconform emulates, and how the handler returns
// (rt_sigreturn). The emulator writes frames by these layouts and reads
// them back at rt_sigreturn; the oracle reads the interrupted registers
// out of them at the handler's entry. It is leaf vocabulary: it imports
// nothing of the project but package target.
//
// The sframe package keeps its own copy of the offsets it needs, so that
// the unwinder under test and the judge read the context independently.
//
// # Layouts
//
// Every offset is from the SP the handler is entered with ("the frame").
// The parts inside ucontext (uc_mcontext and its registers) are checked
// against the C library's <sys/ucontext.h> and the kernel's uapi headers
// of each target by TestLayoutAgainstCHeaders, which compiles a C file
// with each target's gcc and reads the offsetof values back. The rest is
// kernel-internal and follows these sources (Linux 6.12):
//
// x86-64, arch/x86/include/asm/sigframe.h, arch/x86/kernel/signal.c and
// signal_64.c: struct rt_sigframe { char __user *pretcode; struct ucontext
// uc; struct siginfo info; /* fp state follows here */ }. get_sigframe
// starts 128 bytes below the interrupted SP ("redzone": sp -= 128),
// fpu__alloc_mathframe places the FPU state at round_down(sp - size, 64),
// then "sp -= frame_size" and "sp = round_down(sp, FRAME_ALIGNMENT) - 8",
// so that (SP+8) % 16 == 0 at the handler as after a call.
// x64_setup_rt_frame stores sa_restorer in pretcode, the registers in
// uc.uc_mcontext, and sets di = sig, si = &frame->info, dx = &frame->uc,
// ax = 0, ip = sa_handler, sp = frame; handle_signal clears DF, RF and TF
// in the flags. The handler returns through pretcode, so rt_sigreturn
// finds the frame at "regs->sp - sizeof(long)" and restore_sigcontext
// takes back only the FIX_EFLAGS bits of the saved flags. The FPU state is
// modelled as on a CPU without XSAVE: a 512-byte fxsave image (uc_flags
// UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS, as frame_uc_flags gives
// without X86_FEATURE_XSAVE).
//
// AArch64, arch/arm64/kernel/signal.c: struct rt_sigframe { struct
// siginfo info; struct ucontext uc; }, and struct frame_record { u64 fp;
// u64 lr; } apart from it. get_sigframe: "sp = round_down(sp -
// sizeof(struct frame_record), 16); user->next_frame = sp; sp =
// round_down(sp, 16) - sigframe_size(user)", where sigframe_size rounds up
// max(user->size, sizeof(struct rt_sigframe)) to 16; with only the
// fpsimd_context record and the terminator in __reserved (no SVE, SME or
// fault information, an asynchronous signal) that is sizeof(struct
// rt_sigframe). setup_sigframe stores the interrupted x29 and x30 in the
// frame record; setup_return sets x0 = usig, sp = frame, x29 =
// &next_frame->fp, pc = sa_handler, x30 = the restorer; setup_rt_frame
// sets x1 = &frame->info and x2 = &frame->uc. rt_sigreturn finds the
// frame at regs->sp.
//
// s390x, arch/s390/kernel/signal.c: struct rt_sigframe { __u8
// callee_used_stack[__SIGNAL_FRAMESIZE]; __u16 svc_insn; struct siginfo
// info; struct ucontext_extended uc; }, __SIGNAL_FRAMESIZE being 160.
// setup_rt_frame sizes the frame with _sigregs_ext (cpu_has_vx(): every
// machine since z13, uc_flags UC_VXRS), get_sigframe returns "(sp -
// frame_size) & -8ul", the back chain (the old r15) goes to the frame's
// first word, and r14 = the restorer (sa_restorer, or the vDSO's
// __kernel_rt_sigreturn), r15 = frame, r2 = sig, r3 = &frame->info, r4 =
// &frame->uc, r5 = the last breaking-event address; the PSW address
// becomes sa_handler. save_sigregs writes the PSW mask as PSW_USER_BITS |
// (mask & (PSW_MASK_USER | PSW_MASK_RI)); restore_sigregs takes back only
// the PSW_MASK_USER bits. rt_sigreturn finds the frame at r15.
//
// # Not modelled
//
// Floating-point and vector state is laid out (the space is reserved and
// the record headers written) but its contents are not saved or restored,
// except the s390x FPRs, which generated code uses to hold a return
// address or frame pointer: the programs use no other floating-point or
// vector registers. Signal masks are empty, there is no alternate signal
// stack, and siginfo holds si_signo and si_code SI_USER only.
package sigframe
