#!/usr/bin/env bash
# replay.sh BUILDS: finding 037 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, ld/ld-new, binutils/readelf). f.s
# calls g through the PLT and loads its address from the GOT, so that
# ld -shared makes one .plt.got entry (at 0x1010); prints that entry's
# SFrame row and the CFA rule of ld's .eh_frame for it (the CIE's).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
"$b/gas/as-new" --gsframe -o "$tmp/f.o" "$here/f.s" || exit 2
"$b/ld/ld-new" -shared -o "$tmp/f.so" "$tmp/f.o" || exit 2
"$b/binutils/readelf" --sframe "$tmp/f.so" | grep -A2 'pc = 0x1010' | sed 's/ *$//'
"$b/binutils/readelf" --debug-dump=frames "$tmp/f.so" | grep -m1 'DW_CFA_def_cfa:'
