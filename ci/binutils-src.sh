#!/usr/bin/env bash
# Build GNU binutils from Debian's newest binutils source package (sid's) for
# x86-64 (native), aarch64 and s390x (cross): gas, ld, objdump, readelf and
# libsframe. `make binutils-src` runs this; it is slow (tens of minutes of
# CPU), so it is not part of `make setup` or `make test`.
#
# Why: the packaged toolchains answer "what does the release do"; a build
# from source answers "which line does it" and lets a proposed patch be
# built and checked (ci/verify-fixes.sh).
#
# Layout (VER is the Debian source version, e.g. 2.47-6):
#   $SFCONFORM_CACHE/sources/binutils-VER/          the unpacked tree, Debian's
#                                                   patches applied, unmodified
#   $SFCONFORM_CACHE/toolchains/binutils-src-VER/
#     build/<triple>/                               one build tree per target
#     bin/<triple>-{as,ld,objdump,readelf}          the built tools
#     lib/libsframe.a, include/sframe-api.h ...     libsframe (target-independent)
#     srcbuild.conf                                 read by the toolchain package
#                                                   (toolchain.conf's keys; another
#                                                   name, so that the release series'
#                                                   glob never takes it for gas-2.47)
#     build-times                                   wall and CPU seconds per target
#   $SFCONFORM_CACHE/stamps/binutils-src            version= and dir=
#
# Idempotent: a finished build (stamp present, every tool there) is left as
# it is; an interrupted one resumes (make is incremental). It does not
# follow sid: to build a newer source package, remove
# $SFCONFORM_CACHE/stamps/binutils-src and run it again.
#
# The source version: sid's newest binutils source package the archive still
# serves. sid's list can name a revision whose files are already gone from
# the pool (404); then the revision before it is taken, and so on (at most
# four tries).
#
# Environment:
#   SFCONFORM_CACHE   cache root (default /var/cache/sfconform)
#   BINUTILS_SRC_JOBS make -j (default 2)
#   BINUTILS_SRC_TRIPLES  targets to build (default: all three)
set -euo pipefail
shopt -s inherit_errexit

CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
JOBS=${BINUTILS_SRC_JOBS:-2}
read -r -a TRIPLES <<<"${BINUTILS_SRC_TRIPLES:-x86_64-linux-gnu aarch64-linux-gnu s390x-linux-gnu}"
TOOLS=(as ld objdump readelf)
STAMP="$CACHE/stamps/binutils-src"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { printf 'binutils-src: %s\n' "$*" >&2; }
die() {
	printf 'binutils-src: error: %s\n' "$*" >&2
	exit 1
}

# The private apt state for sid's source packages is ci/setup.sh's (step 7
# uses it for glibc); setup must have run once.
APT_CONF="$CACHE/apt/sid-src/apt.conf"

complete() {
	local dir=$1 t x
	[[ -f $dir/srcbuild.conf && -f $dir/lib/libsframe.a && -f $dir/include/sframe-api.h ]] || return 1
	for t in "${TRIPLES[@]}"; do
		for x in "${TOOLS[@]}"; do
			[[ -x $dir/bin/$t-$x ]] || return 1
		done
	done
}

