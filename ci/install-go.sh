#!/usr/bin/env bash
# Install Debian's Go (golang-go) and make, as the project's image needs them
# before `make setup` runs (docker/Dockerfile), and have that go run the
# version go.mod names (GOTOOLCHAIN=go<version>+auto, in go env), fetched
# through the module proxy. Go 1.21 is the first that can, so a suite whose
# golang-go is older (bookworm: 1.19) takes the one of its backports
# (bookworm-backports: 1.23), from the archive ci/setup.sh uses.
set -euo pipefail
shopt -s inherit_errexit

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export DEBIAN_FRONTEND=noninteractive

log() { printf 'install-go: %s\n' "$*" >&2; }
die() {
	printf 'install-go: error: %s\n' "$*" >&2
	exit 1
}

# go_minor prints the minor version of the installed go (19 for go1.19.8).
go_minor() {
	(cd / && GOTOOLCHAIN=local go version 2>/dev/null) | awk '{ split(substr($3, 3), v, "."); print v[2] + 0 }'
}

apt-get update -qq || die "apt-get update failed"
apt-get install -y -qq --no-install-recommends golang-go make ca-certificates >/dev/null ||
	die "apt-get install golang-go make ca-certificates failed"
minor=$(go_minor)
if ((minor < 21)); then
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[[ -n $codename ]] || die "Debian's go is 1.$minor (GOTOOLCHAIN needs 1.21) and /etc/os-release names no codename to take backports from"
	mirror=$(bash "$REPO/ci/setup.sh" --print-mirror)
	log "Debian $codename's go is 1.$minor, too old for GOTOOLCHAIN=auto: taking $codename-backports' from $mirror"
	echo "deb $mirror $codename-backports main" >/etc/apt/sources.list.d/sfconform-backports.list
	apt-get update -qq || die "apt-get update failed for $codename-backports"
	apt-get install -y -qq --no-install-recommends -t "$codename-backports" golang-go >/dev/null ||
		die "apt-get install -t $codename-backports golang-go failed"
	minor=$(go_minor)
	((minor >= 21)) || die "$codename-backports' go is 1.$minor, still older than 1.21"
fi
log "Debian's $(cd / && GOTOOLCHAIN=local go version)"
# GOTOOLCHAIN=auto alone runs a local go newer than go.mod's (sid's may
# be): go<go.mod's version>+auto runs exactly go.mod's, fetched through the
# module proxy, or a newer one only when go.mod comes to ask for it.
want=$(awk '$1 == "go" { print $2; exit }' "$REPO/go.mod")
[[ -n $want ]] || die "$REPO/go.mod names no go version"
go env -w "GOTOOLCHAIN=go$want+auto"
log "GOTOOLCHAIN=go$want+auto: $(cd "$REPO" && go version)"
rm -rf /var/lib/apt/lists/*
