/* sfconform-glibc: the SFrame stack tracer of the GNU C library as an
   sfconform consumer.

   glibc 2.42 and later can take backtrace() from SFrame (configured with
   --enable-sframe; Debian builds without it): sysdeps/generic/sframe-read.c
   reads the section, sysdeps/generic/sframe.c walks the stack
   (__stacktrace_sframe) and the per-arch uw-sigframe.h recognises signal
   trampolines and the outermost frame.  ci/setup.sh (step 7) fetches
   Debian sid's glibc source package and compiles those files unmodified
   with the host gcc, with small headers of ours in ./shim (a
   force-included prelude, ldsodefs.h, dlfcn.h), and links them with this
   driver and ../cprotocol.  sframe.c is compiled twice: once with
   x86-64's uw-sigframe.h (__stacktrace_sframe, for x86-64 sections) and
   once with AArch64's (renamed __stacktrace_sframe_aarch64, for AArch64
   sections), the latter with __AARCH64EL__ defined (the code it checks is
   little-endian AArch64's) and AArch64's <sys/ucontext.h> from Debian's
   libc6-dev-arm64-cross (./shim/aarch64 says how).  sfconform runs it as
   the consumer "glibc" (consumer/glibc.go).

   What is glibc's and what is ours:

   glibc decides
     - whether it reads a section (__sframe_decode: SFrame version 2, in
       the host's byte order, so x86-64 and AArch64 little-endian only;
       "supports" gives it a header-only section of the version and ABI);
     - each step of the walk: __stacktrace_sframe, called for one frame at
       a time with the frame's PC, SP and FP; it finds the FRE for the PC
       itself (not PC-1), computes CFA, RA and FP, reads the stack through
       raw pointers, and returns the caller's PC (the return address, as
       read: no pointer authentication code is stripped), SP (= the CFA:
       SFRAME_SP_VAL_OFFSET is 0 on these targets) and FP.

   Ours
     - the memory glibc reads: the sections, the image's code (protocol
       version 3) and each step's stack copy are mapped at their emulated
       addresses in this process (mmap with MAP_FIXED_NOREPLACE; an
       address range the process already uses is refused with the mapping
       that holds it), the code read-only, so uw-sigframe.h's
       signal-frame check reads the real instructions at the PC; a read
       anywhere else faults and is reported as "failed", except a read of
       code the protocol did not carry (near the PC glibc checks): such
       pages are mapped zero-filled, where no trampoline is recognised;
     - the _dl_find_object stand-in: a PC belongs to the object (the
       image's one section, or one of a process image's modules, protocol
       version 2) whose code range holds it, and the stand-in returns that
       object's mapping and section address, as the dynamic linker's does;
       a PC in no object fails (-1), and glibc's walk stops there;
     - which uw-sigframe.h: the section's target's (x86-64's or
       AArch64's); glibc calls it for a frame whose PC has no FRE: it
       reads the code at the PC and, on a signal trampoline, takes the
       next frame's PC, SP and FP from the kernel's signal frame at the
       SP (AArch64's takes the FP from x30, its FP_REGNUM); otherwise an
       FP of 0 makes the frame outermost.  A step of the walk that returns
       1 for a frame without an FRE went through that check: the driver
       flags the frame "signal";
     - the mapping of glibc's answers to frames.  A step that returns 1
       gives the caller's frame and, as its SP, this frame's CFA.  A step
       that returns 0 means glibc stopped; in backtrace() that either ends
       the trace (the outermost frame: no FRE and FP = 0) or drops the
       WHOLE trace, falling back to the DWARF unwinder.  We ask glibc's
       own reader (__sframe_find_fre, the FRE's offset count) why:
         no FRE, FP = 0         the frame is outermost (glibc's rule);
         no FRE                 "noinfo" (glibc drops the trace);
         RA-undefined FRE       outermost, the SFrame v2 erratum 2
                                reading (glibc drops the trace: declared
                                in the consumer's documentation); with
                                --strict "noinfo" instead;
         any other FRE          "failed", naming the offset glibc lacks
                                (an RA in the link register, which its
                                walk never reads).
       glibc's walk has no bound and no CFA-above check: we stop after 64
       frames with "failed".  */

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dlfcn.h>
#include <sframe-read.h>
#include <sframe.h>

