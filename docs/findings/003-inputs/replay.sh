#!/usr/bin/env bash
# replay.sh BUILDS: finding 003 against the binutils build tree
# BUILDS/aarch64-linux-gnu (gas/as-new, binutils/objdump,
# binutils/readelf). sub-lsl12.s moves SP by `sub sp, sp, #0x8, lsl #12`
# (32768 bytes) and back; frame-record.s sets up a frame record at the top
# of its frame (`stp x29, x30, [sp, #16]; add x29, sp, #16`) and leaves
# through `sub sp, x29, #16`. Assembles each with --scfi=experimental
# --gsframe and prints the .eh_frame and .sframe rows: sub-lsl12.s little-
# and big-endian, frame-record.s little-endian.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/aarch64-linux-gnu
for c in sub-lsl12:-EL sub-lsl12:-EB frame-record:-EL; do
	echo "${c%:*}.s ${c#*:}:"
	"$b/gas/as-new" "${c#*:}" --scfi=experimental --gsframe -o "$tmp/a.o" "$here/${c%:*}.s" 2>&1 | sed 's|^.*/||' || exit 2
	"$b/binutils/readelf" --debug-dump=frames-interp "$tmp/a.o" | sed -n '/LOC/,$p' | sed -e '/FDE cie=/d' -e 's/ *$//'
	"$b/binutils/objdump" --sframe "$tmp/a.o" | sed -n '/STARTPC/,$p' | sed 's/ *$//'
done
