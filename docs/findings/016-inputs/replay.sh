#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 016 against one libsframe.
# Compiles find-fre.c (public API only) against the library and looks PCs
# up in far.sframe: f at 0x10000000 (3 bytes) and g at 0x110000000 (9
# bytes), 4 GiB apart; the section was at 0x10001000. 0x210000001 is
# f + 1 + 8 GiB, in no function.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/find-fre.c" "$1" -o "$tmp/find-fre" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# program's standard error (an assertion's message names the build's path);
# exit status 128 + N is death by signal N.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
run "$tmp/find-fre" "$here/far.sframe" 0x10001000 0x10000001 0x110000001 0x110000004 0x210000001 0x110000009
