#!/usr/bin/env bash
# Verify the proposed patches (docs/findings/NNN-*.patch): `make verify-fixes`.
#
# For each patch (or the findings named as arguments):
#   1. build the component the patch touches (today: libsframe, the
#      directory its paths start with) twice from the cached source tree of
#      `make binutils-src` ($SFCONFORM_CACHE/sources/binutils-VER): as it is,
#      and with the patch applied to a copy. Only that library is built
#      (its own configure, static), nothing else of binutils.
#   2. replay the finding: docs/findings/NNN-inputs/replay.sh LIBDIR INCDIR
#      (the attachable input and its stand-alone driver) against both
#      builds; the output must be expected-unfixed.txt without the patch and
#      expected-fixed.txt with it.
#   3. replay the finding's stored cases (docs/findings/NNN-inputs/stored-cases:
#      difffuzz reproducers) with the libsframe consumer built against each
#      build (libsframe:DIR): they must still fail without the patch and no
#      longer with it.
#   4. run a slice of the component's matrix cells (sfconform run: the
#      builtin producers and gas-src on every target, libsframe:DIR as the
#      consumer) against both builds: the patched library must give the
#      same verdicts as the unpatched one, cell by cell.
# A glibc patch (its paths start with sysdeps/) is verified by its finding's
# reproduction instead (docs/findings/check-lib.sh NNN), which builds
# glibc's files as they are and patched and prints both results.
# Exit status 0 when every patch verifies; the log names what did not.
#
# Usage: ci/verify-fixes.sh [NNN...]
# Environment: SFCONFORM_CACHE, VERIFY_PROGRAMS (programs per matrix cell,
# default 40), VERIFY_SEED (default 1), VERIFY_PRODUCERS (the slice's producers,
# default builtin-v2,builtin-v3,gas-src).
set -euo pipefail
shopt -s inherit_errexit

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
PROGRAMS=${VERIFY_PROGRAMS:-40}
PRODUCERS=${VERIFY_PRODUCERS:-builtin-v2,builtin-v3,gas-src}
SEED=${VERIFY_SEED:-1}
FINDINGS="$REPO/docs/findings"

log() { printf 'verify-fixes: %s\n' "$*" >&2; }
die() {
	printf 'verify-fixes: error: %s\n' "$*" >&2
	exit 1
}

stamp="$CACHE/stamps/binutils-src"
[[ -f $stamp ]] || die "no binutils source tree: run 'make binutils-src' first (ci/binutils-src.sh)"
VER=$(sed -n 's/^version=//p' "$stamp")
SRC="$CACHE/sources/binutils-$VER"
[[ -f $SRC/libsframe/sframe.c ]] || die "$SRC is not a binutils source tree: run 'make binutils-src'"

WORK="$CACHE/verify-fixes"
mkdir -p "$WORK"
SFC="$WORK/sfconform"
(cd "$REPO" && go build -o "$SFC" ./cmd/sfconform) || die "cannot build sfconform"

# build_libsframe TREE OUT: configure and build TREE's libsframe alone,
# static, into OUT (OUT/.libs/libsframe.a; OUT/Makefile names TREE as srcdir).
build_libsframe() {
	local tree=$1 out=$2
	if [[ -f $out/.libs/libsframe.a && $out/.libs/libsframe.a -nt $tree/libsframe/sframe.c ]]; then
		return
	fi
	rm -rf "$out"
	mkdir -p "$out"
	(cd "$out" && nice -n 19 "$tree/libsframe/configure" --disable-shared --enable-static MAKEINFO=true >configure.log 2>&1) ||
		die "configuring $tree/libsframe failed (log $out/configure.log)"
	(cd "$out" && nice -n 19 make -j2 MAKEINFO=true libsframe.la >make.log 2>&1) ||
		die "building $tree/libsframe failed: $(grep -m3 -E 'error' "$out/make.log") (log $out/make.log)"
}

