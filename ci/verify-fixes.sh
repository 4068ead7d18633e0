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
#
# A patch that touches the programs (gas/, ld/, bfd/, binutils/, or
# libsframe/sframe-dump.c, the dump code objdump and readelf link) is
# verified on build trees instead:
#   1. the configured, built tree of `make binutils-src` for each target
#      triple the finding names (NNN-inputs/triples, default
#      x86_64-linux-gnu) is copied, its Makefiles pointed at a copy of the
#      source with the patch applied, and only the touched components are
#      rebuilt (make -C bfd, libsframe, gas as-new, ld ld-new, binutils
#      objdump readelf); the log gives the copy's and the build's CPU time.
#   2. replay.sh BUILDS (BUILDS holds one build tree per triple, named by
#      it): expected-unfixed.txt with the unpatched trees,
#      expected-fixed.txt with the patched ones.
#   3. the component's matrix slice: a patch to gas, ld or bfd runs the
#      builtin consumer on `--producer gas:TREE`, one to the dumpers runs
#      `--consumer objdump:TREE,readelf:TREE` on the slice's producers.
#      Cells may only improve: with the patch, no cell has more failed
#      programs, WRONG, ERROR or INVALID verdicts, or differing steps, and
#      the cells that change are listed.
#
# A patch to glibc (paths under sysdeps/: glibc's SFrame tracer, the files
# setup step 7 fetches from sid's glibc source package) is verified on
# copies of those files:
#   1. the glibc consumer (consumer/glibc/glibc.c, its shim and cprotocol)
#      is built by setup step 7's own lines (consumer/glibc/build.sh), twice,
#      into $WORK: from the files as they are and from a copy with the
#      patch applied (with NNN-inputs/glibc/host first on the include path
#      when it exists: stand-ins for arch headers of the patch the host
#      cannot compile).
#   2. replay the finding: NNN-inputs/glibc/replay.sh GLIBC-DIR (GLIBC-DIR
#      holds glibc's files, sysdeps/...; the script compiles its own
#      driver against them): expected-unfixed.txt with the files as they
#      are, expected-fixed.txt with the patched copy. A finding without
#      it is replayed by its page's reproduction (docs/findings/check-lib.sh
#      NNN), which builds glibc's files as they are and patched and
#      compares both results with the write-up.
#   3. glibc's matrix cells: builtin-v2 x the two built consumers (run as
#      exec:BINARY), x86-64 and AArch64 (the targets glibc reads); cells
#      may only improve, as for gas, and the cells that change are listed.
#      The unpatched consumer's verdicts must equal those of setup's own
#      consumer on the same cells, or the run fails (glibc_drift_guard).
# Exit status 0 when every patch verifies; the log names what did not.
#
# Usage: ci/verify-fixes.sh [NNN...]
# Environment: SFCONFORM_CACHE, VERIFY_PROGRAMS (programs per matrix cell,
# default 40), VERIFY_SEED (default 1), VERIFY_PRODUCERS (the slice's producers,
# default builtin-v2,builtin-v3,gas-src; glibc patches: builtin-v2).
set -euo pipefail
shopt -s inherit_errexit

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
PROGRAMS=${VERIFY_PROGRAMS:-40}
PRODUCERS=${VERIFY_PRODUCERS:-builtin-v2,builtin-v3,gas-src}
SEED=${VERIFY_SEED:-1}
TARGETS=all
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
# each, without the consumer's name and version and the layouts' reasons,
# which name the consumer (they differ by design).
verdicts() {
	local consumer=$1 out
	out=$("$SFC" run -q -json --no-minimize --out "$WORK/failures" --producer "$PRODUCERS" \
		--consumer "$consumer" --targets "$TARGETS" --programs "$PROGRAMS" --seed "$SEED" 2>"$WORK/run.err") || true
	[[ -n $out ]] || die "sfconform run with $consumer printed nothing: $(tail -n3 "$WORK/run.err")"
	python3 -c '
import json, sys
s = json.load(sys.stdin)
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("consumer", "version", "duration", "elapsed", "seconds", "instructions_per_second", "why", "consumer_version", "hello", "failures", "reproducers")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
cells = s.get("cells", s) if isinstance(s, dict) else s
for c in cells if isinstance(cells, list) else [cells]:
    print(json.dumps(strip(c), sort_keys=True))
' <<<"$out"
}

