#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 021 against one libsframe.
# Compiles find-fre.c (public API only) against the library and looks PCs
# up in two.sframe, an SFrame v2 section without SFRAME_F_FDE_FUNC_START_PCREL
# as GNU as and ld 2.44 wrote it: f at 0x10000000 (3 bytes), g at 0x10000003
# (9 bytes); the section was at 0x10001050. 0x1000001d and 0x10000037 are in
# no function.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/find-fre.c" "$1" -o "$tmp/find-fre" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# program's standard error (an assertion's message names the build's path);
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
run "$tmp/find-fre" "$here/two.sframe" 0x10001050 0x10000000 0x10000001 0x10000003 0x10000007 0x1000001c 0x1000001d 0x10000033 0x10000037
