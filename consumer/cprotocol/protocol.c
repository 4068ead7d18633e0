/* The consumer side of the sfconform unwind protocol: see protocol.h and
   docs/consumer-protocol.md.  */

#define _GNU_SOURCE 1
#include "protocol.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROTOCOL_NAME "sfconform-unwind"
/* The highest version this file speaks: 3 (modules, code) for a consumer
   with load_modules, else 1.  */
#define PROTOCOL_VERSION 4
#define PROTOCOL_CODE 3
#define PROTOCOL_DIFF 4

static const char *program = "consumer";

/* --- targets ------------------------------------------------------------ */

static const char *const target_names[] = {
  [SFC_AARCH64_BE] = "aarch64_be",
  [SFC_AARCH64] = "aarch64",
  [SFC_X86_64] = "x86-64",
  [SFC_S390X] = "s390x",
};

const char *
sfc_target_name (enum sfc_target t)
{
  if (t >= SFC_AARCH64_BE && t <= SFC_S390X)
    return target_names[t];
  return "unknown";
}

static enum sfc_target
parse_target (const char *name)
{
  for (int t = SFC_AARCH64_BE; t <= SFC_S390X; t++)
    if (strcmp (name, target_names[t]) == 0)
      return t;
  return SFC_NO_TARGET;
}

int
sfc_big_endian (enum sfc_target t)
{
  return t == SFC_AARCH64_BE || t == SFC_S390X;
}

int
sfc_sp_reg (enum sfc_target t)
{
  switch (t)
    {
    case SFC_X86_64:
      return SFC_X86_SP;
    case SFC_S390X:
      return SFC_S390X_SP;
    default:
      return SFC_A64_SP;
    }
}

int
sfc_fp_reg (enum sfc_target t)
{
  switch (t)
    {
    case SFC_X86_64:
      return SFC_X86_FP;
    case SFC_S390X:
      return SFC_S390X_FP;
    default:
      return SFC_A64_FP;
    }
}

int
sfc_lr_reg (enum sfc_target t)
{
  switch (t)
    {
    case SFC_X86_64:
      return -1;
    case SFC_S390X:
      return SFC_S390X_RA;
    default:
      return SFC_A64_LR;
    }
}

int
sfc_reg (const struct sfc_step *s, int n, uint64_t *value)
{
  if (n < 0 || n >= SFC_MAX_REG || !(s->valid & (1ULL << n)))
    return 0;
  *value = s->regs[n];
  return 1;
}

int
sfc_read_word (const struct sfc_step *s, uint64_t addr, uint64_t *value)
{
  if (addr < s->stack_addr || s->stack_len < 8
      || addr - s->stack_addr > s->stack_len - 8)
    return 0;
  const unsigned char *p = s->stack + (addr - s->stack_addr);
  uint64_t v = 0;
  if (sfc_big_endian (s->target))
    for (int i = 0; i < 8; i++)
      v = (v << 8) | p[i];
  else
    for (int i = 7; i >= 0; i--)
      v = (v << 8) | p[i];
  *value = v;
  return 1;
}

void
sfc_stop (struct sfc_result *out, enum sfc_end end, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (out->msg, sizeof out->msg, fmt, ap);
  va_end (ap);
  out->end = end;
  if (out->n > 0)
    {
      out->frames[out->n - 1].flags = SFC_PARTIAL;
      out->frames[out->n - 1].cfa = 0;
    }
}

/* --- crash reports ------------------------------------------------------ */

static const char *volatile phase_what = "starting";
static volatile uint64_t phase_value;

void
sfc_phase (const char *what, uint64_t value)
{
  phase_what = what;
  phase_value = value;
}

/* Only async-signal-safe calls below: write, raise.  */

static size_t
append (char *buf, size_t at, size_t cap, const char *s)
{
  while (*s && at < cap)
    buf[at++] = *s++;
  return at;
}

static size_t
append_hex (char *buf, size_t at, size_t cap, uint64_t v)
{
  char tmp[19] = "0x";
  int n = 2;
  for (int shift = 60; shift >= 0; shift -= 4)
    {
      int d = (v >> shift) & 0xf;
      if (d || n > 2 || shift == 0)
	tmp[n++] = "0123456789abcdef"[d];
    }
  tmp[n] = 0;
  return append (buf, at, cap, tmp);
}

static size_t
append_dec (char *buf, size_t at, size_t cap, int v)
{
  char tmp[12];
  int n = sizeof tmp - 1;
  tmp[n] = 0;
  do
    {
      tmp[--n] = '0' + v % 10;
      v /= 10;
    }
  while (v && n > 0);
  return append (buf, at, cap, tmp + n);
}

