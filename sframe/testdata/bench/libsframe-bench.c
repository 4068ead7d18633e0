/* libsframe-bench.c times libsframe on the benchmark section, for
 * comparison with the Go benchmarks in ../../bench_test.go:
 * sframe_decode of the whole section, and sframe_find_fre at PCs drawn
 * uniformly from the text in random order and at increasing PCs 7 bytes
 * apart, as BenchmarkFindRowGas{Random,Sequential} do.
 *
 * libsframe ships no header outside libsframe-dev and sframe.h needs
 * ansidecl.h, so the three functions are declared here; the FRE is
 * written into a buffer larger than any version's struct.
 *
 *   gcc -O2 -o bench libsframe-bench.c -l:libsframe.so.3
 *   gunzip -c x86-64-20k.sframe.gz >s; ./bench s 0x$(cat x86-64-20k.sframe.addr)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct sframe_decoder_ctx sframe_decoder_ctx;
extern sframe_decoder_ctx *sframe_decode (const char *buf, size_t size, int *errp);
extern void sframe_decoder_free (sframe_decoder_ctx **ctx);
extern int sframe_find_fre (sframe_decoder_ctx *ctx, int64_t pc, void *frep);

static double now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15;
static uint64_t next (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int main (int argc, char **argv)
{
  if (argc != 3)
    return fprintf (stderr, "usage: %s SECTION ADDR\n", argv[0]), 2;
  FILE *f = fopen (argv[1], "rb");
  if (!f)
    return perror (argv[1]), 1;
  static char buf[8 << 20];
  size_t n = fread (buf, 1, sizeof buf, f);
  fclose (f);
  uint64_t addr = strtoull (argv[2], NULL, 0);
  /* The text the benchmark section describes (gen.awk, -Ttext=0x401000). */
  uint64_t lo = 0x401000, hi = lo;
  int err = 0;

  int rounds = 2000;
  double t0 = now ();
  for (int i = 0; i < rounds; i++)
    {
      sframe_decoder_ctx *d = sframe_decode (buf, n, &err);
      if (!d)
	return fprintf (stderr, "sframe_decode: %d\n", err), 1;
      sframe_decoder_free (&d);
    }
  printf ("sframe_decode: %.1f us/op\n", (now () - t0) / rounds * 1e6);

  sframe_decoder_ctx *d = sframe_decode (buf, n, &err);
  unsigned char fre[256];
  while (sframe_find_fre (d, (int64_t) (hi - addr), fre) == 0)
    hi++;
  /* hi is the first PC without an FRE; the functions are contiguous. */
  enum { NPCS = 1 << 16 };
  static int64_t pcs[NPCS];
  for (int i = 0; i < NPCS; i++)
    pcs[i] = (int64_t) (lo + next () % (hi - lo) - addr);
  long iters = 20000000;
  t0 = now ();
  for (long i = 0; i < iters; i++)
    if (sframe_find_fre (d, pcs[i & (NPCS - 1)], fre) != 0)
      return fprintf (stderr, "find_fre failed\n"), 1;
  printf ("sframe_find_fre random: %.1f ns/op\n", (now () - t0) / iters * 1e9);
  uint64_t pc = lo;
  t0 = now ();
  for (long i = 0; i < iters; i++)
    {
      if (sframe_find_fre (d, (int64_t) (pc - addr), fre) != 0)
	return fprintf (stderr, "find_fre failed at %#lx\n", (unsigned long) pc), 1;
      if ((pc += 7) >= hi)
	pc = lo;
    }
  printf ("sframe_find_fre sequential: %.1f ns/op\n", (now () - t0) / iters * 1e9);
  sframe_decoder_free (&d);
  return 0;
}