#include "../cprotocol/protocol.h"

/* glibc's sframe.c built with AArch64's uw-sigframe.h (ci/setup.sh).  */
int __stacktrace_sframe_aarch64 (void **ra_lst, int count, frame *frame);

#ifndef GLIBC_VERSION
#define GLIBC_VERSION "unknown"
#endif

static int strict;

/* --- memory at emulated addresses ---------------------------------------- */

static long page;

struct region
{
  uint64_t start, end;		/* page-aligned; end = start when unmapped */
};

static struct region stack_map;

/* The pages the sections and the code are mapped on: one region per run
   of pages they share or touch (a process image's modules may place their
   sections on one page, a section may follow code on its page).  */
static struct region section_maps[SFC_MAX_MODULES + SFC_MAX_CODE];
static int nsection_maps;

/* Zero-filled pages mapped for code reads, unmapped after each step.  */
static struct region code_pages[8];
static volatile int ncode_pages;

static uint64_t
page_down (uint64_t a)
{
  return a & ~(uint64_t) (page - 1);
}

static uint64_t
page_up (uint64_t a)
{
  return (a + page - 1) & ~(uint64_t) (page - 1);
}

static void
unmap (struct region *r)
{
  if (r->end > r->start)
    munmap ((void *) (uintptr_t) r->start, r->end - r->start);
  r->start = r->end = 0;
}

/* Who holds ADDR in this process, from /proc/self/maps.  */
static void
holder (uint64_t start, uint64_t end, char *buf, size_t n)
{
  snprintf (buf, n, "unknown");
  FILE *f = fopen ("/proc/self/maps", "r");
  if (!f)
    return;
  char line[512];
  while (fgets (line, sizeof line, f))
    {
      unsigned long long lo, hi;
      if (sscanf (line, "%llx-%llx", &lo, &hi) == 2 && lo < end && hi > start)
	{
	  line[strcspn (line, "\n")] = 0;
	  snprintf (buf, n, "%.200s", line);
	  break;
	}
    }
  fclose (f);
}

/* Maps [START, END) (page-aligned) read-write at its own address; 0 with a
   reason in BUF when the process already uses part of the range.  */
static int
map_at (struct region *r, uint64_t start, uint64_t end, char *buf, size_t n)
{
  void *p = mmap ((void *) (uintptr_t) start, end - start,
		  PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED || (uint64_t) (uintptr_t) p != start)
    {
      int e = errno;
      if (p != MAP_FAILED)
	munmap (p, end - start);
      char who[256];
      holder (start, end, who, sizeof who);
      snprintf (buf, n, "cannot map [0x%llx, 0x%llx) at its emulated address in the consumer process (%s; held by: %s)",
		(unsigned long long) start, (unsigned long long) end,
		strerror (e), who);
      return 0;
    }
  r->start = start;
  r->end = end;
  return 1;
}

/* --- faults inside glibc ------------------------------------------------- */

static sigjmp_buf in_glibc_jmp;
static volatile sig_atomic_t in_glibc;
static volatile uint64_t glibc_pc;	/* the PC of the frame glibc steps */
static volatile uint64_t fault_addr;

static void
on_fault (int sig, siginfo_t *info, void *uctx)
{
  (void) uctx;
  uint64_t a = (uint64_t) (uintptr_t) info->si_addr;
  if (!in_glibc)
    sfc_crash (sig, info->si_addr);
  /* The signal-frame check reads the instructions at the PC.  */
  if (sig == SIGSEGV && a - glibc_pc < 16 && ncode_pages < 8)
    {
      uint64_t p = page_down (a);
      void *m = mmap ((void *) (uintptr_t) p, page, PROT_READ,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (m != MAP_FAILED && (uint64_t) (uintptr_t) m == p)
	{
	  code_pages[ncode_pages].start = p;
	  code_pages[ncode_pages].end = p + page;
	  ncode_pages++;
	  return;		/* the read is tried again */
	}
      if (m != MAP_FAILED)
	munmap (m, page);
    }
  fault_addr = a;
  siglongjmp (in_glibc_jmp, sig);
}

static void
catch_faults (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGSEGV, &sa, NULL);
  sigaction (SIGBUS, &sa, NULL);
}

