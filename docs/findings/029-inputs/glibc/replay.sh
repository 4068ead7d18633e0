#!/usr/bin/env bash
# replay.sh GLIBC-DIR: finding 029 against glibc's SFrame reader, the files
# of GLIBC-DIR (sysdeps/generic/sframe-read.c and its headers). Compiles
# find-fre.c with glibc's sframe-read.c and sfconform's shim prelude, and
# looks PCs up in rep4.sframe (x86-64, SFrame v2 from GNU as 2.44: one
# function at 0x10000000..0x10000002 made PCMASK with repetition size 4)
# and rep0.sframe (the same with repetition size 0). The section was at
# 0x10001038.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shim=$(cd "$here/../../../../consumer/glibc/shim" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -include "$shim/prelude.h" -I "$shim" -I "$1/sysdeps/unix/sysv/linux/x86_64" -I "$1/sysdeps/generic" \
	"$here/find-fre.c" "$1/sysdeps/generic/sframe-read.c" -o "$tmp/find-fre" || exit 2
# The shell's own report of a killed child goes to /dev/null with the
# function's standard error; exit status 136 is 128 + SIGFPE.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
for f in rep4 rep0; do
	echo "$f.sframe:"
	run "$tmp/find-fre" "$here/$f.sframe" 0x10001038 0x10000000 0x10000001 0x10000002
done
