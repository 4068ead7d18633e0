# shellcheck shell=bash
# Sourced by ci/setup.sh (step 8's code bases) and ci/packages.sh: fetch a
# Debian source package through a private deb-src apt state and unpack it,
# Debian's patches applied, under $CACHE/sources/<pkg>-<version>/, with
# $CACHE/stamps/src-<pkg> naming the directory. The caller defines CACHE,
# log and die, and checks the stamp first.

# debsrc_unpack PKG SUITE APT_CONFIG HINT: the newest revision SUITE's lists
# name, or when its files are gone from the pool the one before it (at
# most four tries). HINT ends the error messages (where the lists come
# from). Sets DEBSRC_VERSION and DEBSRC_DIR.
debsrc_unpack() {
	local pkg=$1 suite=$2 conf=$3 hint=$4 versions ver tmp got="" tried=()
	versions=$(APT_CONFIG=$conf apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -u -r -V)
	[[ -n $versions ]] || die "source package '$pkg' is not in Debian '$suite' ($hint)"
	tmp=$(mktemp -d "$CACHE/.src-$pkg.XXXXXX")
	for ver in $versions; do
		tried+=("$ver")
		log "fetching $pkg $ver's source package from Debian $suite"
		if (cd "$tmp" && APT_CONFIG=$conf apt-get source --download-only -qq "$pkg=$ver" >"$tmp/download.log" 2>&1) &&
			compgen -G "$tmp/*.dsc" >/dev/null; then
			got=$ver
			break
		fi
		log "$pkg $ver: $(grep -m1 -E '^E:' "$tmp/download.log" || echo 'no .dsc'); trying the revision before it"
		rm -f "$tmp"/*.dsc "$tmp"/*.tar.* "$tmp"/*.diff.*
		((${#tried[@]} < 4)) || break
	done
	[[ -n $got ]] || die "cannot download the source package '$pkg' from Debian '$suite' (tried ${tried[*]}; $hint): $(grep -m2 -E '^E:' "$tmp/download.log")"
	ver=$got
	local dsc=("$tmp"/*.dsc)
	(cd "$tmp" && dpkg-source -x "${dsc[0]}" tree >"$tmp/unpack.log" 2>&1) ||
		die "dpkg-source cannot unpack '$pkg=$ver' from Debian '$suite': $(tail -n3 "$tmp/unpack.log")"
	DEBSRC_DIR="$CACHE/sources/$pkg-${ver#*:}"
	# shellcheck disable=SC2034 # read by the caller
	DEBSRC_VERSION=$ver
	rm -rf "$DEBSRC_DIR"
	mkdir -p "$CACHE/sources" "$CACHE/stamps"
	mv "$tmp/tree" "$DEBSRC_DIR"
	rm -rf "$tmp"
	printf 'package=%s\nversion=%s\nsuite=%s\ndir=%s\n' "$pkg" "$ver" "$suite" "$DEBSRC_DIR" >"$CACHE/stamps/src-$pkg"
}