/* --- the section ---------------------------------------------------------- */

/* The loaded objects: the image's one section, covering every PC, or a
   process image's modules (protocol version 2), sorted by start.  */
struct object
{
  enum sfc_target target;
  uint64_t addr;
  size_t size;
  uint64_t start, end;		/* the object's code range [start, end) */
};

static struct object objects[SFC_MAX_MODULES];
static int nobjects;

/* The object whose code range holds PC, or NULL.  */
static const struct object *
object_at (uint64_t pc)
{
  for (int i = 0; i < nobjects; i++)
    if (pc >= objects[i].start && pc < objects[i].end)
      return &objects[i];
  return NULL;
}

/* The stand-in for the dynamic linker's _dl_find_object, which glibc's
   walk calls for every frame's PC: as the real one, it fails (-1) for a
   PC in no object, and otherwise describes the object holding the PC:
   its mapping and its own SFrame section.  */
int
sfconform_dl_find_object (void *address, struct dl_find_object *result)
{
  memset (result, 0, sizeof *result);
  const struct object *o = object_at ((uint64_t) (uintptr_t) address);
  if (!o)
    return -1;
  result->dlfo_flags = DLFO_FLAG_SFRAME;
  result->dlfo_map_start = (void *) (uintptr_t) o->start;
  result->dlfo_map_end = (void *) (uintptr_t) o->end;
  result->dlfo_sframe = (void *) (uintptr_t) o->addr;
  return 0;
}

static void
unload (void)
{
  for (int i = 0; i < nsection_maps; i++)
    unmap (&section_maps[i]);
  nsection_maps = 0;
  nobjects = 0;
  memset (objects, 0, sizeof objects);
}

/* A section of VERSION for TARGET holding only its header, in the
   target's byte order.  */
static void
header_only (enum sfc_target target, int version, unsigned char h[28])
{
  memset (h, 0, 28);
  int be = sfc_big_endian (target);
  h[be ? 0 : 1] = SFRAME_MAGIC >> 8;
  h[be ? 1 : 0] = SFRAME_MAGIC & 0xff;
  h[2] = version;
  h[3] = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
  h[4] = target;
  h[6] = target == SFC_X86_64 ? (unsigned char) -8 : 0;
}

static const char *
supports (enum sfc_target target, int version, char *buf, size_t n)
{
  unsigned char h[28];
  sframe_decoder_ctx d;
  header_only (target, version, h);
  memset (&d, 0, sizeof d);
  if (__sframe_decode (&d, (const char *) h) == _URC_NO_REASON)
    return NULL;
  if (sfc_big_endian (target))
    snprintf (buf, n, "glibc's SFrame reader takes sections in the host's byte order only, and this consumer runs on little-endian x86-64 (__sframe_decode refuses a %s section)",
	      sfc_target_name (target));
  else
    snprintf (buf, n, "glibc's SFrame reader takes SFrame version 2 only (__sframe_decode refuses version %d)",
	      version);
  return buf;
}

/* Maps the sections of MODS (N of them) at their addresses, read-only,
   and has glibc's reader decode each; NULL or the reason one is refused.  */
