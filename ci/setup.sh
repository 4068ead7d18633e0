#!/usr/bin/env bash
# Provision everything sfconform needs on a Debian machine: bookworm, trixie or
# sid (the project's image, docker/Dockerfile, runs it on sid).
#
# Idempotent: every step first checks whether its result is already in place
# (package status, library version, stamp files) and does nothing if so, so a
# second run takes well under a second.
#
# Steps:
#   1. host packages from the machine's own suite (gcc, make, python3, the cross
#      binutils, the gcc cross compilers for aarch64 and s390x with their C
#      libraries)
#   2. Unicorn 2.1 (Debian sid's or trixie's libunicorn) under /usr/local
#   3. the Ginkgo CLI at the version pinned in go.mod, into /usr/local/bin,
#      and the Go tools go.mod's tool directives name (actionlint), fetched
#      into the module cache and built once (`go tool NAME` runs them)
#   4. GNU binutils for x86-64, aarch64 and s390x in three versions (bookworm,
#      trixie, sid), each behind wrapper scripts with one layout:
#      $SFCONFORM_CACHE/toolchains/binutils-<version>/bin/<triple>-{as,ld,objdump,readelf}
#      plus toolchain.conf (read by the toolchain package). The suite the
#      host runs (bookworm or trixie) uses the host's own /usr/bin tools;
#      every other suite, and sid always (its root also holds llvm and
#      libsframe), is unpacked into a private root $SFCONFORM_CACHE/roots/<suite>
#   5. sid's newest llvm-mc and llvm-readobj:
#      $SFCONFORM_CACHE/toolchains/llvm-<major>/bin/{llvm-mc,llvm-readobj}
#   5b. the build pipelines' tools (package pipelines): the host suite's
#      elfutils (eu-strip), dwz and lld, and sid's lld and BOLT of the LLVM
#      major of step 5, unpacked into sid's root, behind
#      $SFCONFORM_CACHE/toolchains/llvm-<major>/bin/{ld.lld,llvm-bolt}
#   6. the libsframe consumer: consumer/libsframe compiled with the host gcc
#      against sid's libsframe-dev (libsframe.a, unpacked into sid's root),
#      into $SFCONFORM_CACHE/consumers/libsframe-<source hash>/
#   7. the glibc consumer: glibc's SFrame reader and walker from sid's glibc
#      source package (apt-get source), compiled unmodified with the host gcc
#      and consumer/glibc, into $SFCONFORM_CACHE/consumers/glibc-<source hash>/
#   8. the real-code campaign's inputs: csmith, libcsmith-dev and cvise from
#      the host's suite, and the source packages of the C code bases
#      (REALCODE_SOURCES, apt-get source through the private deb-src list of
#      the host's suite) unpacked under $SFCONFORM_CACHE/sources/<pkg>-<ver>/
#      with $SFCONFORM_CACHE/stamps/src-<pkg> naming the directory
#   9. a headless browser (the host suite's chromium), in which the tests
#      render the HTML reports
#   10. binutils from source, by `make binutils-src` (ci/binutils-src.sh),
#      not by this script (it takes tens of CPU minutes): GNU binutils
#      built from sid's binutils source package (apt-get source through
#      step 7's private deb-src state): gas and ld for x86-64, aarch64 and
#      s390x (producer gas-src), objdump and readelf (consumers objdump-src,
#      readelf-src), libsframe and consumer/libsframe against it (consumer
#      libsframe-src),
#      into $SFCONFORM_CACHE/toolchains/binutils-src-<version>/
#
# A suite's toolchain, once provisioned, stays as it is: setup does not
# follow sid. To take sid's current binutils, remove
# $SFCONFORM_CACHE/stamps/binutils-sid and run setup again.
#
# `ci/setup.sh --print-mirror` prints that archive address and does nothing
# else (ci/container.sh debootstraps its base images from it).
#
# Packages of foreign suites are fetched with a private apt configuration
# (own sources list, lists and cache directories); the system's apt state only
# ever sees its own suite. The archive address is taken from the system's own
# apt sources at run time (override: SFCONFORM_DEBIAN_MIRROR).
#
# Environment:
#   SFCONFORM_CACHE          cache and toolchain root (default /var/cache/sfconform)
#   SFCONFORM_DEBIAN_MIRROR  Debian archive URI to use for trixie and sid
#   SFCONFORM_SKIP_LLVM=1    do not provision sid's llvm-mc and llvm-readobj
set -euo pipefail
# Fail inside $(...) too: a helper that dies must stop the whole setup.
shopt -s inherit_errexit

CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TRIPLES=(x86_64-linux-gnu aarch64-linux-gnu s390x-linux-gnu)
TOOLS=(as ld objdump readelf)
# Bumped when the layout written below changes, so old caches get rebuilt.
LAYOUT=1
# The suites whose binutils are provisioned, oldest first.
SUITES=(bookworm trixie sid)

# host_suite prints the Debian suite the machine runs: its codename, or sid
# when its apt sources name sid or unstable (sid's os-release carries the
# codename of testing, the same for both).
host_suite() {
	local codename pretty
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	# shellcheck disable=SC1091
	pretty=$(. /etc/os-release && echo "${PRETTY_NAME:-}")
	if [[ $pretty == */sid ]] && apt_suites | grep -qxE 'sid|unstable'; then
		echo sid
		return
	fi
	echo "${codename:-bookworm}"
}

# apt_suites prints the suites of the system's deb sources, one a line.
apt_suites() {
	{
		awk '$1 == "deb" {
			i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			print $(i + 1) }' /etc/apt/sources.list 2>/dev/null
		awk 'tolower($1) == "suites:" { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/*.sources 2>/dev/null
	} || true
}

# libc6-dev: cgo needs the C headers, which gcc only recommends. The cross
# compilers check the kernel's signal frame layouts against the C headers
# and compile real code for the other targets.
# dpkg-dev: dpkg-source unpacks glibc's source package (step 7).
# The shellcheck program: actionlint checks the workflows' run: scripts with it.
# python3: the conformance kit's second reference unwinder (kit/python).
# g++ and the cross g++: check builds C++ programs with exceptions for its tests.
HOST_PACKAGES=(gcc g++ libc6-dev make pkg-config dpkg-dev shellcheck python3 binutils binutils-x86-64-linux-gnu
	binutils-aarch64-linux-gnu binutils-s390x-linux-gnu ca-certificates
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross gcc-s390x-linux-gnu g++-s390x-linux-gnu
	libc6-dev-s390x-cross elfutils dwz lld)

