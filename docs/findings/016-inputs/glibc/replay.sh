#!/usr/bin/env bash
# replay.sh GLIBC-DIR: finding 016 against glibc's SFrame stack tracer, the
# files of GLIBC-DIR. Builds 018's walk.c (018-inputs/glibc/build-walk.sh),
# assembles far.s with GNU as 2.44 (SFrame v2) and links it with ld 2.44:
# f at 0x10000000 (an FDE), far at 0x110000000, 4 GiB above it (no CFI, no
# FDE), the section at 0x10001030. The program is stopped in far
# (0x110000001) with FP 0x70000000; the stack holds a saved FP of 0 and the
# address 0x10000003 (past f, in no function). Prints the walk one frame
# per call, then the whole trace.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=${SFCONFORM_CACHE:-/var/cache/sfconform}
B=$C/toolchains/binutils-2.44/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/../../018-inputs/glibc/build-walk.sh" "$1" "$tmp/walk"
"$B/x86_64-linux-gnu-as" --gsframe -o "$tmp/far.o" "$here/far.s"
"$B/x86_64-linux-gnu-ld" -Ttext=0x10000000 --section-start=.far=0x110000000 -e f -o "$tmp/far" "$tmp/far.o"
"$tmp/walk" "$tmp/far" 0x110000001 0x70000000 0x70000000 0 0x10000003