# unpatched_verdicts CONSUMER: verdicts CONSUMER (with the producers of
# $PRODUCERS) into UNPATCHED, computed once: they are kept in
# $WORK/unpatched-verdicts under a key made of everything they depend on
# (this sfconform and this script, the slice's parameters, the programs and libraries of
# the directories the consumer and producers name), so that later patches
# and runs reuse them. Called outside a command substitution.
UNPATCHED=
unpatched_verdicts() {
	local key file d
	key=$({
		sha256sum "$SFC" "${BASH_SOURCE[0]}"
		echo "$1 $PRODUCERS $TARGETS $PROGRAMS $SEED"
		for d in $(tr ',' '\n' <<<"$1,$PRODUCERS" | sed -n 's/^[a-z]*://p'); do
			find "$d" -type f \( -name libsframe.a -o -name as-new -o -name ld-new -o -name objdump -o -name readelf -o -name sfconform-glibc \) -print0 |
				sort -z | xargs -0r sha256sum
		done
	} | sha256sum | cut -c1-16)
	file="$WORK/unpatched-verdicts/$key"
	if [[ -s $file ]]; then
		log "unpatched verdicts for $1 ($PRODUCERS): kept from an earlier run ($file)"
	else
		mkdir -p "$WORK/unpatched-verdicts"
		# A name of this run's own: two runs may compute the same key.
		verdicts "$1" >"$file.$$.tmp"
		mv "$file.$$.tmp" "$file"
	fi
	UNPATCHED=$(cat "$file")
}

TREES="$CACHE/toolchains/binutils-src-$VER/build"

# patched_build NNN TREE TRIPLE COMPS: a copy of the unpatched build tree of
# TRIPLE at $WORK/NNN/build/TRIPLE whose Makefiles and libtool archives name
# the patched source TREE (and the copy) instead of the originals, with the
# components COMPS (touched top directories) rebuilt.
patched_build() {
	local n=$1 tree=$2 triple=$3 comps=$4 orig="$TREES/$3" out="$WORK/$1/build/$3" c
	[[ -x $orig/gas/as-new && -x $orig/binutils/objdump ]] || die "no build tree $orig: run 'make binutils-src'"
	rm -rf "$out"
	mkdir -p "$WORK/$n/build"
	/usr/bin/time -f "%U %S" -o "$WORK/$n/copy.time" cp -a "$orig" "$out"
	# config.status is left alone: touching it would re-run it and remake
	# every config.h, that is rebuild everything. The dependency files
	# (.deps/*.Po) are rewritten too: a source file #included by another
	# (gas/config/tc-aarch64-ginsn.c by tc-aarch64.c) is only found
	# changed through them.
	find "$out" \( -name Makefile -o -name '*.la' -o -name '*.lai' -o -name libtool -o -name '*.Po' -o -name '*.Plo' \) -type f -print0 |
		xargs -0 sed -i -e "s|$SRC|$tree|g" -e "s|$orig|$out|g"
	# Dependants first need what they link: bfd links libsframe; gas, ld,
	# objdump and readelf link both.
	local order=() make_log="$WORK/$n/make-$triple.log"
	for c in libsframe bfd opcodes; do
		[[ " $comps " == *" $c "* ]] && order+=("$c:all")
	done
	if [[ " $comps " == *" libsframe "* || " $comps " == *" bfd "* || " $comps " == *" gas "* ]]; then
		order+=("gas:as-new")
	fi
	if [[ " $comps " == *" libsframe "* || " $comps " == *" bfd "* || " $comps " == *" ld "* ]]; then
		order+=("ld:ld-new")
	fi
	if [[ " $comps " == *" libsframe "* || " $comps " == *" bfd "* || " $comps " == *" binutils "* ]]; then
		order+=("binutils:objdump readelf")
	fi
	: >"$make_log"
	local cpu=0 t
	for c in "${order[@]}"; do
		# shellcheck disable=SC2086 # the targets are words
		/usr/bin/time -f "%U %S" -o "$WORK/$n/make.time" nice -n 19 make -C "$out/${c%%:*}" -j2 MAKEINFO=true ${c#*:} >>"$make_log" 2>&1 ||
			die "building ${c%%:*} of the patched tree failed: $(grep -m3 -E 'error' "$make_log") (log $make_log)"
		t=$(awk '{ print $1 + $2 }' "$WORK/$n/make.time")
		cpu=$(awk -v a="$cpu" -v b="$t" 'BEGIN { print a + b }')
	done
	log "$(basename "$n"): $triple: copied the build tree in $(awk '{ print $1 + $2 }' "$WORK/$n/copy.time")s CPU, rebuilt ${order[*]%%:*} in ${cpu}s CPU (user+sys)"
}

# compare_cells A B: A and B are verdicts (one JSON cell a line, same
# order); B may only be better. Prints the cells that changed; exit status
# 1 when one got worse.
compare_cells() {
	python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in sys.argv[1].splitlines() if l.strip()]
b = [json.loads(l) for l in sys.argv[2].splitlines() if l.strip()]
if len(a) != len(b):
    print(f"{len(a)} cells without the patch, {len(b)} with it")
    sys.exit(1)
def bad(c):
    v = c.get("verdicts") or {}
    return {"failed programs": c.get("failed_programs", 0), "WRONG": v.get("WRONG", 0),
            "ERROR": v.get("ERROR", 0), "INVALID": v.get("INVALID", 0),
            "differing steps": (c.get("differs") or {}).get("steps", 0)}
worse = False
for x, y in zip(a, b):
    if x == y:
        continue
    name = "%s %s %s" % (x.get("target"), x.get("producer"), x.get("consumer", ""))
    bx, by = bad(x), bad(y)
    changes = ", ".join(f"{k} {bx[k]} -> {by[k]}" for k in bx if bx[k] != by[k]) or "other fields only"
    if any(by[k] > bx[k] for k in bx):
        worse = True
        print(f"WORSE {name}: {changes}")
    else:
        print(f"better {name}: {changes}")
sys.exit(1 if worse else 0)
PY
}