# libsframe_consumer DIR VER builds consumer/libsframe against DIR's
# libsframe into $CACHE/consumers/libsframe-src-HASH (HASH: the consumer's
# sources, as ci/setup.sh's consumer_hash computes it), with its
# consumer.conf; the consumer "libsframe-src" finds it there.
libsframe_consumer() {
	local dir=$1 ver=$2 hash out bin=sfconform-libsframe
	hash=$(cd "$REPO/consumer" && find cprotocol libsframe -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
	out="$CACHE/consumers/libsframe-src-$hash"
	if [[ -x $out/$bin && -f $out/consumer.conf ]]; then
		log "libsframe-src consumer: $out (present)"
		return
	fi
	local staging="$CACHE/consumers/.staging-libsframe-src-$$"
	rm -rf "$staging"
	mkdir -p "$staging"
	gcc -O2 -g -Wall -Wextra -std=gnu11 \
		-I "$REPO/consumer/libsframe/include" -I "$dir/include" \
		-DLIBSFRAME_VERSION="\"$ver (source)\"" \
		"$REPO/consumer/libsframe/libsframe.c" "$REPO/consumer/cprotocol/protocol.c" "$dir/lib/libsframe.a" \
		-o "$staging/$bin" 2>"$staging/build.log" ||
		die "building the libsframe consumer against $dir/lib/libsframe.a failed: $(tail -n5 "$staging/build.log")"
	local hello
	hello=$(printf 'hello sfconform-unwind 1\nsupports x86-64 3\nquit\n' | "$staging/$bin" 2>&1 | sed -n 2p) || true
	[[ $hello == yes ]] || die "the libsframe-src consumer in $staging does not answer 'supports x86-64 3' with yes"
	printf '# Written by ci/binutils-src.sh.\nname=libsframe\nversion=%s\nsuite=sid\npackage=binutils %s (source package, built from source)\nsource=%s\n' \
		"$(sed -n 's/^version=//p' "$dir/srcbuild.conf")" "$ver" "$hash" >"$staging/consumer.conf"
	rm -rf "$out"
	mv "$staging" "$out"
	log "libsframe-src consumer: $out"
}

if [[ -f $STAMP ]]; then
	dir=$(sed -n 's/^dir=//p' "$STAMP")
	if [[ -n $dir ]] && complete "$dir"; then
		ver=$(sed -n 's/^version=//p' "$STAMP")
		log "present: $dir ($ver)"
		libsframe_consumer "$dir" "$ver"
		exit 0
	fi
fi

[[ -w $CACHE ]] || die "$CACHE is not writable: run as root (or set SFCONFORM_CACHE)"
[[ -f $APT_CONF ]] || die "$APT_CONF is missing: run 'make setup' first (it prepares sid's source lists)"
command -v dpkg-source >/dev/null || die "dpkg-source is missing (package dpkg-dev)"
for p in gcc make; do
	command -v "$p" >/dev/null || die "$p is missing (apt-get install $p)"
done
# Unpacked by dpkg-source, the generated lexers and parsers are no newer
# than their .l and .y files: make runs flex and bison (binutils/arlex.c), and flex runs m4.
missing=()
for p in flex bison m4; do
	command -v "$p" >/dev/null || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
	((EUID == 0)) || die "${missing[*]} missing: apt-get install ${missing[*]} (as root)"
	log "installing ${missing[*]} from the host's suite"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

# fetch_source prints the version it unpacked into $CACHE/sources/binutils-VER.
fetch_source() {
	local v versions tmp got="" tried=()
	# A tree already unpacked by an earlier run is used as it is.
	if [[ -f $STAMP ]]; then
		v=$(sed -n 's/^version=//p' "$STAMP")
		if [[ -n $v && -f $CACHE/sources/binutils-$v/gas/as.c ]]; then
			echo "$v"
			return
		fi
	fi
	versions=$(APT_CONFIG=$APT_CONF apt-cache showsrc binutils 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -u -r -V)
	[[ -n $versions ]] || die "Debian sid's source list (private apt state $APT_CONF) names no binutils"
	mkdir -p "$CACHE/sources"
	tmp=$(mktemp -d "$CACHE/.binutils-src.XXXXXX")
	for v in $versions; do
		tried+=("$v")
		log "fetching binutils $v's source package from Debian sid"
		if (cd "$tmp" && APT_CONFIG=$APT_CONF apt-get source --download-only -qq "binutils=$v" >"$tmp/download.log" 2>&1) &&
			[[ -f $tmp/binutils_${v#*:}.dsc ]]; then
			got=$v
			break
		fi
		log "binutils $v: $(grep -m1 -E '^E:' "$tmp/download.log" || echo 'no .dsc'); trying the revision before it"
		rm -f "$tmp"/binutils_*
		((${#tried[@]} < 4)) || break
	done
	[[ -n $got ]] || die "cannot download binutils' source package from Debian sid (tried ${tried[*]})"
	log "unpacking binutils $got (Debian's patches applied)"
	(cd "$tmp" && dpkg-source -x "binutils_${got#*:}.dsc" tree >"$tmp/unpack.log" 2>&1) ||
		die "dpkg-source cannot unpack binutils $got: $(tail -n3 "$tmp/unpack.log")"
	rm -rf "$CACHE/sources/binutils-$got"
	mv "$tmp/tree" "$CACHE/sources/binutils-$got"
	rm -rf "$tmp"
	mkdir -p "$CACHE/stamps"
	printf 'version=%s\ndir=%s\n' "$got" "$CACHE/toolchains/binutils-src-$got" >"$STAMP"
	echo "$got"
}

VER=$(fetch_source)
SRC="$CACHE/sources/binutils-$VER"
DIR="$CACHE/toolchains/binutils-src-$VER"
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/include" "$DIR/build"
printf 'version=%s\ndir=%s\n' "$VER" "$DIR" >"$STAMP"

# build_triple T configures and builds T's tools in $DIR/build/T, then
# records wall and CPU seconds.
build_triple() {
	local t=$1 b="$DIR/build/$1" x
	if [[ -x $DIR/bin/$t-as && -x $DIR/bin/$t-ld && -x $DIR/bin/$t-objdump && -x $DIR/bin/$t-readelf ]]; then
		log "$t: built"
		return
	fi
	mkdir -p "$b"
	# Wall and CPU time of configure and make (the CPU of the children
	# this shell waited for: fields 16 and 17 of /proc/PID/stat).
	local t0=$SECONDS c0 c1 tck
	c0=$(awk '{ print $16 + $17 }' /proc/$$/stat)
	local target=()
	[[ $t == x86_64-linux-gnu ]] || target=(--target="$t")
	local resumed=" (resumed)"
	if [[ ! -f $b/Makefile ]]; then
		resumed=""
		log "$t: configure"
		(cd "$b" && nice -n 19 "$SRC/configure" --build=x86_64-linux-gnu --host=x86_64-linux-gnu "${target[@]}" \
			--prefix=/nonexistent --disable-gdb --disable-gdbserver --disable-sim --disable-werror --disable-nls \
			--disable-gprof --disable-gprofng --disable-libctf --disable-readline --disable-libdecnumber \
			--without-debuginfod --without-zstd --enable-sframe MAKEINFO=true >"$b/configure.log" 2>&1) ||
			die "$t: configure failed: $(tail -n5 "$b/configure.log") (log $b/configure.log)"
	fi
	log "$t: make -j$JOBS (nice 19; log $b/make.log)"
	# The tools by name: a tree configured before they were installed
	# would run "missing m4", which flex cannot exec.
	(cd "$b" && nice -n 19 make -j"$JOBS" MAKEINFO=true M4=m4 FLEX=flex LEX=flex BISON=bison YACC='bison -y' \
		all-gas all-ld all-binutils all-libsframe >"$b/make.log" 2>&1) ||
		die "$t: make failed: $(grep -m3 -E 'error|Error' "$b/make.log") (log $b/make.log)"
	c1=$(awk '{ print $16 + $17 }' /proc/$$/stat)
	tck=$(getconf CLK_TCK)
	# A build resumed after an interruption counts only what this run did.
	printf '%s wall=%ds cpu=%ds%s\n' "$t" $((SECONDS - t0)) $(((c1 - c0) / tck)) "$resumed" >>"$DIR/build-times"
	for x in as:gas/as-new ld:ld/ld-new objdump:binutils/objdump readelf:binutils/readelf; do
		[[ -x $b/${x#*:} ]] || die "$t: the build left no ${x#*:}"
		ln -sf "$b/${x#*:}" "$DIR/bin/$t-${x%%:*}"
	done
}

for t in "${TRIPLES[@]}"; do
	build_triple "$t"
done

# libsframe is the same for every target: the native build's.
b="$DIR/build/x86_64-linux-gnu"
[[ -f $b/libsframe/.libs/libsframe.a ]] || die "the x86-64 build left no libsframe/.libs/libsframe.a"
cp "$b/libsframe/.libs/libsframe.a" "$DIR/lib/libsframe.a"
cp "$SRC/include/sframe-api.h" "$SRC/include/sframe.h" "$DIR/include/"
ln -sfn "$SRC" "$DIR/src"

version=$("$DIR/bin/x86_64-linux-gnu-as" --version | awk 'NR == 1 { print $NF }')
cat >"$DIR/srcbuild.conf.tmp" <<EOF
# Written by ci/binutils-src.sh; read by the toolchain package (toolchain.FindSourceBuild).
name=gas-src
version=$version
suite=sid
package=$VER
source=binutils $VER (Debian sid source package, Debian's patches applied)
triples=${TRIPLES[*]}
root=
EOF
mv "$DIR/srcbuild.conf.tmp" "$DIR/srcbuild.conf"
complete "$DIR" || die "$DIR is incomplete after the build"
libsframe_consumer "$DIR" "$VER"
log "done: binutils $VER ($version) in $DIR"
cat "$DIR/build-times" >&2
