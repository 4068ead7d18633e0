/* find-fre SECTION ADDR PC...: glibc's SFrame reader on a raw .sframe
   section.  SECTION is the section's bytes, ADDR the address it was
   loaded at; each PC is looked up as glibc's stack tracer does
   (__sframe_decode, then __sframe_find_fre with the PC's distance from
   the section) and the FRE found is printed.  Built from glibc's own
   sysdeps/generic/sframe-read.c with sfconform's shim prelude
   (consumer/glibc/shim/prelude.h: glibc's internal build macros).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sframe-read.h>

int
main (int argc, char **argv)
{
  static char buf[1 << 16] __attribute__ ((aligned (8)));
  FILE *f = fopen (argv[1], "rb");
  if (!f || fread (buf, 1, sizeof buf, f) == 0)
    return 2;
  unsigned long long addr = strtoull (argv[2], 0, 0);
  sframe_decoder_ctx d;
  memset (&d, 0, sizeof d);
  if (__sframe_decode (&d, buf) != _URC_NO_REASON)
    {
      printf ("__sframe_decode refuses the section\n");
      return 1;
    }
  for (int i = 3; i < argc; i++)
    {
      unsigned long long pc = strtoull (argv[i], 0, 0);
      sframe_frame_row_entry fre;
      _Unwind_Reason_Code err;
      printf ("pc %#llx: ", pc);
      fflush (stdout);
      if (__sframe_find_fre (&d, (int32_t) (pc - addr), &fre) != _URC_NO_REASON)
	{
	  printf ("no FRE\n");
	  continue;
	}
      int32_t cfa = __sframe_fre_get_cfa_offset (&d, &fre, &err);
      printf ("FRE at function offset %u, CFA %s+%d\n", fre.fre_start_addr,
	      __sframe_fre_get_base_reg_id (&fre) == SFRAME_BASE_REG_SP ? "sp" : "fp", cfa);
    }
  return 0;
}
