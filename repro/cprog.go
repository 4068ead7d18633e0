package repro

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// The libsframe report: a C program against libsframe's public API
// (sframe-api.h) that decodes the section, asks sframe_find_fre for the
// row at the culprit PC and prints it next to the expected one, in one
// notation: "no FRE", "RA undefined", or "CFA sp+16, RA c-8, FP c-16" (u:
// no offset; "RA signed" when mangled). It exits 1 when they differ.

// LibsframeProgram is the C source.
func (rep *Report) LibsframeProgram() string {
	img := rep.Replay.Img
	fdeType := 0
	compare := rep.expectedRow != nil || rep.Expected != ""
	// The section of the module holding the PC: what a process's
	// unwinder hands libsframe.
	sec, secAddr, _ := img.SectionAt(rep.PC)
	if t, err := sframe.Decode(sec, secAddr); err == nil {
		if f, err := t.FindFDE(rep.PC); err == nil && f.Type == sframe.FDETypeFlex {
			fdeType, compare = int(sframe.FDETypeFlex), false // flexible rules read otherwise
		}
	}
	want := "?"
	switch {
	case rep.expectedRow != nil:
		want = canonical(img.Target, *rep.expectedRow)
	case rep.Expected != "":
		compare = false
	}
	var b strings.Builder
	fmt.Fprintf(&b, `/* What libsframe reads at PC %#x of the .sframe section below
   (%s, %s; made by %s).
   sfconform case: %s  */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sframe-api.h>

static const unsigned char section[] = {
%s};
static const uint64_t section_addr = %#xULL;
static const uint64_t pc = %#xULL;
/* The row the code's CFI gives at pc.  */
static const char expected[] = %q;

int
main (void)
{
  int err = 0;
  sframe_decoder_ctx *dctx = sframe_decode ((const char *) section, sizeof section, &err);
  if (dctx == NULL)
    {
      printf ("sframe_decode: %%s\n", sframe_errmsg (err));
      return 2;
    }
  char got[128];
  sframe_frame_row_entry fre;
  if (sframe_find_fre (dctx, (int64_t) (pc - section_addr), &fre) != 0)
    snprintf (got, sizeof got, "no FRE");
  else if (sframe_fre_get_ra_undefined_p (dctx, &fre, &err))
    snprintf (got, sizeof got, "RA undefined");
  else
    {
      char ra[32] = "u", fp[32] = "u";
      int base = sframe_fre_get_base_reg_id (&fre, &err);
      int32_t cfa = sframe_fre_get_cfa_offset (dctx, &fre, %d, &err);
      err = 0;
      int32_t off = sframe_fre_get_ra_offset (dctx, &fre, %d, &err);
      if (err == 0)
        snprintf (ra, sizeof ra, "c%%+d", (int) off);
      err = 0;
      off = sframe_fre_get_fp_offset (dctx, &fre, %d, &err);
      if (err == 0)
        snprintf (fp, sizeof fp, "c%%+d", (int) off);
      err = 0;
      snprintf (got, sizeof got, "CFA %%s%%+d, RA %%s, FP %%s%%s", base == SFRAME_BASE_REG_SP ? "sp" : "fp",
                (int) cfa, ra, fp, sframe_fre_get_ra_mangled_p (dctx, &fre, &err) ? ", RA signed" : "");
    }
  printf ("pc %%#llx\n  libsframe: %%s\n  expected:  %%s\n", (unsigned long long) pc, got, expected);
  sframe_decoder_free (&dctx);
%s}
`, rep.PC, rep.Case.Target, plainVersion(rep.Case.ConsumerVersion), rep.Case.ProducerVersion, rep.Path,
		cBytes(sec), secAddr, rep.PC, want, fdeType, fdeType, fdeType, cReturn(compare))
	return b.String()
}

func cReturn(compare bool) string {
	if !compare {
		return "  return 0; /* a flexible FDE's rules: compare by eye */\n"
	}
	return "  return strcmp (got, expected) != 0;\n"
}

// canonical writes a row in the C program's notation.
func canonical(t target.Target, r sframe.Row) string {
	if r.RA.Kind == sframe.RuleUndefined {
		return "RA undefined"
	}
	base := "sp"
	if r.CFA.Reg == t.FP() {
		base = "fp"
	}
	slot := func(x sframe.Rule) string {
		if x.Kind == sframe.RuleExpr && x.Reg == sframe.RegCFA && x.Deref {
			return fmt.Sprintf("c%+d", x.Offset)
		}
		return "u"
	}
	s := fmt.Sprintf("CFA %s%+d, RA %s, FP %s", base, r.CFA.Offset, slot(r.RA), slot(r.FP))
	if r.MangledRA {
		s += ", RA signed"
	}
	return s
}

func cBytes(b []byte) string {
	var s strings.Builder
	for i, x := range b {
		if i%12 == 0 {
			s.WriteString("  ")
		}
		fmt.Fprintf(&s, "0x%02x,", x)
		if i%12 == 11 || i == len(b)-1 {
			s.WriteString("\n")
		} else {
			s.WriteString(" ")
		}
	}
	return s.String()
}

// LibsframeScript is the commands that build and run the C program with
// the libsframe of Debian's libsframe-dev (SFRAME_INCLUDE and SFRAME_LIB
// point elsewhere).
func (rep *Report) LibsframeScript() string {
	return fmt.Sprintf(`cat > repro.c <<'EOF'
%sEOF
# sframe-api.h includes ansidecl.h, which libsframe-dev does not ship: a stand-in.
mkdir -p include
printf '#define ATTRIBUTE_PACKED __attribute__ ((__packed__))\n#define ATTRIBUTE_UNUSED __attribute__ ((__unused__))\n' > include/ansidecl.h
gcc -I include -idirafter "${SFRAME_INCLUDE:-/usr/include}" -o repro repro.c ${SFRAME_LIB:--lsframe}
./repro
`, rep.LibsframeProgram())
}

func (rep *Report) libsframeSection(b *strings.Builder) {
	if rep.Frame < 0 {
		return
	}
	fmt.Fprintf(b, "A C program against libsframe's API (`sframe-api.h`, from Debian's `libsframe-dev`) decodes the section and asks `sframe_find_fre` for the row at PC %#x; it exits 1 when libsframe's answer is not the expected row:\n\n", rep.PC)
	fmt.Fprintf(b, "```sh\n%s```\n\n", rep.LibsframeScript())
}
