/* <sys/ucontext.h> for the copy of glibc's sframe.c built with AArch64's
   uw-sigframe.h (sysdeps/unix/sysv/linux/aarch64), which reads the
   kernel's signal frame through AArch64's mcontext_t and ucontext_t (and
   glibc's own kernel_rt_sigframe.h, which puts a siginfo_t before the
   ucontext_t).  This consumer is built by the host's x86-64 gcc, whose
   <sys/ucontext.h> describes x86-64's; this directory comes first on that
   copy's include path, so every <sys/ucontext.h> (the host <signal.h>'s
   too) becomes AArch64's: the header of Debian's libc6-dev-arm64-cross
   package (glibc's AArch64 headers as the cross toolchain's sysroot has
   them), included by the path ci/setup.sh passes as
   SFCONFORM_AARCH64_UCONTEXT_H.  No stand-in: the layout is that header's.
   The rest (siginfo_t, sigset_t, stack_t) is the host's, of the same size
   and layout on both 64-bit Linux targets.  Ours, for sfconform.  */
#ifndef SFCONFORM_AARCH64_UCONTEXT_H
#error "SFCONFORM_AARCH64_UCONTEXT_H names AArch64's sys/ucontext.h (libc6-dev-arm64-cross); ci/setup.sh passes it"
#endif
#include SFCONFORM_AARCH64_UCONTEXT_H
