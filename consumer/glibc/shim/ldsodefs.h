/* Stands in for glibc's internal ldsodefs.h, of which sframe.c uses one
   thing: GLRO(dl_find_object), the dynamic loader's _dl_find_object.  It
   becomes sfconform_dl_find_object, which the driver (../glibc.c)
   defines: every address belongs to the one object whose SFrame section
   sfconform loaded.  Ours, for sfconform.  */

#ifndef SFCONFORM_GLIBC_LDSODEFS_H
#define SFCONFORM_GLIBC_LDSODEFS_H

#include <dlfcn.h>

int sfconform_dl_find_object (void *address, struct dl_find_object *result);

#define GLRO(name) sfconform_##name

#endif
