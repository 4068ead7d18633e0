/* sfconform-libsframe: GNU libsframe as an sfconform consumer.

   It speaks the unwind protocol (docs/consumer-protocol.md) through
   ../cprotocol and is linked statically against libsframe.a from Debian
   sid's libsframe-dev; ci/setup.sh builds it (step 6).  sfconform runs it
   as the consumer "libsframe" (consumer/libsframe.go).

   What is libsframe's and what is ours:

   libsframe decides
     - whether it reads a section at all (sframe_decode; also the answer to
       "supports": a header-only section of that version and ABI is given
       to sframe_decode, which refuses SFrame version 1);
     - which FRE covers a PC (sframe_find_fre: the FDE search, the FRE
       ranges, PCMASK), given the PC relative to the section's address;
     - the FRE's values: the CFA base register (sframe_fre_get_base_reg_id),
       the CFA, RA and FP offsets of DEFAULT FDEs including the header's
       fixed offsets and the s390x CFA encoding, which it undoes
       (sframe_fre_get_cfa_offset / _ra_offset / _fp_offset), the v3
       flexible FDE's control words (sframe_get_fre_udata) and
       displacements (the same offset getters with SFRAME_FDE_TYPE_FLEX),
       whether the RA is undefined (sframe_fre_get_ra_undefined_p) and
       whether it is mangled (sframe_fre_get_ra_mangled_p).

   Ours (the stack walk, after the SFrame v3 specification's appendix
   "Generating Stack Traces using SFrame", with one change)
     - frame 0 is the step's PC, SP and FP; a caller frame's FRE is looked
       up at RA - 1 (the return address may lie past its function's end,
       after a call to a noreturn function; the appendix looks up at the
       RA itself, as glibc does: docs/findings/018);
     - an RA-undefined row ends the walk: that frame is the outermost one;
     - CFA = SP or FP + offset (flexible FDEs: any register, topmost frame
       only, or the value loaded from there); the caller's SP is the CFA,
       on s390x CFA - 160, and must lie above this frame's SP (the topmost
       frame may leave it equal: a leaf that allocated nothing), as the
       Linux user-space unwinder requires: a walk cannot loop or run
       downwards;
     - RA = *(CFA + offset); when the row has no RA offset (AArch64 before
       the frame record, s390x's RA padding) the RA is in the link
       register, known in the topmost frame only; s390x v2 offsets that
       encode a DWARF register number and flexible rules based on a
       register other than SP and FP are topmost-only likewise;
     - FP = *(CFA + offset), or unchanged when the row has none;
     - a mangled RA has its pointer authentication code stripped: bits
       48-63 cleared, as for user-space addresses;
     - which FDE covers the PC, for its type (DEFAULT or FLEX) and its
       signal flag: libsframe's public API does not say which FDE
       sframe_find_fre used, so we binary-search the FDE index read
       through sframe_decoder_get_funcdesc_v3 and
       sframe_decoder_get_offsetof_fde_start_addr (v3 only; v2 FDEs are
       all DEFAULT);
     - flexible FDEs: the RA control word at index 2, 0 or absent meaning
       "RA at its default place" (the header's fixed RA offset on x86-64,
       the link register elsewhere); the FP control word at index 4, or 3
       after RA padding, as libsframe's FP getter counts;
     - stops: no FRE from sframe_find_fre is "noinfo" (libsframe's error
       codes do not survive the call, so "no FDE" and "no FRE" are one);
       everything else (a value libsframe cannot give, a stack word outside
       the step's copy, a signal frame, too many frames) is "failed".

   libsframe's native-endian path trusts its input: a malformed section can
   make it read out of bounds or abort on an assertion.  The crash reporter
   in ../cprotocol prints the signal and what we were asking libsframe
   before the process dies; the exec consumer turns that into ERROR and
   starts us again.  */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe-api.h>

#include "../cprotocol/protocol.h"

