#!/usr/bin/env bash
# Provision the package campaign (package packages, `sfconform packages`,
# `make packages`): the build tools the packages' own build systems need,
# from the machine's own Debian archive, and the Debian source packages it
# builds, each unpacked (Debian's patches applied) under
# $SFCONFORM_CACHE/sources/<pkg>-<ver>/ with $SFCONFORM_CACHE/stamps/src-<pkg>
# naming the directory, as ci/setup.sh step 8 does for the real-code
# campaign's code bases (whose zlib and bzip2 this reuses).
#
# Not part of `make setup` or `make test`: it downloads a score of source
# packages, and the campaign that uses them takes CPU hours. The package
# test that builds one of them skips without its source unless
# SFCONFORM_REQUIRE_PACKAGES=1.
#
# Idempotent: a source whose stamp names an existing directory is left as
# it is; installed tools are not installed again.
#
# The sources come from bookworm whatever the host's suite (as step 8's),
# through setup's private deb-src state for bookworm
# ($SFCONFORM_CACHE/apt/bookworm-src): setup must have run once. When the
# newest revision's files are gone from the pool, the revision before it is
# taken (at most four tries).
#
# Environment:
#   SFCONFORM_CACHE     cache root (default /var/cache/sfconform)
#   PACKAGES_SOURCES    source packages to fetch (default: every one below)
set -euo pipefail
shopt -s inherit_errexit

CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
SUITE=bookworm
APT_CONF="$CACHE/apt/$SUITE-src/apt.conf"

# The source packages of package packages' recipes (packages/recipes.go):
# keep the two lists together.
DEFAULT_SOURCES=(zlib bzip2 lz4 libzstd expat libyaml pcre2 jansson lmdb cjson
	tinyxml2 libjsoncpp pugixml double-conversion snappy yaml-cpp fmtlib gflags)
read -r -a SOURCES <<<"${PACKAGES_SOURCES:-${DEFAULT_SOURCES[*]}}"

# The build systems' tools, from the host's own archive.
TOOLS=(cmake make dpkg-dev autoconf automake libtool)

log() { printf 'packages: %s\n' "$*" >&2; }
die() {
	printf 'packages: error: %s\n' "$*" >&2
	exit 1
}

tools() {
	local p status missing=()
	for p in "${TOOLS[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $status == "install ok installed" ]] || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		log "build tools: present (${TOOLS[*]})"
		return
	fi
	((EUID == 0)) || die "installing ${missing[*]} needs root"
	log "installing ${missing[*]}"
	apt-get update -qq || die "apt-get update failed for the system's sources"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
}

# source PKG: ci/setup.sh's realcode_source, with setup's deb-src state.
source_pkg() {
	local pkg=$1 stamp="$CACHE/stamps/src-$1" dir
	if [[ -f $stamp ]]; then
		dir=$(sed -n 's/^dir=//p' "$stamp")
		if [[ -n $dir && -d $dir ]]; then
			log "source $pkg: $dir (present)"
			return
		fi
	fi
	local versions ver tmp got="" tried=()
	versions=$(APT_CONFIG=$APT_CONF apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -u -r -V)
	[[ -n $versions ]] || die "source package '$pkg' is not in Debian $SUITE's lists ($APT_CONF)"
	tmp=$(mktemp -d "$CACHE/.src-$pkg.XXXXXX")
	for ver in $versions; do
		tried+=("$ver")
		log "fetching $pkg $ver's source package from Debian $SUITE"
		if (cd "$tmp" && APT_CONFIG=$APT_CONF apt-get source --download-only -qq "$pkg=$ver" >"$tmp/download.log" 2>&1) &&
			compgen -G "$tmp/*.dsc" >/dev/null; then
			got=$ver
			break
		fi
		log "$pkg $ver: $(grep -m1 -E '^E:' "$tmp/download.log" || echo 'no .dsc'); trying the revision before it"
		rm -f "$tmp"/*.dsc "$tmp"/*.tar.* "$tmp"/*.diff.*
		((${#tried[@]} < 4)) || break
	done
	[[ -n $got ]] || die "cannot download the source package '$pkg' from Debian $SUITE (tried ${tried[*]}): $(grep -m2 -E '^E:' "$tmp/download.log")"
	ver=$got
	local dsc=("$tmp"/*.dsc)
	(cd "$tmp" && dpkg-source -x "${dsc[0]}" tree >"$tmp/unpack.log" 2>&1) ||
		die "dpkg-source cannot unpack '$pkg=$ver': $(tail -n3 "$tmp/unpack.log")"
	dir="$CACHE/sources/$pkg-${ver#*:}"
	rm -rf "$dir"
	mkdir -p "$CACHE/sources" "$CACHE/stamps"
	mv "$tmp/tree" "$dir"
	rm -rf "$tmp"
	printf 'package=%s\nversion=%s\nsuite=%s\ndir=%s\n' "$pkg" "$ver" "$SUITE" "$dir" >"$stamp"
	log "source $pkg: $ver in $dir"
}

main() {
	[[ -f $APT_CONF ]] || die "$APT_CONF is missing: run 'make setup' first (its step 8 makes bookworm's deb-src state)"
	[[ -w $CACHE ]] || die "$CACHE is not writable"
	command -v dpkg-source >/dev/null || TOOLS+=(dpkg-dev)
	tools
	local p
	for p in "${SOURCES[@]}"; do
		source_pkg "$p"
	done
	log "done: ${#SOURCES[@]} source packages"
}

main "$@"
