#!/usr/bin/env bash
# replay.sh BUILDS: finding 002 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, binutils/readelf, binutils/objdump).
# mov-to-rsp.s saves %rsp in %r11, moves SP, and restores it from %r11
# before its ret; assembles it with --scfi=experimental --gsframe and prints
# the .eh_frame and .sframe rows.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
"$b/gas/as-new" --scfi=experimental --gsframe -o "$tmp/a.o" "$here/mov-to-rsp.s" || exit 2
"$b/binutils/readelf" --debug-dump=frames-interp "$tmp/a.o" | sed -n '/FDE/,$p' | tail -n +2 | sed 's/ *$//'
"$b/binutils/objdump" --sframe "$tmp/a.o" | sed -n '/STARTPC/,$p' | sed 's/ *$//'