static const char *
load_objects (enum sfc_target target, const struct sfc_module *mods, int nm,
	      char *buf, size_t n)
{
  unload ();
  /* The page runs to map: sections in address order, runs merged where
     they share or touch a page.  */
  int order[SFC_MAX_MODULES];
  for (int i = 0; i < nm; i++)
    {
      if (mods[i].size == 0)
	{
	  snprintf (buf, n, "%s%san empty section", mods[i].name, mods[i].name[0] ? ": " : "");
	  return buf;
	}
      int j = i;
      while (j > 0 && mods[order[j - 1]].addr > mods[i].addr)
	{
	  order[j] = order[j - 1];
	  j--;
	}
      order[j] = i;
    }
  /* The image's code (protocol version 3), sorted by address, goes on
     the same pages: a section and code may share one.  */
  const struct sfc_code *code;
  int ncode = sfc_code (&code);
  struct region spans[SFC_MAX_MODULES + SFC_MAX_CODE];
  int nspans = 0;
  for (int k = 0, c = 0; k < nm || c < ncode;)
    {
      uint64_t a, len;
      if (c >= ncode || (k < nm && mods[order[k]].addr < code[c].addr))
	{
	  a = mods[order[k]].addr;
	  len = mods[order[k]].size;
	  k++;
	}
      else
	{
	  a = code[c].addr;
	  len = code[c].size;
	  c++;
	  if (len == 0)
	    continue;
	}
      spans[nspans++] = (struct region) {.start = page_down (a),.end = page_up (a + len) };
    }
  struct region runs[SFC_MAX_MODULES + SFC_MAX_CODE];
  int nruns = 0;
  for (int k = 0; k < nspans; k++)
    {
      uint64_t lo = spans[k].start, hi = spans[k].end;
      if (nruns > 0 && lo <= runs[nruns - 1].end)
	{
	  if (hi > runs[nruns - 1].end)
	    runs[nruns - 1].end = hi;
	}
      else
	runs[nruns++] = (struct region) {.start = lo,.end = hi };
    }
  for (int r = 0; r < nruns; r++)
    {
      if (!map_at (&section_maps[r], runs[r].start, runs[r].end, buf, n))
	{
	  unload ();
	  return buf;
	}
      nsection_maps = r + 1;
    }
  for (int i = 0; i < nm; i++)
    memcpy ((void *) (uintptr_t) mods[i].addr, mods[i].section, mods[i].size);
  for (int c = 0; c < ncode; c++)
    memcpy ((void *) (uintptr_t) code[c].addr, code[c].bytes, code[c].size);
  for (int r = 0; r < nruns; r++)
    mprotect ((void *) (uintptr_t) section_maps[r].start,
	      section_maps[r].end - section_maps[r].start, PROT_READ);
  for (int i = 0; i < nm; i++)
    {
      sframe_decoder_ctx d;
      memset (&d, 0, sizeof d);
      in_glibc = 1;
      int sig = sigsetjmp (in_glibc_jmp, 1);
      _Unwind_Reason_Code rc = sig ? _URC_END_OF_STACK
	: __sframe_decode (&d, (const char *) (uintptr_t) mods[i].addr);
      in_glibc = 0;
      const char *sep = mods[i].name[0] ? ": " : "";
      if (sig)
	{
	  snprintf (buf, n, "%s%sglibc's __sframe_decode faulted reading 0x%llx",
		    mods[i].name, sep, (unsigned long long) fault_addr);
	  unload ();
	  return buf;
	}
      if (rc != _URC_NO_REASON)
	{
	  snprintf (buf, n, "%s%sglibc's __sframe_decode refuses the section (it reads SFrame version 2 in the host's byte order)",
		    mods[i].name, sep);
	  unload ();
	  return buf;
	}
      objects[i] = (struct object) {.target = target,.addr = mods[i].addr,
	.size = mods[i].size,.start = mods[i].start,.end = mods[i].end };
    }
  nobjects = nm;
  return NULL;
}

static const char *
load (enum sfc_target target, uint64_t addr, const unsigned char *bytes,
      size_t size, char *buf, size_t n)
{
  /* The one section describes every PC: one object spanning them all.  */
  struct sfc_module m = {.name = "",.start = 0,.end = UINT64_MAX,
    .addr = addr,.section = bytes,.size = size };
  return load_objects (target, &m, 1, buf, n);
}

static const char *
load_modules (enum sfc_target target, const struct sfc_module *mods, int nm,
	      char *buf, size_t n)
{
  return load_objects (target, mods, nm, buf, n);
}

/* --- one step ------------------------------------------------------------- */

static int
map_stack (const struct sfc_step *st, char *buf, size_t n)
{
  uint64_t lo = page_down (st->stack_addr);
  uint64_t hi = page_up (st->stack_addr + st->stack_len);
  if (hi == lo)
    hi = lo + page;
  if (stack_map.start != lo || stack_map.end != hi)
    {
      unmap (&stack_map);
      if (!map_at (&stack_map, lo, hi, buf, n))
	return 0;
    }
  /* Only the copy is the stack: the rest of its pages reads as zeros.  */
  memset ((void *) (uintptr_t) lo, 0, st->stack_addr - lo);
  memcpy ((void *) (uintptr_t) st->stack_addr, st->stack, st->stack_len);
  uint64_t end = st->stack_addr + st->stack_len;
  memset ((void *) (uintptr_t) end, 0, hi - end);
  return 1;
}

