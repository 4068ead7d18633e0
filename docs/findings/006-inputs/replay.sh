#!/usr/bin/env bash
# replay.sh BUILDS: finding 006 against the binutils build trees in BUILDS
# (BUILDS/x86_64-linux-gnu, BUILDS/aarch64-linux-gnu, BUILDS/s390x-linux-gnu:
# gas/as-new and binutils/objdump). Assembles start-*.s (_start with
# .cfi_startproc simple and .cfi_undefined of the RA, nothing else) with
# --gsframe and prints the assembler's exit status and messages (its own
# path and the source path in an internal error shown as names) and the
# function's SFrame rows.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in x86-64:x86_64-linux-gnu aarch64:aarch64-linux-gnu s390x:s390x-linux-gnu; do
	b=$1/${t#*:}
	echo "${t%%:*}:"
	(cd "$here" && "$b/gas/as-new" --gsframe -o "$tmp/s.o" "start-${t%%:*}.s" 2>&1; echo "as exit status $?") |
		sed -E 's|at [^ ]*/gas/gen-sframe.c:[0-9]+|at gas/gen-sframe.c:LINE|'
	[ -f "$tmp/s.o" ] && "$b/binutils/objdump" --sframe "$tmp/s.o" | sed -n '/Num FDEs/p;/func idx/,$p' | sed 's/ *$//'
	rm -f "$tmp/s.o"
done
