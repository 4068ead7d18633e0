#!/usr/bin/env bash
# build-walk.sh GLIBC-DIR OUT: builds finding 018's driver walk.c (taken
# from the write-up, where it is checked) against glibc's SFrame files in
# GLIBC-DIR (sysdeps/generic/sframe-read.c, sframe.c and their headers)
# into OUT, with sfconform's three shim headers. Findings 019 and 026 use
# the same driver. WALK_INCLUDE, when set, is a directory searched for
# headers before glibc's.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
shim=$(cd "$here/../../../../consumer/glibc/shim" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# extract PAGE NAME: the fenced block after "<!-- check-lib: file NAME -->".
extract() {
	awk -v m="<!-- check-lib: file $2 -->" '$0 == m { f = 1; next } f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit } f == 2' "$1"
}
extract "$here/../../018-glibc-callers-at-ra.md" walk.c >"$tmp/walk.c"
[[ -s $tmp/walk.c ]] || { echo "build-walk.sh: no walk.c in 018's page" >&2; exit 2; }
gcc -O2 -Wall -include "$shim/prelude.h" -I "$shim" ${WALK_INCLUDE:+-I "$WALK_INCLUDE"} -I "$1/sysdeps/unix/sysv/linux/x86_64" -I "$1/sysdeps/generic" \
	"$tmp/walk.c" "$1/sysdeps/generic/sframe-read.c" "$1/sysdeps/generic/sframe.c" -o "$2"
