/* The consumer side of the sfconform unwind protocol, for consumers
   written in C (docs/consumer-protocol.md).

   A consumer fills a struct sfc_consumer with its name and three
   callbacks (supports, load, unwind) and calls sfc_serve from main:
   sfc_serve reads the requests on standard input, calls back, and writes
   the answers on standard output.  Everything about the unwinding itself
   is the consumer's; this file knows only the protocol's lines.

   It also reports fatal signals: a consumer that calls into a library
   which may crash on malformed input (libsframe's native-endian path,
   glibc's raw pointer reads) says with sfc_phase what it is doing, and a
   crash prints that and the signal on standard error before the process
   dies by the same signal.  The exec consumer attaches standard error to
   the ERROR verdicts of the batch.

   Written for sfconform; shared by consumer/libsframe and consumer/glibc.  */

#ifndef SFCONFORM_PROTOCOL_H
#define SFCONFORM_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

/* The targets, numbered as SFrame numbers their ABIs (sfh_abi_arch) and
   as sfconform's target package does.  */
enum sfc_target
{
  SFC_NO_TARGET = 0,
  SFC_AARCH64_BE = 1,
  SFC_AARCH64 = 2,
  SFC_X86_64 = 3,
  SFC_S390X = 4,
};

/* DWARF register numbers: a step names registers by these.  */
#define SFC_MAX_REG 48
#define SFC_X86_FP 6
#define SFC_X86_SP 7
#define SFC_A64_FP 29
#define SFC_A64_LR 30
#define SFC_A64_SP 31
#define SFC_S390X_FP 11
#define SFC_S390X_RA 14
#define SFC_S390X_SP 15

/* A backtrace has at most this many frames; a consumer that would go on
   stops with "failed".  */
#define SFC_MAX_FRAMES 64

/* One machine state to unwind from: the registers of the topmost frame and
   a copy of the live stack (whole, also when it came as differences; valid
   until the next step).  */
struct sfc_step
{
  long index;
  enum sfc_target target;
  uint64_t pc;
  uint64_t regs[SFC_MAX_REG];
  uint64_t valid;		/* bit n: regs[n] was sent */
  uint64_t stack_addr;
  const unsigned char *stack;
  size_t stack_len;
};

#define SFC_OUTERMOST 1
#define SFC_PARTIAL 2
#define SFC_SIGNAL 4		/* a signal trampoline's frame */

struct sfc_frame
{
  uint64_t pc, sp, fp, cfa;
  int flags;
};

enum sfc_end
{
  SFC_COMPLETE,			/* the last frame is the outermost one */
  SFC_NOINFO,			/* no unwind information for the last frame's PC */
  SFC_FAILED,			/* any other reason to stop */
};

struct sfc_result
{
  struct sfc_frame frames[SFC_MAX_FRAMES + 1];
  int n;
  enum sfc_end end;
  char msg[512];
};

/* One loaded object of a process image (protocol version 2): its name,
   the code range [START, END) it maps and its own section at ADDR.  */
#define SFC_MAX_MODULES 64
struct sfc_module
{
  char name[64];
  uint64_t start, end, addr;
  const unsigned char *section;
  size_t size;
};

/* One range of the image's code (protocol version 3): the instructions
   from ADDR on, as they lie in memory.  */
#define SFC_MAX_CODE 64
struct sfc_code
{
  uint64_t addr;
  const unsigned char *bytes;
  size_t size;
};

struct sfc_consumer
{
  const char *name;		/* said in the hello line */
  const char *version;		/* ditto, may be NULL */
  /* Returns NULL when the consumer reads SFrame version VERSION sections
     of TARGET, else the reason it does not (written into BUF or static).  */
  const char *(*supports) (enum sfc_target target, int version, char *buf,
			   size_t bufsize);
  /* Takes a section at ADDR; returns NULL or the reason it refuses it.
     The bytes stay valid until the next load.  */
  const char *(*load) (enum sfc_target target, uint64_t addr,
		       const unsigned char *section, size_t size, char *buf,
		       size_t bufsize);
  /* Unwinds one step into OUT (which arrives with n = 0).  */
  void (*unwind) (const struct sfc_step *step, struct sfc_result *out);
  /* Takes the N modules of a process image, sorted by START, ranges
     disjoint; returns NULL or the reason it refuses them.  The bytes stay
     valid until the next load.  A consumer that sets it speaks protocol
     version 4 (modules, the image's code: sfc_code, and stack copies sent
     as differences, which sfc_serve applies: the step's copy is whole);
     without it, version 1 (one section per image, no code).  */
  const char *(*load_modules) (enum sfc_target target,
			       const struct sfc_module *mods, int n,
			       char *buf, size_t bufsize);
};

/* Speaks the protocol on standard input and output until "quit" or the end
   of input; returns the process's exit status.  */
int sfc_serve (const struct sfc_consumer *c);

/* Target facts.  */
const char *sfc_target_name (enum sfc_target t);
int sfc_big_endian (enum sfc_target t);
int sfc_sp_reg (enum sfc_target t);
int sfc_fp_reg (enum sfc_target t);
/* The link register's DWARF number, or -1 (x86-64 pushes the RA).  */
int sfc_lr_reg (enum sfc_target t);

/* Register N of the topmost frame; 0 when the step did not send it.  */
int sfc_reg (const struct sfc_step *s, int n, uint64_t *value);

/* Reads the 8-byte word at ADDR from the step's stack copy, in the
   target's byte order; 0 when ADDR is outside the copy.  */
int sfc_read_word (const struct sfc_step *s, uint64_t addr, uint64_t *value);

/* The code of the image being loaded or last loaded (protocol version 3;
   none before): sets *RANGES to its ranges, sorted by address and
   disjoint, and returns how many.  Valid from the load callback on until
   the next load.  */
int sfc_code (const struct sfc_code **ranges);

/* Copies the N bytes at ADDR into BUF from the step's stack copy or the
   image's code; 0 (BUF unspecified) when any of them lies in neither.  */
int sfc_read_mem (const struct sfc_step *s, uint64_t addr, void *buf,
		  size_t n);

/* Ends OUT with END (SFC_NOINFO or SFC_FAILED) and a message; the last
   frame, which could not be unwound, becomes partial.  */
void sfc_stop (struct sfc_result *out, enum sfc_end end, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Says what the consumer is about to do, for the crash report: WHAT is a
   static string, VALUE an address or offset printed with it.  */
void sfc_phase (const char *what, uint64_t value);

/* Installs the crash reporter for SIGSEGV, SIGBUS, SIGILL, SIGFPE and
   SIGABRT (sfc_serve does it unless the consumer did; a consumer that then
   installs its own handler for one of them can call sfc_crash from it).  */
void sfc_report_crashes (void);
void sfc_crash (int sig, const void *fault_addr);

#endif
