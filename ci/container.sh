#!/usr/bin/env bash
# Build the project's image (docker/Dockerfile) and run `make test` inside it:
# `make docker-test`.
#
# The engine is docker when a docker daemon answers, podman otherwise
# (installed from the machine's own Debian suite when it is missing, with runc
# and debootstrap). Podman runs with its own configuration, written by this
# script under $SFCONFORM_CACHE/podman and handed over through
# CONTAINERS_CONF and CONTAINERS_STORAGE_CONF (nothing under /etc/containers
# is touched): the vfs storage driver, the runc runtime, the cgroupfs cgroup
# manager and explicit ulimits. These are what works on machines with hybrid
# cgroups (v1 controllers beside a v2 tree), where crun fails, and where the
# default RLIMIT_NOFILE is too high or too low for the container's tools.
#
# A base named <suite>-local (e.g. sid-local, bookworm-local) is made here
# when the engine does not have it: debootstrap unpacks Debian <suite> from
# the same archive ci/setup.sh uses, and the engine imports the tree as
# localhost/<suite>-local. That needs no image registry. Any other base is
# used as named (pulled by the engine if need be): debian:sid is the
# Dockerfile's default.
#
# Usage: ci/container.sh [BASE]      (default: $SFCONFORM_DOCKER_BASE or sid-local)
#
# Environment:
#   SFCONFORM_CACHE          where podman's configuration, storage and the
#                            debootstrap trees live (default /var/cache/sfconform)
#   SFCONFORM_DEBIAN_MIRROR  Debian archive for debootstrap and for setup in
#                            the image (default: the one ci/setup.sh finds)
#   SFCONFORM_ENGINE         docker or podman, instead of looking
#   GOPROXY, GOFLAGS         passed to the build (default: go env's)
set -euo pipefail
shopt -s inherit_errexit

CACHE=${SFCONFORM_CACHE:-/var/cache/sfconform}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE=${1:-${SFCONFORM_DOCKER_BASE:-sid-local}}
PODMAN_DIR="$CACHE/podman"
ULIMITS=(--ulimit nofile=20000:20000 --ulimit nproc=32768:32768)

log() { printf 'container: %s\n' "$*" >&2; }
die() {
	printf 'container: error: %s\n' "$*" >&2
	exit 1
}

# --- the engine ---------------------------------------------------------------

# apt_install PACKAGE... installs what the host lacks from its own suite.
apt_install() {
	local p missing=()
	for p in "$@"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) == "install ok installed" ]] || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[[ $(id -u) == 0 ]] || die "${missing[*]} missing and installing needs root"
	command -v apt-get >/dev/null || die "${missing[*]} missing and this is no Debian machine: install them"
	log "installing ${missing[*]}"
	apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
}

# podman_config writes podman's configuration (once) and exports the
# variables that point podman at it.
podman_config() {
	mkdir -p "$PODMAN_DIR/storage" "$PODMAN_DIR/run"
	cat >"$PODMAN_DIR/containers.conf.new" <<EOF
# Written by ci/container.sh: podman settings that work on machines with
# hybrid cgroups, where crun fails.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "host"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
	cat >"$PODMAN_DIR/storage.conf.new" <<EOF
# Written by ci/container.sh.
[storage]
driver = "vfs"
graphroot = "$PODMAN_DIR/storage"
runroot = "$PODMAN_DIR/run"
EOF
	mv -f "$PODMAN_DIR/containers.conf.new" "$PODMAN_DIR/containers.conf"
	mv -f "$PODMAN_DIR/storage.conf.new" "$PODMAN_DIR/storage.conf"
	export CONTAINERS_CONF="$PODMAN_DIR/containers.conf"
	export CONTAINERS_STORAGE_CONF="$PODMAN_DIR/storage.conf"
}

# pick_engine sets ENGINE to docker when a daemon answers, else podman.
pick_engine() {
	ENGINE=${SFCONFORM_ENGINE:-}
	if [[ -z $ENGINE ]]; then
		if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
			ENGINE=docker
		else
			ENGINE=podman
		fi
	fi
	case $ENGINE in
	docker) ;;
	podman)
		apt_install podman runc
		command -v runc >/dev/null || die "runc is not on PATH after installing it"
		podman_config
		;;
	*) die "SFCONFORM_ENGINE must be docker or podman, not '$ENGINE'" ;;
	esac
	log "engine: $ENGINE ($("$ENGINE" --version 2>/dev/null | head -n1))"
}

# --- a base image from Debian's archive ----------------------------------------

# debian_mirror prints the archive ci/setup.sh would use.
debian_mirror() {
	if [[ -n ${SFCONFORM_DEBIAN_MIRROR:-} ]]; then
		echo "$SFCONFORM_DEBIAN_MIRROR"
		return
	fi
	bash "$REPO/ci/setup.sh" --print-mirror
}

