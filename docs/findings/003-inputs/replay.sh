#!/usr/bin/env bash
# replay.sh BUILDS: finding 003 (the shifted immediate) against the binutils
# build tree BUILDS/aarch64-linux-gnu (gas/as-new, binutils/objdump,
# binutils/readelf). sub-lsl12.s moves SP by `sub sp, sp, #0x8, lsl #12`
# (32768 bytes) and back; assembles it with --scfi=experimental --gsframe,
# little- and big-endian, and prints the .eh_frame and .sframe rows.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/aarch64-linux-gnu
for e in -EL -EB; do
	echo "$e:"
	"$b/gas/as-new" $e --scfi=experimental --gsframe -o "$tmp/a.o" "$here/sub-lsl12.s" || exit 2
	"$b/binutils/readelf" --debug-dump=frames-interp "$tmp/a.o" | sed -n '/LOC/,$p' | sed 's/ *$//'
	"$b/binutils/objdump" --sframe "$tmp/a.o" | sed -n '/STARTPC/,$p' | sed 's/ *$//'
done