# replay_expect BASE INPUTS unfixed|fixed ARGS...: INPUTS/replay.sh ARGS
# must print INPUTS/expected-unfixed.txt (without the patch) or
# expected-fixed.txt (with it); logs the outcome and, when it differs, the
# difference. Exit status 1 when it differs.
replay_expect() {
	local base=$1 inputs=$2 which=$3 got
	shift 3
	got=$("$inputs/replay.sh" "$@" 2>&1 || true)
	if [[ $got == "$(cat "$inputs/expected-$which.txt")" ]]; then
		if [[ $which == unfixed ]]; then
			log "$base: replay without the patch: fails as the finding says"
		else
			log "$base: replay with the patch: fixed"
		fi
		return 0
	fi
	if [[ $which == unfixed ]]; then
		log "$base: replay without the patch does not print expected-unfixed.txt:"
	else
		log "$base: replay with the patch does not print expected-fixed.txt:"
	fi
	diff <(echo "$got") "$inputs/expected-$which.txt" >&2 || true
	return 1
}

# verify_programs PATCH: the build-tree verification (see the top).
verify_programs() {
	local patch=$1 base n inputs comps tree triples triple t0
	base=$(basename "$patch" .patch)
	n=${base%%-*}
	inputs="$FINDINGS/$n-inputs"
	comps=$(sed -n 's|^+++ b/\([^/]*\)/.*|\1|p' "$patch" | sort -u | tr '\n' ' ')
	triples=x86_64-linux-gnu
	[[ -f $inputs/triples ]] && triples=$(grep -v '^#' "$inputs/triples" | tr '\n' ' ')
	log "$base: touches ${comps% }: rebuilding them in copies of the build trees of $triples"
	t0=$SECONDS
	tree=$(patched_tree "$n" "$patch")
	for triple in $triples; do
		patched_build "$n" "$tree" "$triple" "$comps"
	done
	log "$base: built in $((SECONDS - t0))s (wall)"
	local un="$TREES" fx="$WORK/$n/build"
	if [[ -x $inputs/replay.sh ]]; then
		replay_expect "$base" "$inputs" unfixed "$un" || fail=1
		replay_expect "$base" "$inputs" fixed "$fx" || fail=1
	else
		log "$base: no $inputs/replay.sh"
		fail=1
	fi
	local a b changes saved=$PRODUCERS
	for triple in $triples; do
		if [[ " $comps " == *" gas "* || " $comps " == *" ld "* || " $comps " == *" bfd "* ]]; then
			log "$base: matrix slice: gas:TREE of $triple x builtin, every target it assembles for, $PROGRAMS programs a cell, seed $SEED"
			PRODUCERS="gas:$un/$triple"
			unpatched_verdicts builtin
			a=$UNPATCHED
			PRODUCERS="gas:$fx/$triple"
			b=$(verdicts builtin)
			PRODUCERS=$saved
			# The cells name the trees: compare them without.
			a=${a//"$un/$triple"/TREE} b=${b//"$fx/$triple"/TREE}
			if changes=$(compare_cells "$a" "$b"); then
				log "$base: matrix slice ($triple, gas): $(wc -l <<<"$a") cells, none worse with the patch${changes:+; changed:}"
				[[ -z $changes ]] || sed 's/^/  /' <<<"$changes" >&2
			else
				log "$base: matrix slice ($triple, gas): the patch makes cells worse:"
				sed 's/^/  /' <<<"$changes" >&2
				fail=1
			fi
		fi
		if [[ " $comps " == *" binutils "* || " $comps " == *" libsframe "* || " $comps " == *" bfd "* ]]; then
			log "$base: matrix slice: $PRODUCERS x objdump:TREE,readelf:TREE of $triple, $PROGRAMS programs a cell, seed $SEED"
			unpatched_verdicts "objdump:$un/$triple,readelf:$un/$triple"
			a=$UNPATCHED
			b=$(verdicts "objdump:$fx/$triple,readelf:$fx/$triple")
			a=${a//"$un/$triple"/TREE} b=${b//"$fx/$triple"/TREE}
			if changes=$(compare_cells "$a" "$b"); then
				log "$base: matrix slice ($triple, dumpers): $(wc -l <<<"$a") cells, none worse with the patch${changes:+; changed:}"
				[[ -z $changes ]] || sed 's/^/  /' <<<"$changes" >&2
			else
				log "$base: matrix slice ($triple, dumpers): the patch makes cells worse:"
				sed 's/^/  /' <<<"$changes" >&2
				fail=1
			fi
		fi
	done
}

# How the glibc consumer is compiled (glibc_consumer_compile,
# AARCH64_UCONTEXT): the lines setup step 7 uses, from one file.
# shellcheck source=consumer/glibc/build.sh
source "$REPO/consumer/glibc/build.sh"

# build_glibc_consumer GLIBC-DIR VERSION OUT [HOST-DIR]: the glibc consumer
# built from the glibc files in GLIBC-DIR as setup step 7 builds it, into
# OUT/sfconform-glibc; HOST-DIR, when given, is searched for headers after
# the shim and before glibc's (a finding's stand-in for an arch header the
# host cannot compile).
build_glibc_consumer() {
	local src=$1 ver=$2 out=$3 host=${4:-}
	rm -rf "$out"
	[[ -f $AARCH64_UCONTEXT ]] || die "$AARCH64_UCONTEXT is missing (package libc6-dev-arm64-cross, setup step 1)"
	GLIBC_CONSUMER_NICE=19 glibc_consumer_compile "$REPO" "$src" "$ver" "$out" "$host" ||
		die "building the glibc consumer from $src failed: $(tail -n5 "$out/build.log")"
}

# glibc_drift_guard UNPATCHED-DIR VERDICTS: the glibc consumer this script
# builds from the unpatched files must give, cell by cell, the verdicts of
# the one setup step 7 provisions (both are compiled by
# consumer/glibc/build.sh; this catches whatever else differs: a worktree whose
# consumer sources setup has not built, a stale glibc stamp). Fails the
# run, loudly, when they differ. A finding's host/ stand-ins change the
# consumer on purpose: its unpatched build is not compared.
glibc_drift_guard() {
	local un=$1 a=$2 hash setup_bin b
	[[ $un == "$WORK/unpatched-glibc" ]] || return 0
	hash=$(cd "$REPO/consumer" && find cprotocol glibc -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
	setup_bin="$CACHE/consumers/glibc-$hash/sfconform-glibc"
	[[ -x $setup_bin ]] || die "setup's glibc consumer for these sources ($setup_bin) is missing: run 'make setup'"
	unpatched_verdicts "exec:$setup_bin"
	b=$UNPATCHED
	a=${a//"$un/sfconform-glibc"/CONSUMER} b=${b//"$setup_bin"/CONSUMER}
	if [[ $a != "$b" ]]; then
		log "the glibc consumer built here ($un) and setup's ($setup_bin) give different verdicts on the same cells:"
		diff <(echo "$b") <(echo "$a") >&2 || true
		die "the glibc consumer of ci/verify-fixes.sh has drifted from setup step 7's: the patches' verdicts would not be comparable"
	fi
	log "the unpatched glibc consumer gives setup's consumer's verdicts ($(wc -l <<<"$a") cells)"
}

# verify_glibc PATCH: the glibc verification (see the top).
verify_glibc() {
	local patch=$1 base n inputs stamp="$CACHE/stamps/glibc-src-sid" gsrc gver tree t0
	base=$(basename "$patch" .patch)
	n=${base%%-*}
	inputs="$FINDINGS/$n-inputs/glibc"
	[[ -f $stamp ]] || die "no glibc source files: run 'make setup' (ci/setup.sh step 7)"
	gsrc=$(sed -n 's/^dir=//p' "$stamp")
	gver=$(sed -n 's/^version=//p' "$stamp")
	[[ -f $gsrc/sysdeps/generic/sframe.c ]] || die "$gsrc holds no glibc sysdeps/generic/sframe.c: run 'make setup'"
	log "$base: building the glibc consumer from glibc $gver's files, as they are and patched"
	t0=$SECONDS
	tree="$WORK/$n-glibc/src"
	rm -rf "$tree"
	mkdir -p "$tree"
	cp -a "$gsrc/." "$tree"
	patch -d "$tree" -p1 --quiet --no-backup-if-mismatch <"$patch" >&2 || die "$patch does not apply to glibc $gver's files"
	local un="$WORK/unpatched-glibc" fx="$WORK/$n-glibc/consumer" host=
	# A finding whose patch adds an arch header the host cannot compile
	# (026: AArch64's XPACLRI) has a stand-in for it in host/, used by its
	# replay and by both consumers alike.
	if [[ -d $inputs/host ]]; then
		host=$inputs/host un="$WORK/$n-glibc/unpatched-consumer"
		log "$base: both consumers built with $host first on the include path"
	fi
	build_glibc_consumer "$gsrc" "$gver" "$un" "$host"
	build_glibc_consumer "$tree" "$gver+$base" "$fx" "$host"
	log "$base: built in $((SECONDS - t0))s (wall)"
	if [[ -x $inputs/replay.sh ]]; then
		replay_expect "$base" "$inputs" unfixed "$gsrc" || fail=1
		replay_expect "$base" "$inputs" fixed "$tree" || fail=1
	else
		log "$base: no $inputs/replay.sh: running its finding's reproduction (check-lib.sh $n), unpatched and patched"
		if bash "$FINDINGS/check-lib.sh" "$n" >&2; then
			log "$base: reproduction: without the patch as the finding says, fixed with it"
		else
			log "$base: the reproduction does not print what the finding says"
			fail=1
		fi
	fi
	local a b changes saved=$PRODUCERS
	PRODUCERS=${VERIFY_GLIBC_PRODUCERS:-builtin-v2} TARGETS=x86-64,aarch64
	log "$base: matrix slice: $PRODUCERS x glibc (unpatched, patched) on $TARGETS, $PROGRAMS programs a cell, seed $SEED"
	unpatched_verdicts "exec:$un/sfconform-glibc"
	a=$UNPATCHED
	glibc_drift_guard "$un" "$a"
	b=$(verdicts "exec:$fx/sfconform-glibc")
	PRODUCERS=$saved TARGETS=all
	if changes=$(compare_cells "$a" "$b"); then
		log "$base: matrix slice (glibc): $(wc -l <<<"$a") cells, none worse with the patch${changes:+; changed:}"
		[[ -z $changes ]] || sed 's/^/  /' <<<"$changes" >&2
	else
		log "$base: matrix slice (glibc): the patch makes cells worse:"
		sed 's/^/  /' <<<"$changes" >&2
		fail=1
	fi
}

fail=0
verify() {
	local patch=$1 base n inputs comp tree
	base=$(basename "$patch" .patch)
	n=${base%%-*}
	inputs="$FINDINGS/$n-inputs"
	comp=$(sed -n 's|^+++ b/\([^/]*\)/.*|\1|p' "$patch" | sort -u)
	if [[ $comp == sysdeps ]]; then
		verify_glibc "$patch"
		return
	fi
	if [[ $comp != libsframe ]] || grep -q '^+++ b/libsframe/sframe-dump\.c' "$patch"; then
		verify_programs "$patch"
		return
	fi
	log "$base: building libsframe of binutils $VER, as it is and patched"
	local t0=$SECONDS
	build_libsframe "$SRC" "$WORK/unpatched-libsframe"
	tree=$(patched_tree "$n" "$patch")
	build_libsframe "$tree" "$WORK/$n/libsframe"
	log "$base: built in $((SECONDS - t0))s"
	local un="$WORK/unpatched-libsframe" fx="$WORK/$n/libsframe"

	# 2. The finding's own input and driver.
	if [[ -x $inputs/replay.sh ]]; then
		replay_expect "$base" "$inputs" unfixed "$un/.libs/libsframe.a" "$SRC/include" || fail=1
		replay_expect "$base" "$inputs" fixed "$fx/.libs/libsframe.a" "$tree/include" || fail=1
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
	unpatched_verdicts "libsframe:$un"
	a=$UNPATCHED
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
