#!/usr/bin/env bash
# replay.sh BUILDS: finding 032 against the binutils build tree
# BUILDS/x86_64-linux-gnu (gas/as-new, ld/ld-new, binutils/readelf and
# objdump). a.s and b.s (a.s with its function renamed) are linked into an
# executable, p.s and a.s into a shared object (with ld's PLT .sframe),
# and a.s and b.s relocatably; for each output: the size of .sframe (its
# section header) and of PT_GNU_SFRAME, and the FDEs objdump reads.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
b=$1/x86_64-linux-gnu
cd "$tmp" || exit 2
sed -E 's/\bfa\b/fb/g' "$here/a.s" >b.s
"$b/gas/as-new" --gsframe -o a.o "$here/a.s" || exit 2
"$b/gas/as-new" --gsframe -o b.o b.s || exit 2
"$b/gas/as-new" --gsframe -o p.o "$here/p.s" || exit 2
"$b/ld/ld-new" -z noexecstack -e fa -o prog a.o b.o || exit 2
"$b/ld/ld-new" -z noexecstack -shared -o p.so p.o a.o || exit 2
"$b/ld/ld-new" -r -o r.o a.o b.o || exit 2
for f in prog p.so r.o; do
	echo "$f:"
	"$b/binutils/readelf" -SW "$f" | sed 's/\[ */[/' | awk '$2 == ".sframe" { print "  .sframe size 0x" $6 }'
	"$b/binutils/readelf" -lW "$f" 2>/dev/null | awk '$1 == "GNU_SFRAME" { print "  PT_GNU_SFRAME file size", $5, "memory size", $6 }'
	"$b/binutils/objdump" --sframe "$f" | grep -E 'Num FDEs|func idx' | sed 's/^ */  /'
done
