#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 036 against one libsframe.
# Compiles guard-decode.c (public API only; libsframe's malloc'd blocks
# are followed by a write-protected page, so a write past one faults and
# is reported) against the library, and decodes: be.sframe (a big-endian
# AArch64 SFrame v3 section as GNU as and ld 2.47 wrote it, which must
# still decode), freoff-0x21.sframe and freoff-0x40.sframe (the same with
# sfh_freoff 1 and 32 bytes past the end), flip.sframe (the fuzzer's v2
# section: its third function's FREs begin past the end).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/guard-decode.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/guard-decode" || exit 2
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in be freoff-0x21 freoff-0x40 flip; do
	echo "$f.sframe:"
	run "$tmp/guard-decode" "$here/$f.sframe"
done
