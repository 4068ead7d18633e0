#!/usr/bin/env bash
# replay.sh BUILDS: finding 014 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, binutils/objdump, binutils/readelf).
# cfa-below-fp.s sets the CFA to %rbp-16 at 0x5; prints that row as
# .eh_frame has it (readelf --debug-dump=frames-interp) and as objdump and
# readelf --sframe print it.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
"$b/gas/as-new" --gsframe -o "$tmp/a.o" "$here/cfa-below-fp.s" || exit 2
"$b/binutils/readelf" --debug-dump=frames-interp "$tmp/a.o" | grep '^0000000000000005' | sed 's/ *$//'
"$b/binutils/objdump" --sframe "$tmp/a.o" | grep '^    0000000000000005' | sed 's/ *$//'
"$b/binutils/readelf" --sframe=.sframe "$tmp/a.o" | grep '^    0000000000000005' | sed 's/ *$//'
