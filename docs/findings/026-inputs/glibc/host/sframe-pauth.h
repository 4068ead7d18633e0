/* Stands in for the AArch64 sframe-pauth.h of the proposed patch on the
   x86-64 host that runs the replay, which cannot execute XPACLRI: clears
   the pointer authentication code of a user-space return address in a
   48-bit address space (bits 48-63), as XPACLRI does there.  Only the
   patched sframe.c includes it.  Ours, for the replay.  */
#ifndef _SFRAME_PAUTH_H
#define _SFRAME_PAUTH_H
#include <unwind.h>
static inline _Unwind_Ptr
sframe_strip_pauth (_Unwind_Ptr addr)
{
  return addr & ((1ULL << 48) - 1);
}
#endif