# shellcheck source=ci/debsrc.sh
source "$(dirname "${BASH_SOURCE[0]}")/debsrc.sh"

log() { printf 'setup: %s\n' "$*" >&2; }
die() {
	printf 'setup: error: %s\n' "$*" >&2
	exit 1
}

SUMMARY=()
note() { SUMMARY+=("$*"); }

need_root() {
	[[ $(id -u) == 0 ]] || die "$1 is missing and installing it needs root: run 'make setup' as root"
}

# --- locking ----------------------------------------------------------------

# Several people may run 'make test' at once; only one setup may work at a
# time, the others wait and then find everything in place.
lock() {
	if [[ -w $CACHE || ( ! -e $CACHE && $(id -u) == 0 ) ]]; then
		mkdir -p "$CACHE"
		exec 9>"$CACHE/.setup.lock"
		flock 9
	fi
}

# --- 1. host packages -------------------------------------------------------

host_packages_missing() {
	local p status
	for p in "${HOST_PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $status == "install ok installed" ]] || echo "$p"
	done
}

setup_host_packages() {
	local missing
	missing=$(host_packages_missing | xargs)
	if [[ -z $missing ]]; then
		note "host packages: present"
		return
	fi
	need_root "host packages ($missing)"
	log "installing host packages: $missing"
	apt-get update -qq || die "apt-get update failed for the system's sources"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		die "apt-get install failed for: $missing"
	note "host packages: installed $missing"
}

# --- private apt for foreign suites -----------------------------------------

# debian_mirror prints the URI of the system's main Debian archive: the first
# deb source whose suite is the host's codename (not -security/-updates).
debian_mirror() {
	if [[ -n ${SFCONFORM_DEBIAN_MIRROR:-} ]]; then
		echo "$SFCONFORM_DEBIAN_MIRROR"
		return
	fi
	local codename=$HOST_SUITE uri="" c
	# sid's sources may call it unstable.
	for c in "$codename" $([[ $codename == sid ]] && echo unstable); do
		[[ -z $uri ]] || break
		uri=$(debian_mirror_deb822 "$c")
		if [[ -z $uri && -f /etc/apt/sources.list ]]; then
			uri=$(awk -v c="$c" '$1 == "deb" {
				i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == c) { print $i; exit }
			}' /etc/apt/sources.list)
		fi
	done
	[[ -n $uri ]] || die "cannot find the Debian archive for '$codename' in the system's apt sources (set SFCONFORM_DEBIAN_MIRROR)"
	echo "${uri%/}"
}

debian_mirror_deb822() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk -v c="$1" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " c " ") && uris != "" && !done) {
					split(uris, u, " "); print u[1]; done = 1
				}
				types = suites = uris = ""
			}
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "uris:" { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
			END { flush() }
		' "$f"
	done | head -n1
}

debian_keyring() {
	local k
	for k in /usr/share/keyrings/debian-archive-keyring.gpg /etc/apt/trusted.gpg.d; do
		[[ -e $k ]] && {
			echo "$k"
			return
		}
	done
	die "no Debian archive keyring found (install debian-archive-keyring)"
}

