#!/usr/bin/env bash
# replay.sh BUILDS: finding 038 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, ld/ld-new, binutils/readelf). p.s
# has one exported function f that calls g through the PLT (PLT0 at
# 0x1000, g's entry at 0x1010); ld -shared links it without and with
# --gc-sections, and the SFrame FDEs of both outputs are printed.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
"$b/gas/as-new" --gsframe -o "$tmp/p.o" "$here/p.s" || exit 2
"$b/ld/ld-new" -shared -o "$tmp/p.so" "$tmp/p.o" || exit 2
"$b/ld/ld-new" -shared --gc-sections -o "$tmp/p-gc.so" "$tmp/p.o" || exit 2
echo "ld -shared:"
"$b/binutils/readelf" --sframe "$tmp/p.so" | grep 'func idx'
echo "ld -shared --gc-sections:"
"$b/binutils/readelf" --sframe "$tmp/p-gc.so" | grep 'func idx'
