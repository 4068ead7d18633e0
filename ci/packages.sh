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

# shellcheck source=ci/debsrc.sh
source "$(dirname "${BASH_SOURCE[0]}")/debsrc.sh"

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

# source PKG: fetched and unpacked as setup's step 8 does (ci/debsrc.sh),
# with setup's deb-src state for bookworm.
source_pkg() {
	local pkg=$1 stamp="$CACHE/stamps/src-$1" dir
	if [[ -f $stamp ]]; then
		dir=$(sed -n 's/^dir=//p' "$stamp")
		if [[ -n $dir && -d $dir ]]; then
			log "source $pkg: $dir (present)"
			return
		fi
	fi
	debsrc_unpack "$pkg" "$SUITE" "$APT_CONF" "lists of $APT_CONF"
	log "source $pkg: $DEBSRC_VERSION in $DEBSRC_DIR"
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
