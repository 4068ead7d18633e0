#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 035 against one libsframe.
# Compiles guard-read.c (public API only) against the library and decodes
# GNU as and ld 2.47's one-function x86-64 section (v3.sframe, at
# 0x10001038; f is 0x10000000..0x10000003), copies whose function has FRE
# type 3 (t3.sframe) or 15 (t15.sframe), 2.44's SFrame v2 section (v2.sframe,
# f found at 0x1000001c by libsframe 2.47, finding 021) and its type-3 copy,
# and the big-endian AArch64 v3 section (be.sframe) and its type-3 copy.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/guard-read.c" "$1" -Wl,--wrap=malloc,--wrap=free,--wrap=realloc -o "$tmp/guard-read" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# program's standard error (an assertion's message names the build's path);
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in v3 t3 t15; do
	echo "$f.sframe:"
	run "$tmp/guard-read" "$here/$f.sframe" 0x10001038 0x10000003 0x10000001
done
for f in v2 v2t3; do
	echo "$f.sframe:"
	run "$tmp/guard-read" "$here/$f.sframe" 0x10001038 0x1000001d
done
for f in be bet3; do
	echo "$f.sframe:"
	run "$tmp/guard-read" "$here/$f.sframe"
done