static void
unmap_code_pages (void)
{
  for (int i = 0; i < ncode_pages; i++)
    unmap (&code_pages[i]);
  ncode_pages = 0;
}

/* Whether glibc's reader finds an FRE for PC in the section of the
   object holding it, as __stacktrace_sframe looks it up: a step that
   returned 1 for a PC without one went through uw-sigframe.h's
   signal-frame check.  */
static int
has_fre (uint64_t pc)
{
  const struct object *o = object_at (pc);
  if (!o)
    return 0;
  sframe_decoder_ctx d;
  sframe_frame_row_entry fre;
  memset (&d, 0, sizeof d);
  in_glibc = 1;
  glibc_pc = pc;
  int sig = sigsetjmp (in_glibc_jmp, 1);
  int found = 0;
  if (!sig && __sframe_decode (&d, (const char *) (uintptr_t) o->addr) == _URC_NO_REASON)
    found = __sframe_find_fre (&d, (int32_t) (pc - o->addr), &fre) == _URC_NO_REASON;
  in_glibc = 0;
  unmap_code_pages ();
  return found;
}

/* Why glibc stopped at frame F, in glibc's own terms: the FRE its reader
   finds for the PC.  */
static void
stopped (struct sfc_result *out, struct sfc_frame *f)
{
  sframe_decoder_ctx d;
  sframe_frame_row_entry fre;
  memset (&d, 0, sizeof d);
  const struct object *o = object_at (f->pc);
  if (!o)
    {
      sfc_stop (out, SFC_NOINFO, "no object holds pc 0x%llx: _dl_find_object fails, __stacktrace_sframe returns 0 and backtrace() drops the whole trace",
		(unsigned long long) f->pc);
      return;
    }
  int32_t rel = (int32_t) (f->pc - o->addr);	/* as __stacktrace_sframe passes it */
  in_glibc = 1;
  glibc_pc = f->pc;
  int sig = sigsetjmp (in_glibc_jmp, 1);
  int found = 0;
  if (!sig && __sframe_decode (&d, (const char *) (uintptr_t) o->addr) == _URC_NO_REASON)
    found = __sframe_find_fre (&d, rel, &fre) == _URC_NO_REASON;
  in_glibc = 0;
  if (sig)
    {
      sfc_stop (out, SFC_FAILED, "glibc faulted reading 0x%llx while looking up pc 0x%llx",
		(unsigned long long) fault_addr, (unsigned long long) f->pc);
      return;
    }
  if (!found)
    {
      if (f->fp == 0)
	{
	  /* uw-sigframe.h's outermost rule: glibc ends the trace here.  */
	  f->flags = SFC_OUTERMOST;
	  f->cfa = 0;
	  return;
	}
      sfc_stop (out, SFC_NOINFO, "glibc finds no FRE for pc 0x%llx (looked up at the pc itself); __stacktrace_sframe returns 0: backtrace() drops the whole trace and falls back to DWARF",
		(unsigned long long) f->pc);
      return;
    }
  if (SFRAME_V1_FRE_OFFSET_COUNT (fre.fre_info) == 0)
    {
      if (strict)
	{
	  sfc_stop (out, SFC_NOINFO, "the row for pc 0x%llx marks the RA undefined (outermost frame); glibc does not know the mark: __stacktrace_sframe returns 0 and backtrace() drops the whole trace",
		    (unsigned long long) f->pc);
	  return;
	}
      f->flags = SFC_OUTERMOST;
      f->cfa = 0;
      return;
    }
  _Unwind_Reason_Code err;
  const char *lacks = "usable offset";
  __sframe_fre_get_cfa_offset (&d, &fre, &err);
  if (err != _URC_NO_REASON)
    lacks = "CFA offset";
  else
    {
      __sframe_fre_get_ra_offset (&d, &fre, &err);
      if (err != _URC_NO_REASON)
	lacks = "RA offset (the return address is still in the link register, which glibc's walk never reads)";
    }
  sfc_stop (out, SFC_FAILED, "glibc cannot unwind pc 0x%llx: its row has no %s; __stacktrace_sframe returns 0 and backtrace() drops the whole trace",
	    (unsigned long long) f->pc, lacks);
}

