#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 071 against one libsframe.
# Compiles fre-walk.c (public API only; the section and libsframe's malloc'd
# blocks end where an inaccessible page begins, so a read past one faults
# and is reported) against the library and walks the FREs of function 0
# of GNU as and ld 2.44's one-function section (v2.sframe: SFrame v2,
# x86-64, 3 FREs in an 11-byte FRE sub-section), then of the same from
# 2.47 (v3.sframe: SFrame v3, 5 bytes of function attribute and the same
# 11 bytes of FREs). Both at 0x10001038, the function at 0x10000000.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/fre-walk.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/fre-walk" || exit 2
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in v2 v3; do
	echo "$f.sframe:"
	run "$tmp/fre-walk" "$here/$f.sframe" 0x10001038 0x10000001
done
