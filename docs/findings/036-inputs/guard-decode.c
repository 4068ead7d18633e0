/* guard-decode SECTION: decode a raw .sframe section with libsframe, with
   every block libsframe takes from malloc placed so that its last byte is
   followed by a page that may be read but not written (the program is
   linked with --wrap=malloc,--wrap=free,--wrap=realloc, which sends only
   libsframe's calls here).  A write past the end of such a block faults,
   and is reported as an offset from the block's start.  */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <sframe-api.h>

void *__real_malloc (size_t);
void __real_free (void *);
void *__real_realloc (void *, size_t);

static struct block { char *p; size_t n; char *map; size_t len; } blocks[256];
static int nblocks;

void *
__wrap_malloc (size_t n)
{
  long pg = sysconf (_SC_PAGESIZE);
  size_t span = (n + pg - 1) / pg * pg;
  if (n == 0 || nblocks == 256)
    return __real_malloc (n);
  char *m = mmap (NULL, span + pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  mprotect (m + span, pg, PROT_READ);
  blocks[nblocks] = (struct block) { m + span - n, n, m, span + pg };
  return blocks[nblocks++].p;
}

static struct block *
ours (void *p)
{
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].p == p)
      return &blocks[i];
  return NULL;
}

void
__wrap_free (void *p)
{
  struct block *b = ours (p);
  if (!b)
    __real_free (p);
  else if (b->map)
    {
      munmap (b->map, b->len);
      b->map = NULL;
    }
}

void *
__wrap_realloc (void *p, size_t n)
{
  struct block *b = ours (p);
  if (!b)
    return __real_realloc (p, n);
  void *q = __wrap_malloc (n);
  if (q)
    {
      memcpy (q, p, b->n < n ? b->n : n);
      __wrap_free (p);
    }
  return q;
}

static void
segv (int sig, siginfo_t *si, void *uc)
{
  char m[160];
  char *a = si->si_addr;
  int write_p = (((ucontext_t *) uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  int n = snprintf (m, sizeof m, "SIGSEGV: %s outside every guarded block\n",
		    write_p ? "write" : "read");
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].map && a >= blocks[i].p && a < blocks[i].map + blocks[i].len)
      n = snprintf (m, sizeof m, "SIGSEGV: %s at byte %zu of the %zu-byte "
		    "block malloc'd by libsframe\n", write_p ? "write" : "read",
		    (size_t) (a - blocks[i].p), blocks[i].n);
  write (1, m, n);
  _exit (128 + sig);
}

int
main (int argc, char **argv)
{
  static char buf[1 << 16];
  FILE *f = fopen (argv[1], "rb");
  size_t size = fread (buf, 1, sizeof buf, f);
  struct sigaction sa = { .sa_sigaction = segv, .sa_flags = SA_SIGINFO };
  sigaction (SIGSEGV, &sa, NULL);
  printf ("section: %zu bytes\n", size);
  fflush (stdout);
  int err = 0;
  sframe_decoder_ctx *d = sframe_decode (buf, size, &err);
  if (!d)
    {
      printf ("sframe_decode: %s\n", sframe_errmsg (err));
      return 1;
    }
  printf ("decoded, %u FDEs\n", sframe_decoder_get_num_fidx (d));
  sframe_decoder_free (&d);
  return 0;
}
