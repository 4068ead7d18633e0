#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 017 against one libsframe.
# Compiles guard-read.c (public API only; the section and libsframe's
# malloc'd blocks end where an inaccessible page begins, so a read past one
# faults and is reported) against the library, and decodes GNU as and ld
# 2.47's one-function sections (v3.sframe: x86-64 SFrame v3, at 0x10001038;
# v2.sframe: the same from 2.44, SFrame v2; be.sframe: big-endian AArch64 v3),
# then copies with one header field too large: sfh_num_fdes 2, sfh_fre_len
# one byte more (17), sfh_freoff one byte later (0x11), sfh_auxhdr_len 0x40.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/guard-read.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/guard-read" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# program's standard error (an assertion's message names the build's path);
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
echo "v3.sframe:"
run "$tmp/guard-read" "$here/v3.sframe" 0x10001038 0x10000001
for f in v2 be v3-num-fdes-2 v2-num-fdes-2 be-num-fdes-2 v3-fre-len-17 v3-freoff-0x11 v3-auxhdr-0x40; do
	echo "$f.sframe:"
	run "$tmp/guard-read" "$here/$f.sframe"
done
