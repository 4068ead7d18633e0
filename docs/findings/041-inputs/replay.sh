#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 041 against one libsframe.
# Compiles guard-read.c (public API only) against the library and decodes
# le.sframe (GNU as and ld 2.47, SFrame v3, x86-64, f at 0x10000000, the
# section at 0x10001038) and be.sframe (the same for big-endian AArch64, the
# section at 0x10000048), then le-aux4.sframe and be-aux4.sframe: the same
# with a 4-byte auxiliary header (sfh_auxhdr_len 4, four zero bytes after
# the 28-byte header; the sections 4 bytes lower, so f stays where it was).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/guard-read.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/guard-read" || exit 2
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
echo "le.sframe:"
run "$tmp/guard-read" "$here/le.sframe" 0x10001038 0x10000001
echo "le-aux4.sframe:"
run "$tmp/guard-read" "$here/le-aux4.sframe" 0x10001034 0x10000001
echo "be.sframe:"
run "$tmp/guard-read" "$here/be.sframe" 0x10000048 0x10000004
echo "be-aux4.sframe:"
run "$tmp/guard-read" "$here/be-aux4.sframe" 0x10000044 0x10000004
