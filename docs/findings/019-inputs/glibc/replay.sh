#!/usr/bin/env bash
# replay.sh GLIBC-DIR: finding 019 (the outermost, RA-undefined row)
# against glibc's SFrame stack tracer, the files of GLIBC-DIR. Builds 018's
# walk.c (018-inputs/glibc/build-walk.sh) and 019's out.s (from the
# write-up: _start marks its RA undefined; GNU as and ld 2.44, SFrame v2),
# writes _start's only FRE as an FRE without data words (as the write-up
# does: gas 2.44 ignores .cfi_undefined %rip) and walks the program
# stopped in f: one frame per call, then the whole trace in one call, as
# backtrace() takes it.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=${SFCONFORM_CACHE:-/var/cache/sfconform}
B=$C/toolchains/binutils-2.44/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/../../018-inputs/glibc/build-walk.sh" "$1" "$tmp/walk"
awk '$0 == "<!-- check-lib: file out.s -->" { f = 1; next } f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit } f == 2' \
	"$here/../../019-glibc-lr-and-outermost.md" >"$tmp/out.s"
"$B/x86_64-linux-gnu-as" --gsframe -o "$tmp/out.o" "$tmp/out.s"
"$B/x86_64-linux-gnu-ld" -Ttext=0x10000000 -o "$tmp/out" "$tmp/out.o"
# _start's FRE is the section's last: its info byte 0, its data word gone
# (the FRE sub-section one byte shorter: sfh_fre_len, at byte 16).
read -r off size < <("$B/x86_64-linux-gnu-readelf" -SW "$tmp/out" | sed -n 's/.*\] \.sframe *[A-Z_]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\) .*/\1 \2/p')
printf '\000' | dd of="$tmp/out" bs=1 seek=$((0x$off + 0x$size - 2)) conv=notrunc status=none
len=$(od -An -tu4 -j $((0x$off + 16)) -N4 "$tmp/out")
perl -e "print pack('V', $len - 1)" | dd of="$tmp/out" bs=1 seek=$((0x$off + 16)) conv=notrunc status=none
"$tmp/walk" "$tmp/out" 0x10000004 0x70000000 0x70000000 0 0x1000000b 0x10000014 1
