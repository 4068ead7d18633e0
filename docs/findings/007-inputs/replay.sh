#!/usr/bin/env bash
# replay.sh BUILDS: finding 007 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, binutils/readelf, binutils/objdump).
# ra-undefined-x86-64.s makes the RA undefined, restores it, makes it
# undefined again and puts it back at CFA-8; prints the rows of .eh_frame
# and of .sframe.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
"$b/gas/as-new" --gsframe -o "$tmp/a.o" "$here/ra-undefined-x86-64.s" || exit 2
"$b/binutils/readelf" --debug-dump=frames-interp "$tmp/a.o" | sed -n '/FDE/,$p' | sed 's/ *$//'
"$b/binutils/objdump" --sframe "$tmp/a.o" | sed -n '/STARTPC/,$p' | sed 's/ *$//'
