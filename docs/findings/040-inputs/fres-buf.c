/* fres-buf SECTION IDX...: decode a raw .sframe section with libsframe
   (sframe_decode) and ask sframe_decoder_get_fres_buf for the FREs of the
   functions at each index IDX.  Public API only: sframe-api.h.

   Build against a binutils build tree (BUILD) and its source tree (SRC):
     gcc -O2 -Wall -I SRC/include fres-buf.c BUILD/libsframe/.libs/libsframe.a -o fres-buf
   (Debian's libsframe-dev ships no ansidecl.h, which sframe.h includes.)  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sframe-api.h>

int
main (int argc, char **argv)
{
  static char buf[1 << 16];
  if (argc < 3)
    {
      fprintf (stderr, "usage: fres-buf SECTION IDX...\n");
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
  for (int i = 2; i < argc; i++)
    {
      uint32_t idx = strtoul (argv[i], NULL, 0), num_fres = 0;
      char *fres = NULL;
      size_t fres_size = 0;
      fflush (stdout); /* what was printed survives a crash in the call */
      int r = sframe_decoder_get_fres_buf (d, idx, &fres, &fres_size,
					   &num_fres);
      if (r != 0)
	printf ("function %u: error %d\n", idx, r);
      else
	printf ("function %u: %u FREs, %zu bytes\n", idx, num_fres, fres_size);
    }
  sframe_decoder_free (&d);
  return 0;
}
