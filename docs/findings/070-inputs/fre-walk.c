/* fre-walk SECTION ADDR PC: decode a raw .sframe section with libsframe
   (sframe_decode) and walk the FREs of the function that holds PC three
   ways, through the public API (sframe-api.h) only:
     sframe_find_fre (the PC, relative to the section's address ADDR),
     sframe_decoder_get_fre (every FRE index the function declares),
     sframe_decoder_get_fres_buf (the function's FRE bytes).

   The section is placed at the end of a page followed by a page that can
   be neither read nor written, and so is every block libsframe takes from
   malloc (the program is linked with --wrap=malloc,--wrap=free,
   --wrap=realloc, which sends only libsframe's calls here: sframe_decode
   copies the FRE sub-section into such a block).  A read past the end of
   either faults, and is reported as an offset from the start of the
   section or block.  x86-64 Linux.

   Build against a binutils build tree (BUILD) and its source tree (SRC):
     gcc -O2 -Wall -I SRC/include fre-walk.c BUILD/libsframe/.libs/libsframe.a \
       -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o fre-walk
   (SRC/include provides sframe-api.h, sframe.h and the ansidecl.h that
   sframe.h includes; Debian's libsframe-dev ships no ansidecl.h.)  */
#define _GNU_SOURCE
#include <inttypes.h>
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

/* A block whose last byte is followed by an inaccessible page.  */
static struct block { char *p; size_t n; char *map; size_t len; const char *what; } blocks[256];
static int nblocks;

static void *
guarded (size_t n, const char *what)
{
  long pg = sysconf (_SC_PAGESIZE);
  size_t span = (n + pg - 1) / pg * pg;
  if (nblocks == 256)
    return NULL;
  char *m = mmap (NULL, span + pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  mprotect (m + span, pg, PROT_NONE);
  blocks[nblocks] = (struct block) { m + span - n, n, m, span + pg, what };
  return blocks[nblocks++].p;
}

void *
__wrap_malloc (size_t n)
{
  if (n == 0 || n > (1u << 24) || nblocks == 256)
    return __real_malloc (n);
  return guarded (n, "block malloc'd by libsframe");
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
  char m[200];
  char *a = si->si_addr;
  int write_p = (((ucontext_t *) uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  int n = snprintf (m, sizeof m, "SIGSEGV: %s outside every guarded block\n",
		    write_p ? "write" : "read");
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].map && a >= blocks[i].p && a < blocks[i].map + blocks[i].len)
      n = snprintf (m, sizeof m, "SIGSEGV: %s at byte %zu of the %zu-byte %s\n",
		    write_p ? "write" : "read", (size_t) (a - blocks[i].p),
		    blocks[i].n, blocks[i].what);
  write (1, m, n);
  _exit (128 + sig);
}

int
main (int argc, char **argv)
{
  static char buf[1 << 16];
  if (argc != 4)
    {
      fprintf (stderr, "usage: fre-walk SECTION ADDR PC\n");
      return 2;
    }
  FILE *f = fopen (argv[1], "rb");
  if (!f)
    {
      perror (argv[1]);
      return 2;
    }
  size_t size = fread (buf, 1, sizeof buf, f);
  fclose (f);
  char *sec = guarded (size, "section");
  if (!sec)
    return 2;
  memcpy (sec, buf, size);

  struct sigaction sa = { .sa_sigaction = segv, .sa_flags = SA_SIGINFO };
  sigaction (SIGSEGV, &sa, NULL);
  int err = 0;
  sframe_decoder_ctx *d = sframe_decode (sec, size, &err);
  if (!d)
    {
      printf ("sframe_decode: %s\n", sframe_errmsg (err));
      return 1;
    }
  uint64_t addr = strtoull (argv[2], NULL, 0);
  uint64_t pc = strtoull (argv[3], NULL, 0);
  printf ("decoded: SFrame v%u, %u FDEs\n", sframe_decoder_get_version (d),
	  sframe_decoder_get_num_fidx (d));
  fflush (stdout); /* what was printed survives a crash in a call */
  sframe_frame_row_entry fre;
  int r = sframe_find_fre (d, (int64_t) (pc - addr), &fre);
  if (r != 0)
    printf ("sframe_find_fre (pc %#" PRIx64 "): error %d\n", pc, r);
  else
    printf ("sframe_find_fre (pc %#" PRIx64 "): FRE at function offset %"
	    PRIu32 "\n", pc, fre.fre_start_addr);
  fflush (stdout);
  for (unsigned int i = 0; i < 16; i++)
    {
      r = sframe_decoder_get_fre (d, 0, i, &fre);
      printf ("sframe_decoder_get_fre (0, %u): ", i);
      if (r != 0)
	{
	  printf ("error %d\n", r);
	  break;
	}
      printf ("FRE at function offset %" PRIu32 "\n", fre.fre_start_addr);
      fflush (stdout);
    }
  fflush (stdout);
  char *fres = NULL;
  size_t fres_size = 0;
  uint32_t num_fres = 0;
  r = sframe_decoder_get_fres_buf (d, 0, &fres, &fres_size, &num_fres);
  if (r != 0)
    printf ("sframe_decoder_get_fres_buf (0): error %d\n", r);
  else
    printf ("sframe_decoder_get_fres_buf (0): %u FREs, %zu bytes\n", num_fres,
	    fres_size);
  sframe_decoder_free (&d);
  return 0;
}