#ifndef LIBSFRAME_VERSION
#define LIBSFRAME_VERSION "unknown"
#endif

/* The user-space PAC rule: a signed pointer keeps its address in bits
   0-47.  */
#define PAC_ADDRESS_MASK 0x0000ffffffffffffULL

struct fde_range
{
  int64_t start;		/* relative to the section */
  uint32_t size;
  unsigned char info, info2;
};

/* One module's section: the image's only one (covering every PC), or one
   of a process image's loaded objects (protocol version 2).  */
struct section
{
  sframe_decoder_ctx *dctx;
  enum sfc_target target;
  uint64_t addr;
  uint8_t version;
  struct fde_range *fdes;	/* v3 only, in index order */
  uint32_t nfdes;
  char *copy;			/* the bytes libsframe decoded */
  uint64_t start, end;		/* the module's code range [start, end) */
  char name[64];
};

/* The modules loaded, sorted by start, and the one the frame being
   unwound is looked up in: a process's unwinder finds the object holding
   a PC first (dl_iterate_phdr, _dl_find_object, the kernel's mapping)
   and gives libsframe that object's section.  */
static struct section mods[SFC_MAX_MODULES];
static int nmods;
static struct section *sec = &mods[0];

static const char *
errmsg (int err)
{
  const char *m = sframe_errmsg (err);
  return m ? m : "unknown error";
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
  h[3] = SFRAME_F_FDE_SORTED | (version >= 2 ? SFRAME_F_FDE_FUNC_START_PCREL : 0);
  h[4] = target;
  h[6] = target == SFC_X86_64 ? (unsigned char) -8 : 0;
}

static const char *
supports (enum sfc_target target, int version, char *buf, size_t n)
{
  unsigned char h[28];
  int err = 0;
  header_only (target, version, h);
  sframe_decoder_ctx *d = sframe_decode ((const char *) h, sizeof h, &err);
  if (!d)
    {
      snprintf (buf, n, "libsframe refuses SFrame version %d (sframe_decode: %s)",
		version, errmsg (err));
      return buf;
    }
  sframe_decoder_free (&d);
  return NULL;
}

static void
unload_one (struct section *sec)
{
  sframe_decoder_free (&sec->dctx);
  free (sec->fdes);
  free (sec->copy);
  memset (sec, 0, sizeof *sec);
}

static void
unload (void)
{
  for (int i = 0; i < nmods; i++)
    unload_one (&mods[i]);
  nmods = 0;
}

static const char *
load_one (struct section *sec, enum sfc_target target, uint64_t addr,
	  const unsigned char *bytes, size_t size, char *buf, size_t n)
{
  /* libsframe may keep pointers into what it decodes: give it bytes that
     live as long as the decoder.  */
  sec->copy = malloc (size ? size : 1);
  if (!sec->copy)
    return "out of memory";
  memcpy (sec->copy, bytes, size);
  int err = 0;
  sfc_phase ("sframe_decode of the section, size", size);
  sec->dctx = sframe_decode (sec->copy, size, &err);
  sfc_phase ("idle", 0);
  if (!sec->dctx)
    {
      snprintf (buf, n, "libsframe refuses the section: sframe_decode: %s",
		errmsg (err));
      unload_one (sec);
      return buf;
    }
  uint8_t abi = sframe_decoder_get_abi_arch (sec->dctx);
  if (abi != target)
    {
      snprintf (buf, n, "the section's ABI is %u, not %s's %d", abi,
		sfc_target_name (target), target);
      unload_one (sec);
      return buf;
    }
  sec->target = target;
  sec->addr = addr;
  sec->version = sframe_decoder_get_version (sec->dctx);
  if (sec->version == SFRAME_VERSION_3)
    {
      uint8_t flags = sframe_decoder_get_flags (sec->dctx);
      sec->nfdes = sframe_decoder_get_num_fidx (sec->dctx);
      sec->fdes = calloc (sec->nfdes ? sec->nfdes : 1, sizeof *sec->fdes);
      if (!sec->fdes)
	{
	  unload_one (sec);
	  return "out of memory";
	}
      for (uint32_t i = 0; i < sec->nfdes; i++)
	{
	  struct fde_range *f = &sec->fdes[i];
	  uint32_t nfres;
	  uint8_t rep;
	  int64_t start;
	  sfc_phase ("sframe_decoder_get_funcdesc_v3 of FDE", i);
	  if (sframe_decoder_get_funcdesc_v3 (sec->dctx, i, &nfres, &f->size,
					      &start, &f->info, &f->info2,
					      &rep) != 0)
	    {
	      snprintf (buf, n, "libsframe cannot read FDE %u of %u", i,
			sec->nfdes);
	      unload_one (sec);
	      return buf;
	    }
	  if (flags & SFRAME_F_FDE_FUNC_START_PCREL)
	    start += sframe_decoder_get_offsetof_fde_start_addr (sec->dctx, i,
								 &err);
	  f->start = start;
	}
      sfc_phase ("idle", 0);
    }
  return NULL;
}

