#!/usr/bin/env bash
# check-gcc.sh [NNN...]: reproduce the gcc findings (NNN-inputs/gcc/: the
# reduced C, run.sh with the exact commands, expected.txt) with the newest
# gcc Debian offers (`make gcc-newest`, ci/gcc-newest.sh: sid's gcc-N for
# x86-64 and s390x, to assembly only) and binutils 2.47-6 built from source
# (`make binutils-src`). `make check-gcc-findings` runs it; it is not part
# of `make test` (both are separate provisioning steps).
#
# Each run.sh GCC-BIN BINUTILS-BIN must print its expected.txt: the gcc
# version line first, then the CFI and the SFrame rows the finding shows.
# Exit status 0 when every finding reproduces; a difference is printed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
die() {
	printf 'check-gcc: error: %s\n' "$*" >&2
	exit 1
}
stamp_dir() {
	[[ -f $CACHE/stamps/$1 ]] || die "no $1: run 'make $1' first ($2)"
	sed -n 's/^dir=//p' "$CACHE/stamps/$1"
}
gcc_bin=$(stamp_dir gcc-newest ci/gcc-newest.sh)/bin
stamp_dir binutils-src ci/binutils-src.sh >/dev/null
# binutils-src's stamp names the source tree; its tools lie in the toolchain.
bu_bin="$CACHE/toolchains/binutils-src-$(sed -n 's/^version=//p' "$CACHE/stamps/binutils-src")/bin"
[[ -d $bu_bin ]] || die "$bu_bin is missing: run 'make binutils-src'"
dirs=()
if (($# > 0)); then
	for n in "$@"; do dirs+=("$here/$n-inputs/gcc"); done
else
	dirs=("$here"/[0-9][0-9][0-9]-inputs/gcc)
fi
fail=0
for d in "${dirs[@]}"; do
	n=$(basename "$(dirname "$d")")
	n=${n%%-*}
	[[ -x $d/run.sh && -f $d/expected.txt ]] || die "$d has no run.sh or expected.txt"
	got=$("$d/run.sh" "$gcc_bin" "$bu_bin" 2>&1) || true
	if [[ $got == "$(cat "$d/expected.txt")" ]]; then
		printf 'check-gcc: %s: reproduced with %s\n' "$n" "$(head -n1 <<<"$got")"
	else
		printf 'check-gcc: %s: run.sh does not print expected.txt:\n' "$n"
		diff <(echo "$got") "$d/expected.txt" || true
		fail=1
	fi
done
exit "$fail"
