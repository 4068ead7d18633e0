/* find-fre SECTION ADDR PC...: decode a raw .sframe section with libsframe
   (sframe_decode) and look each PC up (sframe_find_fre, which takes the PC
   relative to the section's address ADDR).  Public API only: sframe-api.h.

   Build against a binutils build tree (BUILD) and its source tree (SRC):
     gcc -O2 -Wall -I SRC/include find-fre.c BUILD/libsframe/.libs/libsframe.a -o find-fre
   (SRC/include provides sframe-api.h, sframe.h and the ansidecl.h that
   sframe.h includes; Debian's libsframe-dev ships no ansidecl.h.)  */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sframe-api.h>

int
main (int argc, char **argv)
{
  static char buf[1 << 16];
  if (argc < 3)
    {
      fprintf (stderr, "usage: find-fre SECTION ADDR PC...\n");
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

  int err = 0;
  sframe_decoder_ctx *d = sframe_decode (buf, size, &err);
  if (!d)
    {
      printf ("sframe_decode: %s\n", sframe_errmsg (err));
      return 1;
    }
  printf ("decoded, %u FDEs\n", sframe_decoder_get_num_fidx (d));
  uint64_t addr = strtoull (argv[2], NULL, 0);
  for (int i = 3; i < argc; i++)
    {
      uint64_t pc = strtoull (argv[i], NULL, 0);
      sframe_frame_row_entry fre;
      fflush (stdout); /* what was printed survives a crash in the lookup */
      int r = sframe_find_fre (d, (int64_t) (pc - addr), &fre);
      if (r != 0)
	printf ("pc %#" PRIx64 ": no FRE (sframe_find_fre returned %d)\n", pc, r);
      else
	printf ("pc %#" PRIx64 ": FRE at function offset %" PRIu32 "\n", pc,
		fre.fre_start_addr);
    }
  sframe_decoder_free (&d);
  return 0;
}