static const char *
load (enum sfc_target target, uint64_t addr, const unsigned char *bytes,
      size_t size, char *buf, size_t n)
{
  unload ();
  nmods = 1;
  const char *no = load_one (&mods[0], target, addr, bytes, size, buf, n);
  if (no)
    nmods = 0;
  else
    mods[0].end = UINT64_MAX;	/* the one section describes every PC */
  return no;
}

static const char *
load_modules (enum sfc_target target, const struct sfc_module *m, int nm,
	      char *buf, size_t n)
{
  unload ();
  for (int i = 0; i < nm; i++)
    {
      char why[400];
      const char *no = load_one (&mods[i], target, m[i].addr, m[i].section,
				 m[i].size, why, sizeof why);
      if (no)
	{
	  nmods = i;
	  unload ();
	  snprintf (buf, n, "module %s: %s", m[i].name, no);
	  return buf;
	}
      mods[i].start = m[i].start;
      mods[i].end = m[i].end;
      snprintf (mods[i].name, sizeof mods[i].name, "%s", m[i].name);
      nmods = i + 1;
    }
  return NULL;
}

/* The module whose code range holds PC, or NULL.  */
static struct section *
module_at (uint64_t pc)
{
  int lo = 0, hi = nmods - 1;
  while (lo <= hi)
    {
      int mid = lo + (hi - lo) / 2;
      if (pc < mods[mid].start)
	hi = mid - 1;
      else if (pc >= mods[mid].end)
	lo = mid + 1;
      else
	return &mods[mid];
    }
  return NULL;
}

/* The FDE covering section offset REL, or NULL: a binary search over the
   FDE index, which sframe_find_fre required to be sorted.  */
static const struct fde_range *
fde_at (int64_t rel)
{
  int64_t lo = 0, hi = (int64_t) sec->nfdes - 1;
  while (lo <= hi)
    {
      int64_t mid = lo + (hi - lo) / 2;
      const struct fde_range *f = &sec->fdes[mid];
      if (f->start <= rel && (uint64_t) (rel - f->start) < f->size)
	return f;
      if (f->start < rel)
	lo = mid + 1;
      else
	hi = mid - 1;
    }
  return NULL;
}

/* One frame being unwound.  */
struct walk
{
  const struct sfc_step *step;
  struct sfc_result *out;
  struct sfc_frame *f;
  int topmost;
};

/* The value of DWARF register REG in the frame: SP and FP in every frame,
   any other register in the topmost one only.  */
