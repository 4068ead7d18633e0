#!/usr/bin/env bash
# replay.sh BUILDS: finding 005 against the binutils build trees in BUILDS
# (BUILDS/x86_64-linux-gnu, BUILDS/aarch64-linux-gnu, BUILDS/s390x-linux-gnu: built
# trees, gas/as-new and binutils/objdump). Assembles cold-x86-64.s,
# cold-aarch64.s and cold-s390x.s (a function and its cold part, entered with the
# frame live, restoring the FP, and on AArch64 and s390x the RA, in its epilogue)
# with --gsframe and prints the cold part's SFrame rows.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in x86-64:x86_64-linux-gnu aarch64:aarch64-linux-gnu s390x:s390x-linux-gnu; do
	b=$1/${t#*:}
	echo "${t%%:*}:"
	"$b/gas/as-new" --gsframe -o "$tmp/cold.o" "$here/cold-${t%%:*}.s" || exit 2
	"$b/binutils/objdump" --sframe "$tmp/cold.o" | sed -n '/func idx \[1\]/,$p' | sed 's/ *$//'
done
