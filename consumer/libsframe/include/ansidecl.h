/* A stand-in for the ansidecl.h that libsframe's public headers (sframe.h,
   sframe-api.h) include and Debian's libsframe-dev does not ship.  Those
   headers need two of its macros; sfconform defines them here for GCC.  */

#ifndef SFCONFORM_ANSIDECL_H
#define SFCONFORM_ANSIDECL_H

#define ATTRIBUTE_PACKED __attribute__ ((__packed__))
#define ATTRIBUTE_UNUSED __attribute__ ((__unused__))

#endif