# host_cas DIR copies into DIR, as NAME.crt, each certificate the host
# trusts that Debian's ca-certificates package does not ship.
host_cas() {
	local dir=$1 f name
	mkdir -p "$dir"
	for f in /usr/local/share/ca-certificates/*.crt /etc/ssl/certs/*.pem; do
		[[ -f $f ]] || continue
		# Debian's own are links into /usr/share/ca-certificates.
		[[ -L $f ]] && continue
		# Only certificate authorities (not, e.g., ssl-cert's snakeoil).
		openssl x509 -in "$f" -noout -ext basicConstraints 2>/dev/null | grep -q 'CA:TRUE' || continue
		name=${f##*/}
		cp "$f" "$dir/host-${name%.*}.crt"
		log "the base trusts the host's ${f}"
	done
}

has_image() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# local_base SUITE makes localhost/SUITE-local with debootstrap, unless the
# engine has it.
local_base() {
	local suite=$1 name="localhost/$1-local"
	if has_image "$name"; then
		log "base $name: present"
		return
	fi
	apt_install debootstrap
	local mirror tree="$CACHE/debootstrap/$suite" start=$SECONDS
	mirror=$(debian_mirror)
	log "debootstrapping Debian $suite from $mirror into $tree"
	rm -rf "$tree"
	mkdir -p "$tree"
	debootstrap --variant=minbase --include=ca-certificates "$suite" "$tree" "$mirror" >"$CACHE/debootstrap/$suite.log" 2>&1 ||
		die "debootstrap of Debian $suite failed: $(tail -n5 "$CACHE/debootstrap/$suite.log")"
	# The archive the tree was made from is its only apt source.
	rm -f "$tree"/etc/apt/sources.list.d/*
	echo "deb $mirror $suite main" >"$tree/etc/apt/sources.list"
	# And the host's apt settings for reaching it (an archive frozen at a
	# date needs Check-Valid-Until "false"; a proxy), as apt-config shows them.
	apt-config dump 2>/dev/null | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
		>"$tree/etc/apt/apt.conf.d/50sfconform-host" || true
	# And what the host trusts beyond Debian's CA bundle (its own
	# /usr/local/share/ca-certificates, a PEM put straight into
	# /etc/ssl/certs): where the network goes through a TLS proxy, the Go
	# module proxy is reached through it.
	host_cas "$tree/usr/local/share/ca-certificates"
	chroot "$tree" update-ca-certificates >/dev/null 2>&1 ||
		die "update-ca-certificates failed in the $suite tree"
	rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/*
	log "importing the tree as $name"
	tar -C "$tree" -c . | "$ENGINE" import - "$name" >/dev/null ||
		die "$ENGINE import of $tree failed"
	rm -rf "$tree"
	log "base $name made in $((SECONDS - start))s"
}

# --- build and test --------------------------------------------------------------

main() {
	pick_engine
	local base=$BASE
	if [[ $base =~ ^(localhost/)?([a-z]+)-local$ ]]; then
		local_base "${BASH_REMATCH[2]}"
		base="localhost/${BASH_REMATCH[2]}-local"
	fi
	local name=${base##*/} goproxy goflags
	local tag="localhost/sfconform:${name//:/-}"
	goproxy=${GOPROXY:-$(go env GOPROXY 2>/dev/null || true)}
	goflags=${GOFLAGS:-$(go env GOFLAGS 2>/dev/null || true)}
	local start=$SECONDS
	log "building $tag on $base"
	"$ENGINE" build --network host "${ULIMITS[@]}" -f "$REPO/docker/Dockerfile" -t "$tag" \
		--build-arg BASE="$base" --build-arg GOPROXY="$goproxy" --build-arg GOFLAGS="$goflags" \
		--build-arg SFCONFORM_DEBIAN_MIRROR="${SFCONFORM_DEBIAN_MIRROR:-}" "$REPO" ||
		die "building the image failed"
	local built=$((SECONDS - start))
	# vfs keeps every layer whole: drop what earlier builds left dangling in
	# podman's own storage (never in a docker daemon's, which others share).
	[[ $ENGINE != podman ]] || podman image prune -f >/dev/null
	log "built $tag in ${built}s; size $("$ENGINE" image inspect --format '{{.Size}}' "$tag") bytes"
	start=$SECONDS
	log "running make test in $tag"
	mkdir -p "$REPO/reports/container"
	"$ENGINE" run --rm --network host "${ULIMITS[@]}" -v "$REPO/reports/container:/src/reports" "$tag" make test ||
		die "make test failed in $tag (after $((SECONDS - start))s)"
	log "make test passed in $tag: build ${built}s, test $((SECONDS - start))s"
}

main "$@"
