/* Stands in for <dlfcn.h> in glibc's sframe.c: glibc 2.43 adds the member
   dlfo_sframe (the object's SFrame section) and the flag DLFO_FLAG_SFRAME
   to struct dl_find_object, which the host's older C library lacks.  The
   members are 2.43's, in its order (as of x86-64 and AArch64, whose
   struct has no dlfo_eh_dbase or dlfo_eh_count); only sframe.c and the
   driver use the struct, both compiled with this header.  Ours, for
   sfconform.  */

#ifndef SFCONFORM_GLIBC_DLFCN_H
#define SFCONFORM_GLIBC_DLFCN_H

struct link_map;

struct dl_find_object
{
  unsigned long long int dlfo_flags;
  void *dlfo_map_start;
  void *dlfo_map_end;
  struct link_map *dlfo_link_map;
  void *dlfo_eh_frame;
  void *dlfo_sframe;
  unsigned long long int __dlfo_reserved[6];
};

#define DLFO_FLAG_SFRAME (1ULL << 0)

#endif
