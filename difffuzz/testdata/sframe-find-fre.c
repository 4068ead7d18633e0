/* sframe-find-fre: ask GNU libsframe about one section, nothing else.

   A plain reproduction of what the differential fuzzing shows: it reads a
   raw .sframe section from a file, gives it to sframe_decode, and looks
   each PC up with sframe_find_fre (the PC relative to the section's
   address, as libsframe wants it), printing the FRE libsframe returns and
   the values its getters derive from it.  No walk, no protocol.

     gcc -I../../consumer/libsframe/include -idirafter $ROOT/usr/include \
         sframe-find-fre.c $ROOT/usr/lib/x86_64-linux-gnu/libsframe.a -o sframe-find-fre
     ./sframe-find-fre SECTION ADDR [PC...]

   where ROOT is sid's root that ci/setup.sh unpacks libsframe-dev into
   ($SFCONFORM_CACHE/roots/sid).  ADDR and PC are numbers in C syntax.  */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sframe-api.h>

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: %s SECTION ADDR [PC...]\n", argv[0]);
      return 2;
    }
  FILE *f = fopen (argv[1], "rb");
  if (!f)
    {
      perror (argv[1]);
      return 2;
    }
  /* Exactly the file's bytes, in a buffer of exactly that size, so that
     a read past the section is a read past the buffer.  */
  fseek (f, 0, SEEK_END);
  long n = ftell (f);
  rewind (f);
  char *buf = malloc (n > 0 ? n : 1);
  if (!buf || fread (buf, 1, n, f) != (size_t) n)
    {
      fprintf (stderr, "%s: cannot read\n", argv[1]);
      return 2;
    }
  fclose (f);
  uint64_t addr = strtoull (argv[2], NULL, 0);

  int err = 0;
  printf ("sframe_decode (%ld bytes at %#llx)\n", n, (unsigned long long) addr);
  fflush (stdout);
  sframe_decoder_ctx *d = sframe_decode (buf, n, &err);
  if (!d)
    {
      printf ("  refused: %s\n", sframe_errmsg (err));
      return 1;
    }
  printf ("  ok: version %u, flags %#x, abi %u, %u FDEs\n",
	  sframe_decoder_get_version (d), sframe_decoder_get_flags (d),
	  sframe_decoder_get_abi_arch (d), sframe_decoder_get_num_fidx (d));
  for (int i = 3; i < argc; i++)
    {
      uint64_t pc = strtoull (argv[i], NULL, 0);
      sframe_frame_row_entry fre;
      printf ("sframe_find_fre (pc %#llx, section offset %lld)\n",
	      (unsigned long long) pc, (long long) (pc - addr));
      fflush (stdout);
      if (sframe_find_fre (d, (int64_t) (pc - addr), &fre) != 0)
	{
	  printf ("  no FRE\n");
	  continue;
	}
      int e1 = 0, e2 = 0, e3 = 0, e4 = 0, e5 = 0;
      int32_t cfa = sframe_fre_get_cfa_offset (d, &fre, SFRAME_FDE_TYPE_DEFAULT, &e1);
      int32_t ra = sframe_fre_get_ra_offset (d, &fre, SFRAME_FDE_TYPE_DEFAULT, &e2);
      int32_t fp = sframe_fre_get_fp_offset (d, &fre, SFRAME_FDE_TYPE_DEFAULT, &e3);
      printf ("  FRE start %#x, info %#x: base %s, CFA offset %d%s, RA offset %d%s, FP offset %d%s, RA undefined %d\n",
	      fre.fre_start_addr, fre.fre_info,
	      sframe_fre_get_base_reg_id (&fre, &e4) == SFRAME_BASE_REG_FP ? "FP" : "SP",
	      cfa, e1 ? " (error)" : "", ra, e2 ? " (none)" : "", fp, e3 ? " (none)" : "",
	      sframe_fre_get_ra_undefined_p (d, &fre, &e5));
    }
  sframe_decoder_free (&d);
  free (buf);
  return 0;
}
