#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 070 against one libsframe.
# Compiles fre-walk.c (public API only; the section and libsframe's malloc'd
# blocks end where an inaccessible page begins, so a read past one faults
# and is reported) against the library and walks the FREs of function 0
# of GNU as and ld 2.47's one-function section (SFrame v3, x86-64, at
# 0x10001038, function at 0x10000000, 3 FREs in a 16-byte FRE sub-section)
# with its FRE count raised to 4 (v3-num-fres-4.sframe), and of the same
# from 2.44 (SFrame v2, 11 bytes of FREs) likewise (v2-num-fres-4.sframe).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/fre-walk.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/fre-walk" || exit 2
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for c in v3-num-fres-4:0x10000001 v3-num-fres-4:0x10000002 v2-num-fres-4:0x10000002; do
	echo "${c%:*}.sframe, pc ${c#*:}:"
	run "$tmp/fre-walk" "$here/${c%:*}.sframe" 0x10001038 "${c#*:}"
done
