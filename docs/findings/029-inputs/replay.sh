#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 029 against one libsframe.
# Compiles find-fre.c (public API only) against the library and looks PCs
# up in rep16.sframe (PCMASK function, repetition size 16) and rep0.sframe
# (the same with repetition size 0). The section was at 0x10001038; the
# function is 0x10000000..0x10000003.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/find-fre.c" "$1" -o "$tmp/find-fre" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# function's standard error; exit status 136 is 128 + SIGFPE.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in rep16 rep0; do
	echo "$f.sframe:"
	run "$tmp/find-fre" "$here/$f.sframe" 0x10001038 0x10000003 0x10000001 0x10000002
done
