#!/usr/bin/env bash
# Provision the newest GCC Debian offers (sid's highest gcc-N) for x86-64
# (native) and s390x (cross), as compilers to assembly only: `make gcc-newest`
# runs this. The gcc findings (docs/findings/030, 034) are reproduced with it
# (docs/findings/gcc-newest.sh).
#
# Why: the findings were first shown with bookworm's gcc 12, whose branch is
# closed; a GCC report needs the output of a GCC upstream still supports.
#
# Layout (VER is the Debian version of gcc-N for x86-64, e.g. 16.2.0-4):
#   $SFCONFORM_CACHE/roots/gcc-VER/              the .debs unpacked (the compilers
#                                                and the C library and libraries
#                                                they run with, all sid's)
#   $SFCONFORM_CACHE/toolchains/gcc-VER/bin/<triple>-gcc
#                                                wrapper scripts, one per target
#   $SFCONFORM_CACHE/toolchains/gcc-VER/versions  `gcc --version`'s first line
#                                                and the Debian version per triple
#   $SFCONFORM_CACHE/stamps/gcc-newest          version= and dir=
#
# The compilers are sid's binaries; they need sid's C library (newer than a
# bookworm host's). Each wrapper runs the driver through the root's dynamic
# loader with the root's libraries, and passes the driver `-wrapper` so that
# the programs it starts (cc1) run the same way: the driver execs cc1 itself,
# and a cc1 started directly would load the host's older C library. Only
# compiling to assembly (-S) is provisioned: no assembler, linker, libgcc
# or C library headers of the target come with it (assemble the output with
# the binutils under test, as the findings do; the host's /usr/include and
# /usr/s390x-linux-gnu/include serve #include).
#
# Idempotent: a finished root (stamp present, every wrapper compiling a
# test file) is left as it is. It does not follow sid: to take a newer gcc,
# remove $SFCONFORM_CACHE/stamps/gcc-newest and run it again.
#
# Uses ci/setup.sh's private apt state for sid's binary packages
# ($SFCONFORM_CACHE/apt/sid): `make setup` must have run once.
#
# Environment:
#   SFCONFORM_CACHE  cache root (default /var/cache/sfconform)
#   GCC_MAJOR        the gcc major to take (default: sid's highest gcc-N)
set -euo pipefail
shopt -s inherit_errexit

CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
STAMP="$CACHE/stamps/gcc-newest"
APT_CONF="$CACHE/apt/sid/apt.conf"
TRIPLES=(x86_64-linux-gnu s390x-linux-gnu)
# What the compilers (cc1 and the driver) load, besides the C library.
RUNTIME=(libc6 libgcc-s1 libstdc++6 libgmp10 libisl23 libmpc3 libmpfr6 libzstd1 zlib1g)

log() { printf 'gcc-newest: %s\n' "$*" >&2; }
die() {
	printf 'gcc-newest: error: %s\n' "$*" >&2
	exit 1
}

# works DIR: every wrapper of DIR compiles a C function to assembly.
works() {
	local dir=$1 t out
	for t in "${TRIPLES[@]}"; do
		[[ -x $dir/bin/$t-gcc ]] || return 1
		out=$(printf 'int f(int x) { return x + 1; }\n' | "$dir/bin/$t-gcc" -O2 -x c -S -o - - 2>&1) || {
			log "$dir/bin/$t-gcc does not compile: $out"
			return 1
		}
		grep -q '^f:' <<<"$out" || return 1
	done
}

if [[ -f $STAMP ]]; then
	dir=$(sed -n 's/^dir=//p' "$STAMP")
	if [[ -n $dir ]] && works "$dir"; then
		log "$(sed -n 's/^version=//p' "$STAMP") in $dir (present)"
		exit 0
	fi
fi

[[ -f $APT_CONF ]] || die "no private apt state for Debian sid ($APT_CONF): run 'make setup' first"

show() { APT_CONFIG=$APT_CONF apt-cache show --no-all-versions "$@" 2>/dev/null || true; }

major=${GCC_MAJOR:-}
if [[ -z $major ]]; then
	major=$(APT_CONFIG=$APT_CONF apt-cache pkgnames gcc- 2>/dev/null | sed -n 's/^gcc-\([0-9][0-9]*\)$/\1/p' | sort -n | tail -n1)
	[[ -n $major ]] || die "Debian sid's lists ($APT_CONF) name no gcc-N package"
