#!/usr/bin/env bash
# replay.sh GLIBC-DIR: finding 018 against glibc's SFrame stack tracer,
# the files of GLIBC-DIR. Builds 018's walk.c (build-walk.sh) and ra.s
# (from the write-up: a's last instruction calls b, which follows a; GNU as
# and ld 2.44, SFrame v2) and walks the program stopped at b's first
# instruction: one frame per call, then the whole trace in one call, as
# backtrace() takes it.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=${SFCONFORM_CACHE:-/var/cache/sfconform}
B=$C/toolchains/binutils-2.44/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/build-walk.sh" "$1" "$tmp/walk"
awk '$0 == "<!-- check-lib: file ra.s -->" { f = 1; next } f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit } f == 2' \
	"$here/../../018-glibc-callers-at-ra.md" >"$tmp/ra.s"
"$B/x86_64-linux-gnu-as" --gsframe -o "$tmp/ra.o" "$tmp/ra.s"
"$B/x86_64-linux-gnu-ld" -Ttext=0x10000000 -o "$tmp/ra" "$tmp/ra.o"
"$tmp/walk" "$tmp/ra" 0x10000015 0x70000000 0 0x10000015 0 0x1000000d 0x10000007
