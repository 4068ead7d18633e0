#!/usr/bin/env bash
# replay.sh GLIBC-DIR: finding 026 against glibc's SFrame stack tracer,
# the files of GLIBC-DIR.
#  1. Builds 018's walk.c (018-inputs/glibc/build-walk.sh) with host/ first
#     on the include path (host/sframe-pauth.h stands in for the patch's
#     AArch64 header, which the x86-64 host cannot run), assembles and
#     links 026's pac.s (from the write-up; GNU as and ld 2.44, SFrame v2)
#     and walks it stopped in f with the saved return address signed (PAC
#     0x2a in bits 48-54): one frame per call, then the whole trace.
#  2. Compiles GLIBC-DIR's sysdeps/aarch64/sframe-pauth.h (added by the
#     patch) with the AArch64 cross compiler and prints the instruction it
#     strips with.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=${SFCONFORM_CACHE:-/var/cache/sfconform}
B=$C/toolchains/binutils-2.44/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WALK_INCLUDE=$here/host "$here/../../018-inputs/glibc/build-walk.sh" "$1" "$tmp/walk"
awk '$0 == "<!-- check-lib: file pac.s -->" { f = 1; next } f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit } f == 2' \
	"$here/../../026-glibc-pac-not-stripped.md" >"$tmp/pac.s"
"$B/aarch64-linux-gnu-as" --gsframe -o "$tmp/pac.o" "$tmp/pac.s"
"$B/aarch64-linux-gnu-ld" -Ttext=0x10000000 -o "$tmp/pac" "$tmp/pac.o"
"$tmp/walk" "$tmp/pac" 0x10000018 0x70000000 0x70000000 0 0x002a000010000008
if [[ -f $1/sysdeps/aarch64/sframe-pauth.h ]]; then
	printf '#include <sframe-pauth.h>\n_Unwind_Ptr strip (_Unwind_Ptr a) { return sframe_strip_pauth (a); }\n' >"$tmp/strip.c"
	aarch64-linux-gnu-gcc -O2 -Wall -I "$1/sysdeps/aarch64" -I "$1/sysdeps/generic" -c "$tmp/strip.c" -o "$tmp/strip.o"
	echo "AArch64 sframe_strip_pauth: $("$B/aarch64-linux-gnu-objdump" -d "$tmp/strip.o" | grep -o 'xpaclri' | sort -u)"
else
	echo "AArch64 sframe_strip_pauth: no sysdeps/aarch64/sframe-pauth.h"
fi