# apt_for SUITE prepares a private apt configuration for SUITE and prints the
# path of its config file. Nothing under /etc/apt or /var/lib/apt is used for
# state: lists, caches and the dpkg status are all private.
#
# apt_for SUITE src does the same for SUITE's source packages (a deb-src
# list, for apt-get source), in a directory of its own.
apt_for() {
	local suite=$1 d="$CACHE/apt/$1" kind=deb index='*_Packages*'
	if [[ ${2:-} == src ]]; then
		d="$CACHE/apt/$1-src" kind=deb-src index='*_Sources*'
	fi
	if [[ ! -f $d/apt.conf ]]; then
		local mirror keyring
		mirror=$(debian_mirror)
		keyring=$(debian_keyring)
		mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/sources.list.d" "$d/preferences.d" "$d/debs"
		: >"$d/status"
		echo "$kind [signed-by=$keyring] $mirror $suite main" >"$d/sources.list"
		cat >"$d/apt.conf" <<EOF
Dir::Etc::sourcelist "$d/sources.list";
Dir::Etc::sourceparts "$d/sources.list.d";
Dir::Etc::preferences "$d/preferences";
Dir::Etc::preferencesparts "$d/preferences.d";
Dir::State "$d";
Dir::State::lists "$d/lists";
Dir::State::status "$d/status";
Dir::State::extended_states "$d/extended_states";
Dir::Cache "$d";
Dir::Cache::archives "$d/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
#clear APT::Update::Post-Invoke;
#clear APT::Update::Post-Invoke-Success;
#clear DPkg::Post-Invoke;
EOF
	fi
	# Lists older than six hours are fetched again: sid moves daily, and
	# an old list names .debs the archive no longer has. This only runs
	# when something is missing, never on a warm setup. FRESH_LISTS=1
	# fetches them whatever their age (fetch_debs, after a download the
	# archive no longer serves).
	if [[ ${FRESH_LISTS:-} == 1 ]]; then
		# Whatever apt thinks of the lists it has: fetch them all.
		rm -f "$d"/lists/$index "$d"/lists/*Release*
	fi
	if [[ -z $(find "$d/lists" -maxdepth 1 -name "$index" -mmin -360 -print -quit) ]]; then
		log "fetching the $kind lists of Debian $suite (private apt state in $d)"
		# apt-get update exits 0 when an index fails to download: look at
		# its messages and at what it left.
		if ! APT_CONFIG="$d/apt.conf" apt-get update -qq >"$d/update.log" 2>&1 ||
			grep -q -E '^(E:|W: Failed)' "$d/update.log" ||
			[[ -z $(find "$d/lists" -maxdepth 1 -name "$index" -mmin -360 -print -quit) ]]; then
			die "cannot fetch the package lists of Debian '$suite' from $(debian_mirror): $(grep -E '^(E|W):' "$d/update.log" | head -n3)"
		fi
	fi
	echo "$d/apt.conf"
}

# suite_version SUITE PACKAGE prints the version SUITE serves of PACKAGE.
suite_version() {
	local conf
	conf=$(apt_for "$1")
	{ APT_CONFIG=$conf apt-cache show --no-all-versions "$2" 2>/dev/null || true; } | awk '/^Version:/ { print $2; exit }'
}

# fetch_debs SUITE DIR PACKAGE... downloads the packages' .debs into DIR,
# naming the first one that the suite does not have.
fetch_debs() {
	local suite=$1 dir=$2 conf p
	shift 2
	conf=$(apt_for "$suite")
	local info
	info=$(APT_CONFIG=$conf apt-cache show --no-all-versions "$@" 2>/dev/null || true)
	for p in "$@"; do
		grep -qx "Package: $p" <<<"$info" ||
			die "package '$p' is not in Debian '$suite' (mirror $(debian_mirror))"
	done
	mkdir -p "$dir"
	if ! (cd "$dir" && APT_CONFIG=$conf apt-get download -qq "$@" >"$dir/download.log" 2>&1); then
		# The archive moved since the lists were fetched (sid publishes
		# several times a day and drops the .debs it replaces): fetch the
		# lists again and download what they name now.
		log "Debian $suite moved since its lists were fetched; fetching them again"
		conf=$(FRESH_LISTS=1 apt_for "$suite")
		(cd "$dir" && APT_CONFIG=$conf apt-get download -qq "$@" >"$dir/download.log" 2>&1) ||
			die "cannot download from Debian '$suite': $* ($(tail -n3 "$dir/download.log"))"
	fi
}

# --- 2. Unicorn 2.1 ---------------------------------------------------------

UNICORN_STAMP=/usr/local/lib/.sfconform-unicorn

unicorn_ok() {
	[[ -f $UNICORN_STAMP ]] &&
		[[ -e /usr/local/lib/libunicorn.so ]] &&
		[[ -f /usr/local/include/unicorn/unicorn.h ]] &&
		[[ -f /usr/local/lib/pkgconfig/unicorn.pc ]] &&
		[[ $(cat "$UNICORN_STAMP") == 2.1.* ]]
}

setup_unicorn() {
	if unicorn_ok; then
		note "unicorn: $(cat "$UNICORN_STAMP") in /usr/local (present)"
		return
	fi
	need_root "Unicorn 2.1"
	local suite ver=""
	for suite in sid trixie; do
		ver=$(suite_version "$suite" libunicorn2t64)
		[[ $ver == 2.1.* ]] && break
		ver=""
	done
	[[ -n $ver ]] || die "neither Debian sid nor trixie serves libunicorn2t64 2.1.x"
	log "installing Unicorn $ver from Debian $suite under /usr/local"
	local tmp
	tmp=$(mktemp -d)
	fetch_debs "$suite" "$tmp/debs" libunicorn2t64 libunicorn-dev
	local deb
	for deb in "$tmp"/debs/*.deb; do
		dpkg-deb -x "$deb" "$tmp/root"
	done
	local libdir="$tmp/root/usr/lib/x86_64-linux-gnu"
	[[ -d $libdir ]] || die "libunicorn from Debian $suite has no usr/lib/x86_64-linux-gnu"
	mkdir -p /usr/local/lib/pkgconfig /usr/local/include
	# Others may be building against /usr/local right now: every file is
	# put in place by a rename, so none is ever missing or half written.
	local f
	for f in "$libdir"/libunicorn.so*; do
		cp -a "$f" "/usr/local/lib/.${f##*/}.new"
		mv -fT "/usr/local/lib/.${f##*/}.new" "/usr/local/lib/${f##*/}"
	done
	rm -rf /usr/local/include/.unicorn.new /usr/local/include/.unicorn.old
	cp -a "$tmp/root/usr/include/unicorn" /usr/local/include/.unicorn.new
	[[ -d /usr/local/include/unicorn ]] && mv -T /usr/local/include/unicorn /usr/local/include/.unicorn.old
	mv -T /usr/local/include/.unicorn.new /usr/local/include/unicorn
	rm -rf /usr/local/include/.unicorn.old
	# Debian's unicorn.pc names its directories with or without a prefix
	# variable depending on the release: drop them all and define our own.
	{
		# shellcheck disable=SC2016 # the ${...} are pkg-config's
		printf 'prefix=/usr/local\nexec_prefix=${prefix}\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n'
		grep -Ev '^(prefix|exec_prefix|libdir|includedir)=' "$libdir/pkgconfig/unicorn.pc"
	} >/usr/local/lib/pkgconfig/.unicorn.pc.new
	mv -f /usr/local/lib/pkgconfig/.unicorn.pc.new /usr/local/lib/pkgconfig/unicorn.pc
	ldconfig
	rm -rf "$tmp"
	local upstream=${ver%%-*}
	upstream=${upstream#*:}
	echo "$upstream" >"$UNICORN_STAMP"
	note "unicorn: $upstream from Debian $suite installed in /usr/local"
}

# --- 3. Ginkgo CLI ----------------------------------------------------------

setup_ginkgo() {
	local want have
	want=$(awk '$1 == "github.com/onsi/ginkgo/v2" { sub(/^v/, "", $2); print $2 }' "$REPO/go.mod")
	[[ -n $want ]] || die "go.mod does not require github.com/onsi/ginkgo/v2"
	have=$(ginkgo version 2>/dev/null | awk '{ print $NF }' || true)
	if [[ $have == "$want" ]]; then
		note "ginkgo: $have (present)"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH: install Go (see go.mod) first"
	local bin=${GOBIN:-/usr/local/bin}
	[[ -w $bin ]] || need_root "the Ginkgo CLI"
	log "installing the Ginkgo CLI $want into $bin"
	(cd "$REPO" && GOBIN=$bin go install github.com/onsi/ginkgo/v2/ginkgo) ||
		die "go install github.com/onsi/ginkgo/v2/ginkgo failed"
	note "ginkgo: $want installed in $bin"
}

