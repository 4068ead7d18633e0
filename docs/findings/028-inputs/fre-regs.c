/* fre-regs SECTION ADDR PC: decode a raw .sframe section with libsframe,
   look PC up with sframe_find_fre (through probe.s) and print what it
   returned and every callee-saved register it did not preserve.  */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sframe-api.h>

int probe (sframe_decoder_ctx *, int64_t, sframe_frame_row_entry *,
	   uint64_t *);

int
main (int argc, char **argv)
{
  static char buf[1 << 16];
  static const char *const names[] = { "rbx", "rbp", "r12", "r13", "r14", "r15" };
  FILE *f = fopen (argv[1], "rb");
  size_t size = fread (buf, 1, sizeof buf, f);
  int err = 0;
  sframe_decoder_ctx *d = sframe_decode (buf, size, &err);
  if (!d)
    {
      printf ("sframe_decode: %s\n", sframe_errmsg (err));
      return 1;
    }
  uint64_t addr = strtoull (argv[2], NULL, 0);
  uint64_t pc = strtoull (argv[3], NULL, 0);
  sframe_frame_row_entry fre;
  uint64_t regs[6];
  int r = probe (d, (int64_t) (pc - addr), &fre, regs);
  printf ("sframe_find_fre: %d\n", r);
  for (int i = 0; i < 6; i++)
    if (regs[i] != 0x1111111111111111ULL * (i + 1))
      printf ("  %s changed: %#018" PRIx64 "\n", names[i], regs[i]);
  return 0;
}
