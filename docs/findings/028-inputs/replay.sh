#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 028 against one libsframe.
# Compiles fre-regs.c and probe.s (public API only; probe.s calls
# sframe_find_fre and reports every callee-saved register it did not
# preserve) against the library and looks f+0 up in pushes.sframe (GNU as
# and ld 2.47, SFrame v3, x86-64, at 0x10001068), in w3f.sframe (FRE 0's
# info byte 0x3f: 15 data words of 2 bytes, 30 bytes) and in x.sframe (FRE 0
# info 0x5f, 15 words of 4 bytes, 60 bytes, and byte 75 equal to it).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/fre-regs.c" "$here/probe.s" "$1" -o "$tmp/fre-regs" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# program's standard error (an assertion's message names the build's path);
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in pushes w3f x; do
	echo "$f.sframe:"
	run "$tmp/fre-regs" "$here/$f.sframe" 0x10001068 0x10000000
done