# go_tools prints the module path and version of each module a tool
# directive of go.mod belongs to, one "path version" a line.
go_tools() {
	awk '
		$1 == "require" && $2 != "(" { req[$2] = $3 }
		$1 == "require" && $2 == "(" { inreq = 1; next }
		inreq && $1 == ")" { inreq = 0; next }
		inreq { req[$1] = $2 }
		$1 == "tool" && $2 != "(" { tools[$2] = 1 }
		$1 == "tool" && $2 == "(" { intool = 1; next }
		intool && $1 == ")" { intool = 0; next }
		intool { tools[$1] = 1 }
		END {
			for (t in tools) {
				best = ""
				for (m in req) if ((t == m || index(t, m "/") == 1) && length(m) > length(best)) best = m
				if (best == "") { print "? " t; continue }
				print best, req[best], t
			}
		}' "$REPO/go.mod" | sort
}

# setup_go_tools fetches the modules of go.mod's tools and builds each tool
# once (into Go's build cache), so that `go tool NAME` needs no network.
# Present when every such module is in the module cache.
setup_go_tools() {
	local tools mod ver tool dir missing=()
	tools=$(go_tools)
	[[ -n $tools ]] || return 0
	command -v go >/dev/null || die "go is not on PATH: install Go (see go.mod) first"
	# Go's default module cache first; `go env` (a tenth of a second) only
	# when a module is not there.
	local modcache=${GOMODCACHE:-${GOPATH:-$HOME/go}}
	[[ -n ${GOMODCACHE:-} ]] || modcache="${modcache%%:*}/pkg/mod"
	while read -r mod ver tool; do
		[[ $mod != "?" ]] || die "go.mod's tool $ver belongs to no module go.mod requires"
		# The module cache spells upper case letters as '!' and the lower one.
		# shellcheck disable=SC2001 # \L: bash has no lower-casing replace
		dir="$(sed 's/[A-Z]/!\L&/g' <<<"$mod")@$ver"
		if [[ ! -d $modcache/$dir ]]; then
			modcache=$(cd "$REPO" && go env GOMODCACHE)
			[[ -d $modcache/$dir ]] || missing+=("$mod@$ver:$tool")
		fi
	done <<<"$tools"
	if ((${#missing[@]} == 0)); then
		note "go tools: $(awk '{ printf "%s%s@%s", (NR > 1 ? ", " : ""), $3, $2 }' <<<"$tools") (present)"
		return
	fi
	local m
	for m in "${missing[@]}"; do
		log "fetching and building the Go tool ${m#*:} (${m%%:*})"
		(cd "$REPO" && go mod download "${m%%:*}" && go build -o /dev/null "${m#*:}") ||
			die "cannot fetch or build the Go tool ${m#*:} (${m%%:*}) named in go.mod"
		note "go tools: ${m#*:} fetched (${m%%:*})"
	done
}

# --- 4. GNU binutils in three versions -------------------------------------

# dep_closure SUITE PACKAGE... prints the packages and everything they depend
# on in SUITE (first alternative of each dependency), one a line. One
# apt-cache call per level of the tree: each call reads all of the suite's
# lists, which takes a second or two.
dep_closure() {
	local suite=$1 conf
	shift
	conf=$(apt_for "$suite")
	local -A seen=()
	local level=("$@") next info p d
	while ((${#level[@]})); do
		for p in "${level[@]}"; do seen[$p]=1; done
		info=$(APT_CONFIG=$conf apt-cache show --no-all-versions "${level[@]}" 2>/dev/null || true)
		for p in "${level[@]}"; do
			grep -qx "Package: $p" <<<"$info" ||
				die "package '$p' is not in Debian '$suite' (mirror $(debian_mirror))"
		done
		next=()
		for d in $(awk '/^(Pre-)?Depends:/ { sub(/^[^:]*: */, ""); n = split($0, a, /, */)
				for (i = 1; i <= n; i++) { split(a[i], alt, / *\| */); sub(/[ :(].*/, "", alt[1]); print alt[1] } }' <<<"$info" | sort -u); do
			[[ -n ${seen[$d]:-} ]] || next+=("$d")
		done
		level=("${next[@]}")
	done
	printf '%s\n' "${!seen[@]}" | sort
}

# extract_root SUITE ROOT PACKAGE... downloads the packages (with their
# dependencies unless NODEPS=1) and unpacks them all into ROOT; no
# maintainer scripts run. The .debs are not kept.
extract_root() {
	local suite=$1 root=$2
	shift 2
	local pkgs debs="$CACHE/apt/$suite/debs.$$"
	if [[ ${NODEPS:-} == 1 ]]; then
		pkgs=$*
	else
		pkgs=$(dep_closure "$suite" "$@")
	fi
	rm -rf "$debs"
	# shellcheck disable=SC2086
	fetch_debs "$suite" "$debs" $pkgs
	mkdir -p "$root"
	local p deb
	for p in $pkgs; do
		deb=$(find "$debs" -maxdepth 1 -name "${p}_*.deb" -print -quit)
		[[ -n $deb ]] || die "download of '$p' from Debian '$suite' left no .deb"
		dpkg-deb -x "$deb" "$root"
		# The exact version unpacked, which results record: the archive
		# may have moved since the version was first looked up.
		printf '%s %s\n' "$p" "$(dpkg-deb -f "$deb" Version)" >>"$root/.sfconform-packages"
	done
	rm -rf "$debs"
}

# root_version ROOT PACKAGE prints the version of PACKAGE last unpacked
# into ROOT.
root_version() {
	awk -v p="$2" '$1 == p { v = $2 } END { print v }' "$1/.sfconform-packages" 2>/dev/null || true
}

# root_loader ROOT prints the dynamic loader inside ROOT.
root_loader() {
	local l
	for l in usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 lib64/ld-linux-x86-64.so.2; do
		if [[ -e $1/$l ]]; then
			echo "$1/$l"
			return
		fi
	done
	die "no ld-linux-x86-64.so.2 in $1 (libc6 not unpacked?)"
}

root_libpath() {
	local r=$1
	echo "$r/usr/lib/x86_64-linux-gnu:$r/lib/x86_64-linux-gnu:$r/usr/lib:$r/lib"
}

# write_wrapper FILE TARGET [ROOT]: FILE runs TARGET, through ROOT's loader
# and libraries when ROOT is given.
write_wrapper() {
	local file=$1 target=$2 root=${3:-}
	if [[ -z $root ]]; then
		printf '#!/bin/sh\nexec %s "$@"\n' "$target" >"$file"
	else
		printf '#!/bin/sh\n# %s with the C library of its own Debian suite, unpacked in %s.\nexec %s --library-path %s --argv0 %s %s "$@"\n' \
			"${target##*/}" "$root" "$(root_loader "$root")" "$(root_libpath "$root")" "$target" "$target" >"$file"
	fi
	chmod 755 "$file"
}

# tool_version WRAPPER prints the version the tool reports, e.g. 2.44 or
# 2.47.50.20261021.
tool_version() {
	"$1" --version 2>/dev/null | awk 'NR == 1 { print $NF; exit }'
}

# short_version 2.47.50.20261021 -> 2.47.50: the date of a snapshot is left
# out of the toolchain's name.
short_version() {
	echo "$1" | awk -F. '{ v = $1 "." $2; if (NF > 2 && length($3) < 8) v = v "." $3; print v }'
}

binutils_stamp() { echo "$CACHE/stamps/binutils-$1"; }

# binutils_ok SUITE: the stamp names a toolchain directory whose wrappers all
# exist, and whose private root (if any) is still there.
binutils_ok() {
	local stamp dir t x root
	stamp=$(binutils_stamp "$1")
	[[ -f $stamp ]] || return 1
	[[ $(sed -n 's/^layout=//p' "$stamp") == "$LAYOUT" ]] || return 1
	dir=$(sed -n 's/^dir=//p' "$stamp")
	[[ -f $dir/toolchain.conf ]] || return 1
	for t in "${TRIPLES[@]}"; do
		for x in "${TOOLS[@]}"; do
			[[ -x $dir/bin/$t-$x ]] || return 1
		done
	done
	root=$(sed -n 's/^root=//p' "$dir/toolchain.conf")
	[[ -z $root || -d $root ]]
}

# install_toolchain SUITE PKGVER [ROOT]: writes the wrappers for the tools
# in ROOT (or the host's /usr/bin), names the toolchain after the version its
# assembler reports, and writes its description toolchain.conf.
install_toolchain() {
	local suite=$1 pkgver=$2 root=${3:-}
	local staging="$CACHE/toolchains/.staging-$suite" t x
	rm -rf "$staging"
	mkdir -p "$staging/bin"
	for t in "${TRIPLES[@]}"; do
		for x in "${TOOLS[@]}"; do
			if [[ -n $root ]]; then
				[[ -x $root/usr/bin/$t-$x ]] || die "$t-$x is not in Debian $suite's binutils packages"
				write_wrapper "$staging/bin/$t-$x" "$root/usr/bin/$t-$x" "$root"
			else
				[[ -x /usr/bin/$t-$x ]] || die "/usr/bin/$t-$x is missing (host package binutils-${t%%-*}-linux-gnu)"
				write_wrapper "$staging/bin/$t-$x" "/usr/bin/$t-$x"
			fi
		done
	done
	local version v
	version=$(tool_version "$staging/bin/x86_64-linux-gnu-as")
	[[ $version =~ ^[0-9]+\.[0-9]+ ]] ||
		die "binutils from Debian $suite do not run: '$staging/bin/x86_64-linux-gnu-as --version' printed '$version'"
	for t in "${TRIPLES[@]}"; do
		for x in "${TOOLS[@]}"; do
			v=$(tool_version "$staging/bin/$t-$x")
			[[ $v == "$version" ]] || die "$t-$x from Debian $suite reports version '$v', not '$version'"
		done
	done
	cat >"$staging/toolchain.conf" <<EOF
# Written by ci/setup.sh; read by the toolchain package.
name=gas-$(short_version "$version")
version=$version
suite=$suite
package=$pkgver
triples=${TRIPLES[*]}
root=$root
EOF
	local dir="$CACHE/toolchains/binutils-$version"
	rm -rf "$dir"
	mv "$staging" "$dir"
	mkdir -p "$CACHE/stamps"
	printf 'layout=%s\ndir=%s\n' "$LAYOUT" "$dir" >"$(binutils_stamp "$suite")"
	note "binutils ($suite): $version in $dir"
}

# check_libs SUITE ROOT BINARY fails naming every shared library BINARY
# cannot find in ROOT.
check_libs() {
	local suite=$1 root=$2 bin=$3 missing
	missing=$("$(root_loader "$root")" --library-path "$(root_libpath "$root")" --list "$bin" 2>&1 |
		awk '/not found/ { print $1 }' | tr '\n' ' ')
	[[ -z $missing ]] || die "$bin from Debian $suite needs libraries its packages do not provide: $missing"
}

BINUTILS_PACKAGES=(binutils-x86-64-linux-gnu binutils-aarch64-linux-gnu binutils-s390x-linux-gnu)

# host_native SUITE: SUITE's binutils are the host's own /usr/bin tools.
# sid's never are: the host's sid is a snapshot of the day it was installed,
# and sid's private root also holds llvm and libsframe, of one day with it.
host_native() {
	[[ $1 == "$HOST_SUITE" && $1 != sid ]]
}

# setup_binutils SUITE provisions SUITE's binutils; the host's own suite
# uses the installed /usr/bin tools, every other one a private root.
setup_binutils() {
	local suite=$1
	if binutils_ok "$suite"; then
		note "binutils ($suite): $(sed -n 's/^dir=//p' "$(binutils_stamp "$suite")") (present)"
		return
	fi
	[[ -w $CACHE ]] || need_root "GNU binutils from Debian $suite"
	if host_native "$suite"; then
		install_toolchain "$suite" "$(dpkg-query -W -f='${Version}' binutils-x86-64-linux-gnu)"
		return
	fi
	local pkgver root="$CACHE/roots/$suite"
	pkgver=$(suite_version "$suite" binutils-x86-64-linux-gnu)
	[[ -n $pkgver ]] || die "package 'binutils-x86-64-linux-gnu' is not in Debian '$suite'"
	log "provisioning GNU binutils $pkgver from Debian $suite"
	rm -rf "$root"
	extract_root "$suite" "$root" "${BINUTILS_PACKAGES[@]}"
	check_libs "$suite" "$root" "$root/usr/bin/x86_64-linux-gnu-as"
	check_libs "$suite" "$root" "$root/usr/bin/x86_64-linux-gnu-ld"
	pkgver=$(root_version "$root" binutils-x86-64-linux-gnu)
	install_toolchain "$suite" "$pkgver" "$root"
}

# --- 5. sid's llvm-mc and llvm-readobj (optional) --------------------------

# LLVM's assembler also emits SFrame (llvm-mc --gsframe), and its
# llvm-readobj --sframe dumps it. The newest LLVM sid serves goes into sid's
# private root, behind $CACHE/toolchains/llvm-<major>/bin/llvm-{mc,readobj}.
LLVM_TOOLS=(llvm-mc llvm-readobj)

# llvm_wrappers DIR BINDIR ROOT writes a wrapper in DIR/bin for each of
# LLVM_TOOLS that BINDIR has and DIR lacks; it fails naming a tool BINDIR
# does not have.
llvm_wrappers() {
	local dir=$1 bindir=$2 root=$3 x
	for x in "${LLVM_TOOLS[@]}"; do
		[[ -x $dir/bin/$x ]] && continue
		[[ -x $bindir/$x ]] || die "llvm from Debian sid has no bin/$x in $bindir"
		check_libs sid "$root" "$bindir/$x"
		write_wrapper "$dir/bin/$x" "$bindir/$x" "$root"
		note "$x (sid): wrapper written in $dir/bin"
	done
}

setup_llvm() {
	if [[ ${SFCONFORM_SKIP_LLVM:-} == 1 ]]; then
		note "llvm-mc, llvm-readobj: skipped (SFCONFORM_SKIP_LLVM=1)"
		return
	fi
	local stamp="$CACHE/stamps/llvm-sid" dir mc
	if [[ -f $stamp ]]; then
		dir=$(sed -n 's/^dir=//p' "$stamp")
		mc=$(sed -n 's/^mc=//p' "$stamp")
		if [[ -x $dir/bin/llvm-mc && -x $mc ]]; then
			# Caches from before llvm-readobj was wrapped: the package
			# unpacked for llvm-mc has it already.
			llvm_wrappers "$dir" "$(dirname "$mc")" "$(sed -n 's/^root=//p' "$dir/llvm.conf")"
			note "llvm-mc, llvm-readobj (sid): $dir (present)"
			return
		fi
	fi
	[[ -w $CACHE ]] || need_root "llvm-mc from Debian sid"
	local root="$CACHE/roots/sid" major="" n
	[[ -d $root ]] || die "sid's root $root is missing: provision sid's binutils first"
	for n in 25 24 23 22 21; do
		if [[ -n $(suite_version sid "libllvm$n") && -n $(suite_version sid "llvm-$n") ]]; then
			major=$n
			break
		fi
	done
	[[ -n $major ]] || die "Debian sid serves none of llvm-21 .. llvm-25"
	log "provisioning llvm-mc $major from Debian sid"
	# Only the llvm-$major package itself, without the runtime and linker
	# tools it depends on: llvm-mc needs libllvm$major alone.
	extract_root sid "$root" "libllvm$major"
	NODEPS=1 extract_root sid "$root" "llvm-$major"
	mc="$root/usr/lib/llvm-$major/bin/llvm-mc"
	local pkgver
	pkgver=$(root_version "$root" "llvm-$major")
	[[ -x $mc ]] || die "llvm-$major from Debian sid has no bin/llvm-mc"
	dir="$CACHE/toolchains/llvm-$major"
	rm -rf "$dir"
	mkdir -p "$dir/bin"
	llvm_wrappers "$dir" "$(dirname "$mc")" "$root"
	local version
	version=$("$dir/bin/llvm-mc" --version | awk '/LLVM version/ { print $NF; exit }')
	[[ -n $version ]] || die "llvm-mc from Debian sid does not run: $dir/bin/llvm-mc --version"
	printf '# Written by ci/setup.sh.\nname=llvm-mc-%s\nversion=%s\nsuite=sid\npackage=%s\nroot=%s\n' "$major" "$version" "$pkgver" "$root" >"$dir/llvm.conf"
	printf 'layout=%s\ndir=%s\nmc=%s\n' "$LAYOUT" "$dir" "$mc" >"$stamp"
	note "llvm-mc (sid): $version in $dir"
}

# --- 5b. the build pipelines' tools -----------------------------------------

# Package pipelines links with lld and rewrites linked programs with
# eu-strip, dwz and BOLT (step 1 installs the host suite's elfutils, dwz and
# lld). lld and llvm-bolt of the LLVM major step 5 provisioned come from sid,
# without their dependencies beyond libllvm (step 5) and z3 (BOLT's solver).
PIPELINE_LLVM_TOOLS=(ld.lld llvm-bolt)

setup_pipeline_tools() {
	if [[ ${SFCONFORM_SKIP_LLVM:-} == 1 ]]; then
		note "lld, llvm-bolt (sid): skipped (SFCONFORM_SKIP_LLVM=1)"
		return
	fi
	local stamp="$CACHE/stamps/llvm-sid" dir root major x missing=()
	[[ -f $stamp ]] || die "llvm from sid is not provisioned (step 5)"
	dir=$(sed -n 's/^dir=//p' "$stamp")
	root=$(sed -n 's/^root=//p' "$dir/llvm.conf")
	major=${dir##*/llvm-}
	for x in "${PIPELINE_LLVM_TOOLS[@]}"; do
		[[ -x $dir/bin/$x && -x $root/usr/lib/llvm-$major/bin/$x ]] || missing+=("$x")
	done
	if ((${#missing[@]} == 0)); then
		note "ld.lld, llvm-bolt (sid): $dir/bin (present)"
		return
	fi
	[[ -w $CACHE ]] || need_root "lld and llvm-bolt from Debian sid"
	log "provisioning lld-$major and bolt-$major from Debian sid"
	NODEPS=1 extract_root sid "$root" "lld-$major" "bolt-$major" libz3-4
	for x in "${PIPELINE_LLVM_TOOLS[@]}"; do
		[[ -x $root/usr/lib/llvm-$major/bin/$x ]] || die "lld-$major/bolt-$major from Debian sid have no bin/$x"
		check_libs sid "$root" "$root/usr/lib/llvm-$major/bin/$x"
		rm -f "$dir/bin/$x"
		write_wrapper "$dir/bin/$x" "$root/usr/lib/llvm-$major/bin/$x" "$root"
		"$dir/bin/$x" --version >/dev/null || die "$x from Debian sid does not run: $dir/bin/$x --version"
	done
	note "ld.lld, llvm-bolt (sid): $(root_version "$root" "lld-$major") in $dir/bin"
}

# --- 6. the libsframe consumer ---------------------------------------------

# consumer_hash DIR prints the content hash of a C consumer's sources (DIR
# and the shared cprotocol), as consumer.SourceHash computes it: the built
# binary's directory is named after it, so branches sharing this cache never
# run each other's builds.
consumer_hash() {
	(cd "$REPO/consumer" && find cprotocol "$1" -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
}

# consumer_works BINARY TARGET VERSION: the built consumer says hello and
# reads SFrame VERSION sections of TARGET.
consumer_works() {
	local out
	out=$(printf 'hello sfconform-unwind 1\nsupports %s %s\nquit\n' "$2" "$3" | "$1" 2>&1) || true
	[[ $(sed -n 2p <<<"$out") == yes ]] || {
		printf '%s\n' "$out" >&2
		return 1
	}
}

setup_libsframe_consumer() {
	local hash dir bin=sfconform-libsframe
	hash=$(consumer_hash libsframe)
	dir="$CACHE/consumers/libsframe-$hash"
	if [[ -x $dir/$bin && -f $dir/consumer.conf ]]; then
		note "libsframe consumer: $dir (present)"
		return
	fi
	[[ -w $CACHE ]] || need_root "the libsframe consumer"
	local root="$CACHE/roots/sid" ver
	[[ -d $root ]] || die "sid's root $root is missing: provision sid's binutils first (step 4)"
	local lib="$root/usr/lib/x86_64-linux-gnu/libsframe.a" stamp="$CACHE/stamps/libsframe-dev-sid"
	if [[ ! -f $lib || ! -f $root/usr/include/sframe-api.h || ! -f $stamp ]]; then
		ver=$(suite_version sid libsframe-dev)
		[[ -n $ver ]] || die "package 'libsframe-dev' is not in Debian 'sid' (mirror $(debian_mirror))"
		log "unpacking libsframe-dev $ver from Debian sid into $root"
		NODEPS=1 extract_root sid "$root" libsframe-dev
		[[ -f $lib ]] || die "libsframe-dev $ver from Debian sid has no ${lib#"$root"/}"
		[[ -f $root/usr/include/sframe-api.h ]] || die "libsframe-dev $ver from Debian sid has no usr/include/sframe-api.h"
		mkdir -p "$CACHE/stamps"
		echo "version=$ver" >"$stamp"
	fi
	ver=$(sed -n 's/^version=//p' "$stamp")
	log "building the libsframe consumer against libsframe-dev $ver"
	local staging="$CACHE/consumers/.staging-libsframe-$$"
	rm -rf "$staging"
	mkdir -p "$staging"
	# -idirafter: sid's root may hold headers of other packages; the host's
	# own C library headers come first.
	gcc -O2 -g -Wall -Wextra -std=gnu11 \
		-I "$REPO/consumer/libsframe/include" -idirafter "$root/usr/include" \
		-DLIBSFRAME_VERSION="\"$ver\"" \
		"$REPO/consumer/libsframe/libsframe.c" "$REPO/consumer/cprotocol/protocol.c" "$lib" \
		-o "$staging/$bin" 2>"$staging/build.log" ||
		die "building the libsframe consumer against sid's libsframe-dev $ver failed: $(tail -n5 "$staging/build.log")"
	consumer_works "$staging/$bin" x86-64 3 ||
		die "the libsframe consumer built in $staging does not answer 'supports x86-64 3' with yes"
	printf '# Written by ci/setup.sh.\nname=libsframe\nversion=%s\nsuite=sid\npackage=libsframe-dev\nsource=%s\n' "$ver" "$hash" >"$staging/consumer.conf"
	rm -rf "$dir"
	mv "$staging" "$dir"
	note "libsframe consumer: libsframe $ver, in $dir"
}

# --- 7. the glibc consumer -------------------------------------------------

# glibc's files the consumer compiles, as paths in its source tree.
GLIBC_FILES=(sysdeps/generic/sframe-read.c sysdeps/generic/sframe-read.h sysdeps/generic/sframe.c
	sysdeps/generic/sframe.h sysdeps/generic/uw-sigframe.h sysdeps/unix/sysv/linux/x86_64/uw-sigframe.h
	sysdeps/unix/sysv/linux/aarch64/uw-sigframe.h sysdeps/unix/sysv/linux/aarch64/kernel_rt_sigframe.h)

# How the consumer is compiled (glibc_consumer_compile, AARCH64_UCONTEXT):
# shared with ci/verify-fixes.sh.
# shellcheck source=consumer/glibc/build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../consumer/glibc/build.sh"

# glibc_sources prints a directory holding GLIBC_FILES from sid's newest
# glibc source package that the archive still serves: when the newest
# revision's files are gone from the pool (sid moves faster than a list
# six hours old), the one before it, and so on, down to 2.42, the first
# with an SFrame reader.
glibc_sources() {
	local stamp="$CACHE/stamps/glibc-src-sid" dir f
	if [[ -f $stamp ]]; then
		dir=$(sed -n 's/^dir=//p' "$stamp")
		for f in "${GLIBC_FILES[@]}"; do
			[[ -f $dir/$f ]] || dir=
		done
		if [[ -n $dir ]]; then
			echo "$dir"
			return
		fi
	fi
	command -v dpkg-source >/dev/null || die "dpkg-source is missing (package dpkg-dev)"
	local conf versions v tmp got="" tried=()
	conf=$(apt_for sid src)
	versions=$(APT_CONFIG=$conf apt-cache showsrc glibc 2>/dev/null | awk '/^Version:/ { print $2 }' |
		while read -r v; do dpkg --compare-versions "$v" ge 2.42 && echo "$v"; done | sort -u -r -V)
	[[ -n $versions ]] || die "Debian 'sid' serves no glibc source package of version 2.42 or later (mirror $(debian_mirror))"
	tmp=$(mktemp -d "$CACHE/.glibc-src.XXXXXX")
	for v in $versions; do
		tried+=("$v")
		log "fetching glibc $v's source package from Debian sid"
		if (cd "$tmp" && APT_CONFIG=$conf apt-get source --download-only -qq "glibc=$v" >"$tmp/download.log" 2>&1) &&
			[[ -f $tmp/glibc_${v#*:}.dsc ]]; then
			got=$v
			break
		fi
		log "glibc $v: $(grep -m1 -E '^(E|W):' "$tmp/download.log" || echo 'no .dsc'); trying the revision before it"
		rm -f "$tmp"/glibc_*
		((${#tried[@]} < 4)) || break
	done
	[[ -n $got ]] || die "cannot download glibc's source package from Debian 'sid' (tried ${tried[*]}; mirror $(debian_mirror))"
	log "unpacking glibc $got (Debian's patches applied)"
	(cd "$tmp" && dpkg-source -x "glibc_${got#*:}.dsc" tree >"$tmp/unpack.log" 2>&1) ||
		die "dpkg-source cannot unpack glibc $got from Debian sid: $(tail -n3 "$tmp/unpack.log")"
	dir="$CACHE/sources/glibc-$got"
	rm -rf "$dir"
	for f in "${GLIBC_FILES[@]}"; do
		[[ -f $tmp/tree/$f ]] || die "glibc $got from Debian sid has no $f"
		mkdir -p "$dir/$(dirname "$f")"
		cp "$tmp/tree/$f" "$dir/$f"
	done
	rm -rf "$tmp"
	mkdir -p "$CACHE/stamps"
	printf 'version=%s\ndir=%s\n' "$got" "$dir" >"$stamp"
	echo "$dir"
}

setup_glibc_consumer() {
	local hash dir bin=sfconform-glibc
	hash=$(consumer_hash glibc)
	dir="$CACHE/consumers/glibc-$hash"
	if [[ -x $dir/$bin && -f $dir/consumer.conf ]]; then
		note "glibc consumer: $dir (present)"
		return
	fi
	[[ -w $CACHE ]] || need_root "the glibc consumer"
	local src ver
	src=$(glibc_sources)
	ver=$(sed -n 's/^version=//p' "$CACHE/stamps/glibc-src-sid")
	log "building the glibc consumer from glibc $ver"
	local staging="$CACHE/consumers/.staging-glibc-$$"
	rm -rf "$staging"
	mkdir -p "$staging"
	[[ -f $AARCH64_UCONTEXT ]] || die "$AARCH64_UCONTEXT is missing (package libc6-dev-arm64-cross)"
	glibc_consumer_compile "$REPO" "$src" "$ver" "$staging" ||
		die "building the glibc consumer from sid's glibc $ver failed: $(tail -n5 "$staging/build.log")"
	consumer_works "$staging/$bin" x86-64 2 ||
		die "the glibc consumer built in $staging does not answer 'supports x86-64 2' with yes"
	printf '# Written by ci/setup.sh.\nname=glibc\nversion=%s\nsuite=sid\npackage=glibc (source)\nsource=%s\n' "$ver" "$hash" >"$staging/consumer.conf"
	rm -rf "$dir"
	mv "$staging" "$dir"
	note "glibc consumer: glibc $ver, in $dir"
}

# --- 8. the real-code campaign's inputs ----------------------------------

# Small C code bases whose .c files compile one by one without configure
# (package realcode knows their files); fetched from bookworm whatever the host.
REALCODE_SOURCES=(zlib lua5.4 bzip2)
REALCODE_PACKAGES=(csmith libcsmith-dev cvise)

setup_realcode_tools() {
	local p status missing=()
	for p in "${REALCODE_PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $status == "install ok installed" ]] || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		note "csmith, cvise: present"
		return
	fi
	need_root "the real-code campaign's tools (${missing[*]})"
	log "installing the real-code campaign's tools: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed for the system's sources"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for the real-code campaign's tools (Debian $HOST_SUITE): ${missing[*]}"
	note "csmith, cvise: installed ${missing[*]}"
}

# realcode_source PKG unpacks bookworm's source package PKG (Debian's
# patches applied) under $CACHE/sources and records where in a stamp. The
# code bases come from one suite whatever the host's, so every machine and
# the container check the same C; bookworm is stable, so its pool keeps
# them. When the newest revision's files are gone from the pool (a moved
# archive: its .dsc answers 404), the revision before it is taken.
REALCODE_SUITE=bookworm
realcode_source() {
	local pkg=$1 stamp="$CACHE/stamps/src-$1" dir suite=$REALCODE_SUITE
	if [[ -f $stamp ]]; then
		dir=$(sed -n 's/^dir=//p' "$stamp")
		if [[ -n $dir && -d $dir ]]; then
			note "source $pkg: $dir (present)"
			return
		fi
	fi
	[[ -w $CACHE ]] || need_root "the source package $pkg"
	command -v dpkg-source >/dev/null || die "dpkg-source is missing (package dpkg-dev)"
	local conf
	conf=$(apt_for "$suite" src)
	debsrc_unpack "$pkg" "$suite" "$conf" "mirror $(debian_mirror); real-code step 8"
	note "source $pkg: $DEBSRC_VERSION from Debian $suite in $DEBSRC_DIR"
}

setup_realcode() {
	setup_realcode_tools
	local p
	for p in "${REALCODE_SOURCES[@]}"; do
		realcode_source "$p"
	done
}

# --- 9. a headless browser ---------------------------------------------------

# The HTML reports are checked in a real browser (report/html's tests).
setup_browser() {
	local status
	status=$(dpkg-query -W -f='${Status}' chromium 2>/dev/null || true)
	if [[ $status == "install ok installed" ]]; then
		note "browser: chromium present"
		return
	fi
	need_root "chromium"
	log "installing chromium"
	apt-get update -qq || die "apt-get update failed for the system's sources"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
		die "apt-get install failed for: chromium"
	note "browser: installed chromium"
}

# --- main -------------------------------------------------------------------

main() {
	local start=$SECONDS
	lock
	setup_host_packages
	setup_unicorn
	setup_ginkgo
	setup_go_tools
	local suite
	for suite in "${SUITES[@]}"; do
		setup_binutils "$suite"
	done
	setup_llvm
	setup_pipeline_tools
	setup_libsframe_consumer
	setup_glibc_consumer
	setup_realcode
	setup_browser
	printf 'setup: done in %ds\n' $((SECONDS - start)) >&2
	printf '  %s\n' "${SUMMARY[@]}" >&2
}

HOST_SUITE=$(host_suite)
if [[ ${1:-} == --print-mirror ]]; then
	debian_mirror
	exit
fi
main "$@"