void
sfc_crash (int sig, const void *fault_addr)
{
  char buf[512];
  size_t n = 0, cap = sizeof buf - 1;
  n = append (buf, n, cap, program);
  n = append (buf, n, cap, ": fatal signal ");
  n = append_dec (buf, n, cap, sig);
  n = append (buf, n, cap, " (");
  n = append (buf, n, cap, sigabbrev_np (sig) ? sigabbrev_np (sig) : "?");
  n = append (buf, n, cap, ")");
  if (sig == SIGSEGV || sig == SIGBUS)
    {
      n = append (buf, n, cap, " at address ");
      n = append_hex (buf, n, cap, (uint64_t) (uintptr_t) fault_addr);
    }
  n = append (buf, n, cap, " in ");
  n = append (buf, n, cap, phase_what);
  n = append (buf, n, cap, " ");
  n = append_hex (buf, n, cap, phase_value);
  n = append (buf, n, cap, "\n");
  ssize_t w = write (2, buf, n);
  (void) w;
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
on_fatal (int sig, siginfo_t *info, void *uctx)
{
  (void) uctx;
  sfc_crash (sig, info ? info->si_addr : NULL);
}

static int crash_reporting;

void
sfc_report_crashes (void)
{
  crash_reporting = 1;
  static char altstack[64 * 1024];
  stack_t ss = {.ss_sp = altstack,.ss_size = sizeof altstack };
  sigaltstack (&ss, NULL);
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset (&sa.sa_mask);
  int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
}

/* --- lines -------------------------------------------------------------- */

static int
hexval (int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes LEN hex digits at S into OUT (LEN / 2 bytes); returns 0, or
   -1 when LEN is odd or a digit is not hex.  */
static int
unhex_into (const char *s, size_t len, unsigned char *out)
{
  if (len % 2)
    return -1;
  /* A table, not hexval: the stack copy of every step comes through
     here, a few KiB of digits (7% of a libsframe run's CPU time with
     hexval).  */
  static signed char digit[256];
  if (!digit['1'])
    for (int c = 0; c < 256; c++)
      digit[c] = hexval (c);
  const unsigned char *u = (const unsigned char *) s;
  int bad = 0;
  for (size_t i = 0; i < len; i += 2)
    {
      int hi = digit[u[i]], lo = digit[u[i + 1]];
      bad |= hi | lo;
      out[i / 2] = hi << 4 | lo;
    }
  return bad < 0 ? -1 : 0;
}

/* Makes room for N bytes in *BUF of capacity *CAP; 0 or -1.  */
static int
grow (unsigned char **buf, size_t *cap, size_t n)
{
  if (n <= *cap)
    return 0;
  size_t want = n + 4096;
  unsigned char *p = realloc (*buf, want);
  if (!p)
    return -1;
  *buf = p;
  *cap = want;
  return 0;
}

/* Decodes LEN hex digits at S into *BUF (grown as needed); returns the
   byte count or -1.  */
static long
unhex (const char *s, size_t len, unsigned char **buf, size_t *cap)
{
  if (len % 2 || grow (buf, cap, len / 2) < 0
      || unhex_into (s, len, *buf) < 0)
    return -1;
  return len / 2;
}

static int
parse_u64 (const char *s, size_t len, uint64_t *v)
{
  if (len == 0 || len > 16)
    return 0;
  uint64_t x = 0;
  for (size_t i = 0; i < len; i++)
    {
      int d = hexval (s[i]);
      if (d < 0)
	return 0;
      x = x << 4 | d;
    }
  *v = x;
  return 1;
}

static __attribute__ ((noreturn, format (printf, 1, 2)))
void protocol_error (const char *fmt, ...)
{
  va_list ap;
  fprintf (stderr, "%s: protocol error: ", program);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (2);
}

/* Message text must stay on one line.  */
static void
put_message (const char *msg)
{
  for (const char *p = msg; *p; p++)
    putchar_unlocked (*p == '\n' || *p == '\r' ? ' ' : *p);
}

static char *line;
static size_t line_cap;

/* Reads one line without its newline; NULL at the end of input.  */
static char *
read_line (size_t *len)
{
  ssize_t n = getline (&line, &line_cap, stdin);
  if (n < 0)
    return NULL;
  if (n > 0 && line[n - 1] == '\n')
    line[--n] = 0;
  else
    protocol_error ("the last line has no newline");
  *len = n;
  return line;
}

static unsigned char *stack_buf, *section_buf;
static size_t stack_cap, section_cap;

/* Version 4: the stack copy the consumer holds, the last step's, is
   stack_buf[0, held_len) at held_addr; a stackdiff= is built from it in
   diff_buf, and the two buffers swap.  A load forgets it.  */
static int held_valid;
static uint64_t held_addr;
static size_t held_len;
static unsigned char *diff_buf;
static size_t diff_cap;

/* --- the image's code (version 3) ----------------------------------------- */

static struct sfc_code code[SFC_MAX_CODE];
static unsigned char *code_bufs[SFC_MAX_CODE];
static size_t code_caps[SFC_MAX_CODE];
static int ncode;

int
sfc_code (const struct sfc_code **ranges)
{
  *ranges = code;
  return ncode;
}

/* Reads "code N" and its N "text ADDR HEXBYTES" lines.  */
static void
read_code (void)
{
  size_t len;
  char *l = read_line (&len);
  int n;
  char extra;
  if (!l)
    protocol_error ("input ended before the \"code N\" line");
  if (sscanf (l, "code %d%c", &n, &extra) != 1 || n < 0 || n > SFC_MAX_CODE)
    protocol_error ("want \"code N\", N from 0 to %d, got \"%.60s\"",
		    SFC_MAX_CODE, l);
  ncode = 0;
  for (int i = 0; i < n; i++)
    {
      l = read_line (&len);
      if (!l)
	protocol_error ("input ended inside the code");
      char *sp = strncmp (l, "text ", 5) == 0 ? strchr (l + 5, ' ') : NULL;
      if (!sp)
	protocol_error ("want \"text ADDR HEXBYTES\", got \"%.60s\"", l);
      uint64_t addr;
      if (!parse_u64 (l + 5, sp - (l + 5), &addr))
	protocol_error ("text: bad address");
      long nb = unhex (sp + 1, len - (sp + 1 - l), &code_bufs[i], &code_caps[i]);
      if (nb < 0)
	protocol_error ("text %llx: code bytes are not hex",
			(unsigned long long) addr);
      /* Kept sorted by address.  */
      int j = i;
      while (j > 0 && code[j - 1].addr > addr)
	{
	  code[j] = code[j - 1];
	  j--;
	}
      code[j] = (struct sfc_code) {.addr = addr,.bytes = code_bufs[i],.size = nb };
      ncode = i + 1;
    }
  for (int i = 1; i < ncode; i++)
    if (code[i - 1].addr + code[i - 1].size > code[i].addr)
      protocol_error ("text %llx overlaps the range before it",
		      (unsigned long long) code[i].addr);
}

/* Copies [ADDR, ADDR + N) from one buffer at BASE of SIZE bytes, if it
   holds all of it.  */
static int
copy_from (uint64_t base, const unsigned char *bytes, size_t size,
	   uint64_t addr, void *buf, size_t n)
{
  if (addr < base || addr - base > size || n > size - (addr - base))
    return 0;
  memcpy (buf, bytes + (addr - base), n);
  return 1;
}

int
sfc_read_mem (const struct sfc_step *s, uint64_t addr, void *buf, size_t n)
{
  if (s && copy_from (s->stack_addr, s->stack, s->stack_len, addr, buf, n))
    return 1;
  for (int i = 0; i < ncode; i++)
    if (copy_from (code[i].addr, code[i].bytes, code[i].size, addr, buf, n))
      return 1;
  return 0;
}

/* The stackdiff= value V of VLEN bytes: "ADDR:LEN" then ":OFF:HEX" per
   patch, in increasing order, not overlapping, inside [0, LEN).  Each
   byte a patch covers comes from it, every other one from the copy
   held, which must hold it.  */
static void
parse_stackdiff (long index, char *v, size_t vlen, struct sfc_step *st)
{
  char *end = v + vlen, *q = v, *c;
  uint64_t addr, n;
  if (!held_valid)
    protocol_error ("step %ld: stackdiff= with no stack copy held", index);
  if (!(c = memchr (q, ':', end - q)) || !parse_u64 (q, c - q, &addr))
    protocol_error ("step %ld: stackdiff is not ADDR:LEN...", index);
  q = c + 1;
  c = memchr (q, ':', end - q);
  if (!parse_u64 (q, (c ? c : end) - q, &n) || n > (1u << 30)
      || grow (&diff_buf, &diff_cap, n) < 0)
    protocol_error ("step %ld: stackdiff: bad LEN", index);
  /* What the copy held provides; the rest, at most a gap below it and
     one above it (in offsets from ADDR), the patches must cover.  */
  uint64_t hend = held_addr + held_len, top = addr + n;
  uint64_t lo = addr > held_addr ? addr : held_addr;
  uint64_t hi = top < hend ? top : hend;
  if (lo < hi)
    memcpy (diff_buf + (lo - addr), stack_buf + (lo - held_addr), hi - lo);
  uint64_t need1 = 0, end1 = held_addr > addr ? (held_addr < top ? held_addr : top) - addr : 0;
  uint64_t need2 = hend > addr ? (hend < top ? hend - addr : n) : 0, end2 = n;
  uint64_t next = 0;
  while (c)
    {
      uint64_t off;
      q = c + 1;
      c = memchr (q, ':', end - q);
      if (!c || !parse_u64 (q, c - q, &off))
	protocol_error ("step %ld: stackdiff: patch is not OFF:HEX", index);
      q = c + 1;
      c = memchr (q, ':', end - q);
      size_t hlen = (c ? c : end) - q, nb = hlen / 2;
      if (hlen == 0 || off < next || off > n || nb > n - off)
	protocol_error ("step %ld: stackdiff: patch at %llx overlaps the one before or ends past LEN", index,
			(unsigned long long) off);
      if (unhex_into (q, hlen, diff_buf + off) < 0)
	protocol_error ("step %ld: stackdiff: patch bytes are not hex", index);
      if (need1 < end1)
	{
	  if (off > need1)
	    break;
	  if (off + nb > need1)
	    need1 = off + nb;
	}
      if (need2 < end2)
	{
	  if (off > need2)
	    break;
	  if (off + nb > need2)
	    need2 = off + nb;
	}
      next = off + nb;
    }
  if (need1 < end1 || need2 < end2)
    protocol_error ("step %ld: stackdiff: byte %llx is neither in the copy held nor in a patch", index,
		    (unsigned long long) (need1 < end1 ? need1 : need2));
  unsigned char *t = stack_buf;
  size_t tc = stack_cap;
  stack_buf = diff_buf;
  stack_cap = diff_cap;
  diff_buf = t;
  diff_cap = tc;
  st->stack_addr = addr;
  st->stack = stack_buf;
  st->stack_len = n;
}

static void
parse_step (char *s, size_t len, enum sfc_target target, int version,
	    struct sfc_step *st)
{
  memset (st, 0, sizeof *st);
  st->target = target;
  char *end = s + len, *p = s;
  if (strncmp (p, "step ", 5) != 0)
    protocol_error ("want \"step INDEX ...\", got \"%.60s\"", s);
  p += 5;
  st->index = strtol (p, &p, 10);
  int have_pc = 0, have_stack = 0;
  while (p < end)
    {
      if (*p == ' ')
	{
	  p++;
	  continue;
	}
      char *tok = p;
      p = memchr (p, ' ', end - p);
      if (!p)
	p = end;
      size_t toklen = p - tok;
      char *eq = memchr (tok, '=', toklen);
      if (!eq)
	protocol_error ("step %ld: \"%.40s\" is not NAME=VALUE", st->index, tok);
      size_t klen = eq - tok;
      char *v = eq + 1;
      size_t vlen = toklen - klen - 1;
      if (klen == 2 && memcmp (tok, "pc", 2) == 0)
	{
	  if (!parse_u64 (v, vlen, &st->pc))
	    protocol_error ("step %ld: bad pc", st->index);
	  have_pc = 1;
	}
      else if (klen == 5 && memcmp (tok, "stack", 5) == 0)
	{
	  char *colon = memchr (v, ':', vlen);
	  if (!colon || !parse_u64 (v, colon - v, &st->stack_addr))
	    protocol_error ("step %ld: stack is not ADDR:HEX", st->index);
	  long n = unhex (colon + 1, vlen - (colon + 1 - v), &stack_buf,
			  &stack_cap);
	  if (n < 0)
	    protocol_error ("step %ld: stack bytes are not hex", st->index);
	  st->stack = stack_buf;
	  st->stack_len = n;
	  have_stack = 1;
	}
      else if (version >= PROTOCOL_DIFF && klen == 9
	       && memcmp (tok, "stackdiff", 9) == 0)
	{
	  parse_stackdiff (st->index, v, vlen, st);
	  have_stack = 1;
	}
      else
	{
	  char *e;
	  long r = strtol (tok, &e, 10);
	  uint64_t x;
	  if (e != eq || r < 0 || r >= SFC_MAX_REG || !parse_u64 (v, vlen, &x))
	    protocol_error ("step %ld: register \"%.40s\"", st->index, tok);
	  st->regs[r] = x;
	  st->valid |= 1ULL << r;
	}
    }
  if (!have_pc || !have_stack)
    protocol_error ("step %ld: pc= and stack= are required", st->index);
  held_valid = 1;
  held_addr = st->stack_addr;
  held_len = st->stack_len;
}

/* Appends V in lowercase hex without leading zeros (0: "0").  */
static char *
put_hex (char *p, uint64_t v)
{
  char tmp[16];
  int n = 0;
  do
    {
      tmp[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    }
  while (v);
  while (n)
    *p++ = tmp[--n];
  return p;
}

static char *
put_str (char *p, const char *s)
{
  while (*s)
    *p++ = *s++;
  return p;
}

static void
write_result (const struct sfc_step *st, const struct sfc_result *r)
{
  printf ("result %ld %d", st->index, r->n);
  if (r->end == SFC_NOINFO)
    fputs (" noinfo ", stdout);
  else if (r->end == SFC_FAILED)
    fputs (" failed ", stdout);
  if (r->end != SFC_COMPLETE)
    put_message (r->msg[0] ? r->msg : "stopped");
  putchar ('\n');
  /* Frame lines built by hand: printf's formatting was the consumer
     process's largest cost after the stack copies.  */
  for (int i = 0; i < r->n; i++)
    {
      const struct sfc_frame *f = &r->frames[i];
      char buf[160], *p = buf;
      p = put_str (p, "frame pc=");
      p = put_hex (p, f->pc);
      p = put_str (p, " sp=");
      p = put_hex (p, f->sp);
      p = put_str (p, " fp=");
      p = put_hex (p, f->fp);
      p = put_str (p, " cfa=");
      p = put_hex (p, f->cfa);
      if (f->flags & SFC_OUTERMOST)
	p = put_str (p, " outermost");
      if (f->flags & SFC_PARTIAL)
	p = put_str (p, " partial");
      if (f->flags & SFC_SIGNAL)
	p = put_str (p, " signal");
      *p++ = '\n';
      fwrite_unlocked (buf, 1, p - buf, stdout);
    }
}

int
sfc_serve (const struct sfc_consumer *c)
{
  program = c->name;
  if (!crash_reporting)
    sfc_report_crashes ();
  size_t len;
  char *l = read_line (&len);
  if (!l)
    return 0;
  char proto[64];
  int version = 0;
  if (sscanf (l, "hello %63s %d", proto, &version) != 2
      || strcmp (proto, PROTOCOL_NAME) != 0)
    protocol_error ("want \"hello %s N\", got \"%.60s\"", PROTOCOL_NAME, l);
  int speaks = c->load_modules ? PROTOCOL_VERSION : 1;
  if (version < 1)
    {
      printf ("refused this consumer speaks %s %d\n", PROTOCOL_NAME, speaks);
      return 1;
    }
  /* The highest version both speak.  */
  if (version > speaks)
    version = speaks;
  printf ("hello %s %d %s%s%s\n", PROTOCOL_NAME, version, c->name,
	  c->version ? " " : "", c->version ? c->version : "");
  fflush (stdout);

  enum sfc_target target = SFC_NO_TARGET;
  int loaded = 0;
  static struct sfc_result result;
  static struct sfc_step step;
  char reason[512];
  while ((l = read_line (&len)) != NULL)
    {
      if (strcmp (l, "quit") == 0)
	return 0;
      else if (strncmp (l, "supports ", 9) == 0)
	{
	  char tname[32];
	  int v;
	  if (sscanf (l + 9, "%31s %d", tname, &v) != 2)
	    protocol_error ("want \"supports TARGET VERSION\"");
	  enum sfc_target t = parse_target (tname);
	  const char *no = NULL;
	  if (t == SFC_NO_TARGET)
	    {
	      snprintf (reason, sizeof reason, "unknown target %s", tname);
	      no = reason;
	    }
	  else
	    no = c->supports (t, v, reason, sizeof reason);
	  if (no)
	    {
	      fputs ("no ", stdout);
	      put_message (no);
	      putchar ('\n');
	    }
	  else
	    puts ("yes");
	}
      else if (strncmp (l, "load ", 5) == 0)
	{
	  char *p = l + 5, *sp1 = strchr (p, ' ');
	  char *sp2 = sp1 ? strchr (sp1 + 1, ' ') : NULL;
	  uint64_t addr;
	  if (!sp2)
	    protocol_error ("want \"load TARGET ADDR HEXBYTES\"");
	  *sp1 = 0;
	  char tname[32];
	  snprintf (tname, sizeof tname, "%s", p);	/* read_code reuses the line */
	  target = parse_target (p);
	  if (!parse_u64 (sp1 + 1, sp2 - sp1 - 1, &addr))
	    protocol_error ("load: bad address");
	  long n = unhex (sp2 + 1, len - (sp2 + 1 - l), &section_buf,
			  &section_cap);
	  if (n < 0)
	    protocol_error ("load: section bytes are not hex");
	  ncode = 0;
	  held_valid = 0;
	  if (version >= PROTOCOL_CODE)
	    read_code ();
	  const char *no;
	  if (target == SFC_NO_TARGET)
	    {
	      snprintf (reason, sizeof reason, "unknown target %s", tname);
	      no = reason;
	    }
	  else
	    no = c->load (target, addr, section_buf, n, reason, sizeof reason);
	  loaded = no == NULL;
	  if (no)
	    {
	      fputs ("refused ", stdout);
	      put_message (no);
	      putchar ('\n');
	    }
	  else
	    puts ("ok");
	}
      else if (version >= 2 && strncmp (l, "modules ", 8) == 0)
	{
	  char tname[32];
	  int nm;
	  if (sscanf (l + 8, "%31s %d", tname, &nm) != 2 || nm < 1
	      || nm > SFC_MAX_MODULES)
	    protocol_error ("want \"modules TARGET N\", N from 1 to %d",
			    SFC_MAX_MODULES);
	  target = parse_target (tname);
	  static struct sfc_module mods[SFC_MAX_MODULES];
	  static unsigned char *bufs[SFC_MAX_MODULES];
	  static size_t caps[SFC_MAX_MODULES];
	  for (int i = 0; i < nm; i++)
	    {
	      char *m = read_line (&len);
	      if (!m)
		protocol_error ("input ended inside a modules list");
	      char *hexp = NULL;
	      unsigned long long a, b, at;
	      int used = 0;
	      if (strncmp (m, "module ", 7) != 0
		  || sscanf (m + 7, "%63s %llx %llx %llx %n", mods[i].name, &a, &b,
			     &at, &used) != 4 || used == 0)
		protocol_error ("want \"module NAME START END ADDR HEXBYTES\", got \"%.60s\"", m);
	      hexp = m + 7 + used;
	      long n = unhex (hexp, len - (hexp - m), &bufs[i], &caps[i]);
	      if (n < 0)
		protocol_error ("module %s: section bytes are not hex", mods[i].name);
	      if (a >= b || (i > 0 && a < mods[i - 1].end))
		protocol_error ("module %s: range [%llx, %llx) empty or not after the one before", mods[i].name, a, b);
	      mods[i].start = a;
	      mods[i].end = b;
	      mods[i].addr = at;
	      mods[i].section = bufs[i];
	      mods[i].size = n;
	    }
	  ncode = 0;
	  held_valid = 0;
	  if (version >= PROTOCOL_CODE)
	    read_code ();
	  const char *no;
	  if (target == SFC_NO_TARGET)
	    {
	      snprintf (reason, sizeof reason, "unknown target %s", tname);
	      no = reason;
	    }
	  else
	    no = c->load_modules (target, mods, nm, reason, sizeof reason);
	  loaded = no == NULL;
	  if (no)
	    {
	      fputs ("refused ", stdout);
	      put_message (no);
	      putchar ('\n');
	    }
	  else
	    puts ("ok");
	}
      else if (strncmp (l, "unwind ", 7) == 0)
	{
	  long n = strtol (l + 7, NULL, 10);
	  if (n < 0)
	    protocol_error ("want \"unwind N\"");
	  for (long i = 0; i < n; i++)
	    {
	      char *s = read_line (&len);
	      if (!s)
		protocol_error ("input ended inside a batch");
	      parse_step (s, len, target, version, &step);
	      result.n = 0;
	      result.end = SFC_COMPLETE;
	      result.msg[0] = 0;
	      if (!loaded)
		sfc_stop (&result, SFC_FAILED, "no section loaded");
	      else
		c->unwind (&step, &result);
	      write_result (&step, &result);
	    }
	}
      else
	protocol_error ("unknown command \"%.40s\"", l);
      if (fflush (stdout) != 0)
	return 1;
    }
  return 0;
}
