/* Force-included (gcc -include) before each of glibc's SFrame files, which
   are written to be compiled inside glibc's own build.  That build defines
   _GNU_SOURCE, reaches <string.h> and <stddef.h> through its internal
   headers, and exports symbols with libc_hidden_proto/libc_hidden_def;
   outside it the symbols are ordinary ones.  Ours, for sfconform.  */

#ifndef SFCONFORM_GLIBC_PRELUDE_H
#define SFCONFORM_GLIBC_PRELUDE_H

#define _GNU_SOURCE 1
#include <stddef.h>
#include <string.h>

#define libc_hidden_proto(name)
#define libc_hidden_def(name)

#endif