static int
reg_value (struct walk *w, int reg, const char *what, uint64_t *v)
{
  enum sfc_target t = w->step->target;
  if (reg == sfc_sp_reg (t))
    {
      *v = w->f->sp;
      return 1;
    }
  if (reg == sfc_fp_reg (t))
    {
      *v = w->f->fp;
      return 1;
    }
  if (!w->topmost)
    {
      sfc_stop (w->out, SFC_FAILED,
		"%s rule based on register %d, known in the topmost frame only",
		what, reg);
      return 0;
    }
  if (!sfc_reg (w->step, reg, v))
    {
      sfc_stop (w->out, SFC_FAILED, "%s rule needs register %d, which the step does not carry",
		what, reg);
      return 0;
    }
  return 1;
}

static int
read_word (struct walk *w, uint64_t addr, const char *what, uint64_t *v)
{
  if (sfc_read_word (w->step, addr, v))
    return 1;
  sfc_stop (w->out, SFC_FAILED, "cannot read the %s at 0x%llx: outside the stack copy",
	    what, (unsigned long long) addr);
  return 0;
}

/* The return address in the link register: topmost frame only.  */
static int
ra_in_link_register (struct walk *w, uint64_t *ra)
{
  int lr = sfc_lr_reg (w->step->target);
  if (lr < 0)
    {
      sfc_stop (w->out, SFC_FAILED, "libsframe gives no RA offset and x86-64 has no link register");
      return 0;
    }
  if (!w->topmost)
    {
      sfc_stop (w->out, SFC_FAILED,
		"the return address is in the link register (DWARF %d), known in the topmost frame only",
		lr);
      return 0;
    }
  if (!sfc_reg (w->step, lr, ra))
    {
      sfc_stop (w->out, SFC_FAILED, "the step carries no link register (DWARF %d)", lr);
      return 0;
    }
  return 1;
}

/* An s390x v2 RA or FP offset may encode a DWARF register number: the
   value is in that register, topmost frame only.  */
static int
s390x_v2_register (struct walk *w, int32_t off)
{
  return w->step->target == SFC_S390X && sec->version == SFRAME_VERSION_2
    && SFRAME_V2_S390X_OFFSET_IS_REGNUM (off);
}

/* A flexible rule: base (register or CFA) + displacement, loaded when
   deref_p.  */
static int
apply_flex (struct walk *w, uint32_t ctl, int32_t disp, uint64_t cfa,
	    const char *what, uint64_t *v)
{
  uint64_t base = cfa;
  if (SFRAME_V3_FLEX_FDE_CTRLWORD_REG_P (ctl)
      && !reg_value (w, SFRAME_V3_FLEX_FDE_CTRLWORD_REGNUM (ctl), what, &base))
    return 0;
  uint64_t addr = base + (int64_t) disp;
  if (!SFRAME_V3_FLEX_FDE_CTRLWORD_DEREF_P (ctl))
    {
      *v = addr;
      return 1;
    }
  return read_word (w, addr, what, v);
}