fi
pkgs=()
for t in "${TRIPLES[@]}"; do
	deb=${t//_/-}
	pkgs+=("gcc-$major-$deb" "cpp-$major-$deb")
done
ver=$(show "gcc-$major-x86-64-linux-gnu" | awk '/^Version:/ { print $2; exit }')
[[ -n $ver ]] || die "Debian sid has no gcc-$major-x86-64-linux-gnu"
for p in "${pkgs[@]}"; do
	[[ -n $(show "$p") ]] || die "Debian sid has gcc-$major $ver but not $p"
done

root="$CACHE/roots/gcc-$ver"
dir="$CACHE/toolchains/gcc-$ver"
tmp=$(mktemp -d "$CACHE/.gcc-newest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# unpack: the root, once every .deb is unpacked in it (a marker file names
# the packages), is kept: a failure after it does not fetch them again.
unpack() {
	log "fetching gcc-$major $ver (${pkgs[*]}) and its runtime (${RUNTIME[*]}) from Debian sid"
	download() { (cd "$tmp" && APT_CONFIG=$APT_CONF apt-get download -qq "$@" >"$tmp/download.log" 2>&1); }
	if ! download "${pkgs[@]}" "${RUNTIME[@]}"; then
		# sid moved since the lists were fetched: fetch them again.
		log "Debian sid moved since its lists were fetched; fetching them again"
		APT_CONFIG=$APT_CONF apt-get update -qq >"$tmp/update.log" 2>&1 || die "apt-get update for sid failed: $(tail -n3 "$tmp/update.log")"
		download "${pkgs[@]}" "${RUNTIME[@]}" || die "cannot download from Debian sid: $(tail -n3 "$tmp/download.log")"
	fi
	rm -rf "$root.new"
	for d in "$tmp"/*.deb; do
		dpkg-deb -x "$d" "$root.new" || die "cannot unpack $d"
	done
	printf '%s\n' "${pkgs[@]}" "${RUNTIME[@]}" >"$root.new/.sfconform-packages"
	rm -rf "$root"
	mv "$root.new" "$root"
}
if [[ $(cat "$root/.sfconform-packages" 2>/dev/null) != "$(printf '%s\n' "${pkgs[@]}" "${RUNTIME[@]}")" ]]; then
	unpack
fi

lib="$root/usr/lib/x86_64-linux-gnu"
loader="$lib/ld-linux-x86-64.so.2"
[[ -x $loader ]] || die "sid's libc6 unpacked no $loader"
libpath="$lib:$root/lib/x86_64-linux-gnu"
rm -rf "$dir"
mkdir -p "$dir/bin"
: >"$dir/versions"
for t in "${TRIPLES[@]}"; do
	driver="$root/usr/bin/$t-gcc-$major"
	[[ -x $driver ]] || die "gcc-$major for $t unpacked no $driver"
	# -B: where cc1 lies (the driver would find it from its own path
	# too; this does not depend on how it reads argv[0] through the loader).
	# (A cross compiler's programs lie under gcc-cross/.)
	libexec="$root/usr/libexec/gcc/$t/$major/"
	[[ -x ${libexec}cc1 ]] || libexec="$root/usr/libexec/gcc-cross/$t/$major/"
	[[ -x ${libexec}cc1 ]] || die "cpp-$major for $t unpacked no cc1 under $root/usr/libexec/gcc{,-cross}/$t/$major"
	cat >"$dir/bin/$t-gcc" <<EOF
#!/bin/sh
# $t-gcc-$major from Debian sid ($(show "gcc-$major-${t//_/-}" | awk '/^Version:/ { print $2; exit }')), unpacked in $root, run with
# sid's C library from that root; the programs it starts (cc1) too, through -wrapper.
# For -S (or -E) only: see ci/gcc-newest.sh.
exec $loader --library-path $libpath --argv0 $driver $driver \\
	-B $libexec -wrapper $loader,--library-path,$libpath "\$@"
EOF
	chmod +x "$dir/bin/$t-gcc"
	printf '%s\t%s\t%s\n' "$t" "$(show "gcc-$major-${t//_/-}" | awk '/^Version:/ { print $2; exit }')" \
		"$("$dir/bin/$t-gcc" --version | head -n1)" >>"$dir/versions"
done
works "$dir" || die "the wrappers in $dir/bin do not compile (see above)"
mkdir -p "$CACHE/stamps"
printf 'version=%s\ndir=%s\n' "$ver" "$dir" >"$STAMP"
log "gcc-$major $ver in $dir:"
sed 's/^/  /' "$dir/versions" >&2