# patched_tree NNN PATCH: a copy of the source tree (hard links, the files
# the patch touches copied) with PATCH applied, printed.
patched_tree() {
	local n=$1 patch=$2 tree="$WORK/$1/src" f
	rm -rf "$tree"
	mkdir -p "$WORK/$n"
	cp -al "$SRC" "$tree"
	while read -r f; do
		cp --remove-destination "$SRC/$f" "$tree/$f"
	done < <(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patch")
	patch -d "$tree" -p1 --quiet --no-backup-if-mismatch <"$patch" >&2 || die "$patch does not apply to binutils $VER"
	echo "$tree"
}

# verdicts CONSUMER: the matrix slice's verdict counts per cell, one line
# each, without the consumer's name and version (they differ by design).
verdicts() {
	local consumer=$1 out
	out=$("$SFC" run -q -json --no-minimize --out "$WORK/failures" --producer "$PRODUCERS" \
		--consumer "$consumer" --targets all --programs "$PROGRAMS" --seed "$SEED" 2>"$WORK/run.err") || true
	[[ -n $out ]] || die "sfconform run with $consumer printed nothing: $(tail -n3 "$WORK/run.err")"
	python3 -c '
import json, sys
s = json.load(sys.stdin)
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("consumer", "version", "duration", "elapsed", "seconds", "consumer_version", "hello", "failures", "reproducers")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
cells = s.get("cells", s) if isinstance(s, dict) else s
for c in cells if isinstance(cells, list) else [cells]:
    print(json.dumps(strip(c), sort_keys=True))
' <<<"$out"
}

fail=0
verify() {
	local patch=$1 base n inputs comp tree
	base=$(basename "$patch" .patch)
	n=${base%%-*}
	inputs="$FINDINGS/$n-inputs"
	comp=$(sed -n 's|^+++ b/\([^/]*\)/.*|\1|p' "$patch" | sort -u)
	if [[ $comp == sysdeps ]]; then
		# A glibc patch: the finding's own reproduction builds glibc's files
		# as they are and patched, and check-lib compares both outputs with
		# the write-up.
		log "$base: a glibc patch: running its finding's reproduction (check-lib.sh $n), unpatched and patched"
		if bash "$FINDINGS/check-lib.sh" "$n" >&2; then
			log "$base: verified: without the patch as the finding says, fixed with it"
		else
			log "$base: the reproduction does not print what the finding says"
			fail=1
		fi
		return
	fi
	[[ $comp == libsframe ]] || {
		log "$base: touches '$comp': only libsframe patches are verified so far"
		fail=1
		return
	}
	log "$base: building libsframe of binutils $VER, as it is and patched"
	local t0=$SECONDS
	build_libsframe "$SRC" "$WORK/unpatched-libsframe"
	tree=$(patched_tree "$n" "$patch")
	build_libsframe "$tree" "$WORK/$n/libsframe"
	log "$base: built in $((SECONDS - t0))s"
	local un="$WORK/unpatched-libsframe" fx="$WORK/$n/libsframe"

	# 2. The finding's own input and driver.
	if [[ -x $inputs/replay.sh ]]; then
		local got
		got=$("$inputs/replay.sh" "$un/.libs/libsframe.a" "$SRC/include" 2>&1 || true)
		if [[ $got == "$(cat "$inputs/expected-unfixed.txt")" ]]; then
			log "$base: replay without the patch: fails as the finding says"
		else
			log "$base: replay without the patch does not print expected-unfixed.txt:"
			diff <(echo "$got") "$inputs/expected-unfixed.txt" >&2 || true
			fail=1
		fi
		got=$("$inputs/replay.sh" "$fx/.libs/libsframe.a" "$tree/include" 2>&1 || true)
		if [[ $got == "$(cat "$inputs/expected-fixed.txt")" ]]; then
			log "$base: replay with the patch: fixed"
		else
			log "$base: replay with the patch does not print expected-fixed.txt:"
			diff <(echo "$got") "$inputs/expected-fixed.txt" >&2 || true
			fail=1
		fi
	fi

	# 3. Stored cases: the difffuzz reproducers of the finding.
	if [[ -f $inputs/stored-cases ]]; then
		local c out
		while read -r c; do
			[[ -n $c && $c != \#* ]] || continue
			out=$(cd "$REPO" && SFCONFORM_DIFFFUZZ_LIBSFRAME="libsframe:$un" SFCONFORM_REPRO="$c" go test -count=1 -run TestRepros ./difffuzz 2>&1) || {
				log "$base: stored case $c does not fail without the patch:"
				echo "$out" | tail -n 15 >&2
				fail=1
			}
			if out=$(cd "$REPO" && SFCONFORM_DIFFFUZZ_LIBSFRAME="libsframe:$fx" SFCONFORM_REPRO="$c" go test -count=1 -run TestRepros ./difffuzz 2>&1); then
				log "$base: stored case $c still fails with the patch"
				fail=1
			elif grep -q 'now no such disagreement' <<<"$out"; then
				log "$base: stored case $c: fails without the patch, fixed with it"
			else
				log "$base: stored case $c with the patch: not the expected outcome:"
				echo "$out" | tail -n 15 >&2
				fail=1
			fi
		done <"$inputs/stored-cases"
	fi

	# 4. A slice of libsframe's matrix cells: the same verdicts.
	log "$base: matrix slice ($PRODUCERS x every target, $PROGRAMS programs a cell, seed $SEED), unpatched and patched"
	local a b
	a=$(verdicts "libsframe:$un")
	b=$(verdicts "libsframe:$fx")
	if [[ $a == "$b" ]]; then
		log "$base: matrix slice: $(wc -l <<<"$a") cells, the same verdicts with and without the patch"
	else
		log "$base: matrix slice: the patch changes verdicts:"
		diff <(echo "$a") <(echo "$b") >&2 || true
		fail=1
	fi
}

patches=()
if (($# > 0)); then
	for n in "$@"; do
		patches+=("$FINDINGS/$n"-*.patch)
	done
else
	patches=("$FINDINGS"/[0-9][0-9][0-9]-*.patch)
fi
for p in "${patches[@]}"; do
	[[ -f $p ]] || die "no patch $p"
	verify "$p"
done
if ((fail)); then
	log "FAILED"
	exit 1
fi
log "every patch verified (${#patches[@]})"