/* Unwinds frame W->f by FRE; on success appends the caller.  */
static int
step_frame (struct walk *w, sframe_frame_row_entry *fre, int fde_type)
{
  struct sfc_frame *f = w->f;
  enum sfc_target t = w->step->target;
  int flex = fde_type == SFRAME_FDE_TYPE_FLEX;
  int err = 0;
  uint64_t cfa, ra, fp = f->fp;

  /* CFA.  */
  sfc_phase ("sframe_fre_get_cfa_offset at pc", f->pc);
  int32_t cfa_off = sframe_fre_get_cfa_offset (sec->dctx, fre, fde_type, &err);
  if (err)
    {
      sfc_stop (w->out, SFC_FAILED, "sframe_fre_get_cfa_offset: %s", errmsg (err));
      return 0;
    }
  if (!flex)
    {
      uint8_t base = sframe_fre_get_base_reg_id (fre, &err);
      cfa = (base == SFRAME_BASE_REG_FP ? f->fp : f->sp) + (int64_t) cfa_off;
    }
  else
    {
      uint32_t ctl = sframe_get_fre_udata (fre, 0, &err);
      if (err)
	{
	  sfc_stop (w->out, SFC_FAILED, "sframe_get_fre_udata (CFA control word): %s", errmsg (err));
	  return 0;
	}
      if (!SFRAME_V3_FLEX_FDE_CTRLWORD_REG_P (ctl))
	{
	  sfc_stop (w->out, SFC_FAILED, "flexible CFA rule without a base register (control word 0x%x)", ctl);
	  return 0;
	}
      if (!apply_flex (w, ctl, cfa_off, 0, "CFA", &cfa))
	return 0;
    }
  f->cfa = cfa;
  uint64_t caller_sp = cfa + (t == SFC_S390X ? SFRAME_S390X_SP_VAL_OFFSET : 0);
  if (caller_sp < f->sp || (caller_sp == f->sp && !w->topmost))
    {
      sfc_stop (w->out, SFC_FAILED, "the caller's SP 0x%llx (CFA 0x%llx) is not above this frame's SP 0x%llx",
		(unsigned long long) caller_sp, (unsigned long long) cfa, (unsigned long long) f->sp);
      return 0;
    }

  /* RA.  */
  sfc_phase ("sframe_fre_get_ra_offset at pc", f->pc);
  if (!flex)
    {
      int32_t ra_off = sframe_fre_get_ra_offset (sec->dctx, fre, fde_type, &err);
      if (err || (t == SFC_S390X && ra_off == SFRAME_FRE_RA_OFFSET_INVALID))
	{
	  if (!ra_in_link_register (w, &ra))
	    return 0;
	}
      else if (s390x_v2_register (w, ra_off))
	{
	  if (!reg_value (w, SFRAME_V2_S390X_OFFSET_DECODE_REGNUM (ra_off), "RA", &ra))
	    return 0;
	}
      else if (!read_word (w, cfa + (int64_t) ra_off, "return address", &ra))
	return 0;
    }
  else
    {
      int ctl_err = 0;
      uint32_t ctl = sframe_get_fre_udata (fre, 2, &ctl_err);
      if (ctl_err || ctl == SFRAME_FRE_RA_OFFSET_INVALID)
	{
	  int8_t fixed = sframe_decoder_get_fixed_ra_offset (sec->dctx);
	  if (fixed != SFRAME_CFA_FIXED_RA_INVALID)
	    {
	      if (!read_word (w, cfa + fixed, "return address", &ra))
		return 0;
	    }
	  else if (!ra_in_link_register (w, &ra))
	    return 0;
	}
      else
	{
	  int32_t disp = sframe_fre_get_ra_offset (sec->dctx, fre, fde_type, &err);
	  if (err)
	    {
	      sfc_stop (w->out, SFC_FAILED, "sframe_fre_get_ra_offset: %s", errmsg (err));
	      return 0;
	    }
	  if (!apply_flex (w, ctl, disp, cfa, "RA", &ra))
	    return 0;
	}
    }
  if (sframe_fre_get_ra_mangled_p (sec->dctx, fre, &err))
    ra &= PAC_ADDRESS_MASK;

  /* FP.  */
  sfc_phase ("sframe_fre_get_fp_offset at pc", f->pc);
  if (!flex)
    {
      int32_t fp_off = sframe_fre_get_fp_offset (sec->dctx, fre, fde_type, &err);
      if (err)
	;			/* not saved: the caller's FP is ours */
      else if (s390x_v2_register (w, fp_off))
	{
	  if (!reg_value (w, SFRAME_V2_S390X_OFFSET_DECODE_REGNUM (fp_off), "FP", &fp))
	    return 0;
	}
      else if (!read_word (w, cfa + (int64_t) fp_off, "saved frame pointer", &fp))
	return 0;
    }
  else
    {
      int ra_err = 0, ctl_err = 0;
      uint32_t ra_ctl = sframe_get_fre_udata (fre, 2, &ra_err);
      int idx = (!ra_err && ra_ctl != SFRAME_FRE_RA_OFFSET_INVALID) ? 4 : 3;
      uint32_t ctl = sframe_get_fre_udata (fre, idx, &ctl_err);
      if (!ctl_err && ctl != 0)
	{
	  int32_t disp = sframe_fre_get_fp_offset (sec->dctx, fre, fde_type, &err);
	  if (err)
	    {
	      sfc_stop (w->out, SFC_FAILED, "sframe_fre_get_fp_offset: %s", errmsg (err));
	      return 0;
	    }
	  if (!apply_flex (w, ctl, disp, cfa, "FP", &fp))
	    return 0;
	}
    }
  sfc_phase ("idle", 0);

  struct sfc_frame *next = &w->out->frames[w->out->n++];
  next->pc = ra;
  next->sp = caller_sp;
  next->fp = fp;
  next->cfa = 0;
  next->flags = 0;
  return 1;
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

  for (int k = 0;; k++)
    {
      struct walk w = {.step = st,.out = out,.f = &out->frames[k],.topmost = k == 0 };
      uint64_t lookup = w.f->pc - (w.topmost ? 0 : 1);
      sec = module_at (lookup);
      if (!sec)
	{
	  sfc_stop (out, SFC_NOINFO, "no module holds pc 0x%llx (looked up at 0x%llx)",
		    (unsigned long long) w.f->pc, (unsigned long long) lookup);
	  return;
	}
      int64_t rel = (int64_t) (lookup - sec->addr);
      sframe_frame_row_entry fre;
      sfc_phase ("sframe_find_fre at section offset", (uint64_t) rel);
      int rc = sframe_find_fre (sec->dctx, rel, &fre);
      sfc_phase ("idle", 0);
      if (rc != 0)
	{
	  sfc_stop (out, SFC_NOINFO, "libsframe finds no FDE/FRE for pc 0x%llx (looked up at 0x%llx, section offset %lld)",
		    (unsigned long long) w.f->pc, (unsigned long long) lookup, (long long) rel);
	  return;
	}
      int fde_type = SFRAME_FDE_TYPE_DEFAULT, signal_p = 0;
      if (sec->version == SFRAME_VERSION_3)
	{
	  const struct fde_range *fde = fde_at (rel);
	  if (!fde)
	    {
	      sfc_stop (out, SFC_FAILED, "libsframe found an FRE for section offset %lld, but no FDE of the index covers it",
			(long long) rel);
	      return;
	    }
	  fde_type = SFRAME_V3_FDE_TYPE (fde->info2);
	  signal_p = SFRAME_V3_FDE_SIGNAL_P (fde->info);
	}
      int err = 0;
      if (sframe_fre_get_ra_undefined_p (sec->dctx, &fre, &err))
	{
	  w.f->flags = SFC_OUTERMOST;
	  w.f->cfa = 0;
	  return;
	}
      if (signal_p)
	{
	  sfc_stop (out, SFC_FAILED, "pc 0x%llx is in a signal trampoline (FDE signal flag): the interrupted context is in a signal frame SFrame does not describe",
		    (unsigned long long) w.f->pc);
	  return;
	}
      if (fde_type != SFRAME_FDE_TYPE_DEFAULT && fde_type != SFRAME_FDE_TYPE_FLEX)
	{
	  sfc_stop (out, SFC_FAILED, "FDE type %d is neither DEFAULT nor FLEX", fde_type);
	  return;
	}
      if (!step_frame (&w, &fre, fde_type))
	return;
      if (out->n > SFC_MAX_FRAMES)
	{
	  out->n = SFC_MAX_FRAMES;
	  sfc_stop (out, SFC_FAILED, "more than %d frames", SFC_MAX_FRAMES);
	  return;
	}
    }
}

int
main (void)
{
  static const struct sfc_consumer c = {
    .name = "libsframe",
    .version = LIBSFRAME_VERSION,
    .supports = supports,
    .load = load,
    .unwind = unwind,
    .load_modules = load_modules,
  };
  return sfc_serve (&c);
}