static void
unwind (const struct sfc_step *st, struct sfc_result *out)
{
  enum sfc_target t = st->target;
  struct sfc_frame *f0 = &out->frames[0];
  memset (f0, 0, sizeof *f0);
  f0->pc = st->pc;
  out->n = 1;
  if (!sfc_reg (st, sfc_sp_reg (t), &f0->sp))
    {
      sfc_stop (out, SFC_FAILED, "the step carries no stack pointer");
      return;
    }
  sfc_reg (st, sfc_fp_reg (t), &f0->fp);
  char buf[512];
  if (!map_stack (st, buf, sizeof buf))
    {
      sfc_stop (out, SFC_FAILED, "%s", buf);
      return;
    }
  /* glibc's walk as built with the target's uw-sigframe.h.  */
  int (*walk) (void **, int, frame *) =
    t == SFC_AARCH64 ? __stacktrace_sframe_aarch64 : __stacktrace_sframe;
  for (int k = 0;; k++)
    {
      struct sfc_frame *f = &out->frames[k];
      frame fr = {.pc = f->pc,.sp = f->sp,.fp = f->fp };
      void *ra = NULL;
      glibc_pc = f->pc;
      sfc_phase ("__stacktrace_sframe at pc", f->pc);
      in_glibc = 1;
      int sig = sigsetjmp (in_glibc_jmp, 1);
      int r = sig ? -1 : walk (&ra, 1, &fr);
      in_glibc = 0;
      sfc_phase ("idle", 0);
      unmap_code_pages ();
      if (sig)
	{
	  sfc_stop (out, SFC_FAILED, "glibc read 0x%llx, outside the section and the stack copy (signal %d), unwinding pc 0x%llx",
		    (unsigned long long) fault_addr, sig, (unsigned long long) f->pc);
	  return;
	}
      if (r == 0)
	{
	  stopped (out, f);
	  unmap_code_pages ();
	  return;
	}
      if (r != 1)
	{
	  sfc_stop (out, SFC_FAILED, "__stacktrace_sframe returned %d for one frame", r);
	  return;
	}
      if ((uint64_t) (uintptr_t) ra != fr.pc)
	{
	  sfc_stop (out, SFC_FAILED, "__stacktrace_sframe returned the address 0x%llx but left the frame's pc at 0x%llx (a signal frame?)",
		    (unsigned long long) (uintptr_t) ra, (unsigned long long) fr.pc);
	  return;
	}
      f->cfa = fr.sp;
      if (!has_fre (f->pc))
	{
	  /* uw-sigframe.h recognised a signal trampoline at the PC: the next
	     frame is the interrupted context, and this frame's CFA is not
	     one glibc computes.  */
	  f->flags |= SFC_SIGNAL;
	  f->cfa = 0;
	}
      if (out->n >= SFC_MAX_FRAMES)
	{
	  sfc_stop (out, SFC_FAILED, "more than %d frames (glibc's walk has no bound of its own)", SFC_MAX_FRAMES);
	  return;
	}
      struct sfc_frame *next = &out->frames[out->n++];
      next->pc = fr.pc;
      next->sp = fr.sp;
      next->fp = fr.fp;
      next->cfa = 0;
      next->flags = 0;
    }
}

int
main (int argc, char **argv)
{
  page = sysconf (_SC_PAGESIZE);
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--strict") == 0)
	strict = 1;
      else
	{
	  fprintf (stderr, "usage: %s [--strict]\n", argv[0]);
	  return 2;
	}
    }
  static const struct sfc_consumer c = {
    .name = "glibc",
    .version = GLIBC_VERSION,
    .supports = supports,
    .load = load,
    .unwind = unwind,
    .load_modules = load_modules,
  };
  /* sfc_serve installs the crash reporter; faults inside glibc are ours to
     handle first.  */
  sfc_report_crashes ();
  catch_faults ();
  return sfc_serve (&c);
}
