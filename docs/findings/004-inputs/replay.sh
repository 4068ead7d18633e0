#!/usr/bin/env bash
# replay.sh BUILDS: finding 004 against the binutils build trees in BUILDS
# (BUILDS/x86_64-linux-gnu, BUILDS/aarch64-linux-gnu: gas/as-new).
# cold-*.s restore a callee-saved register that was never saved (a cold
# part entered with the frame live); assembles each with
# --scfi=experimental and prints the messages (an internal error's source
# path shown as gas/scfi.c:LINE) and the exit status.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in x86-64:x86_64-linux-gnu aarch64:aarch64-linux-gnu; do
	echo "${t%%:*}:"
	(cd "$here" && "$1/${t#*:}/gas/as-new" --scfi=experimental -o "$tmp/c.o" "cold-${t%%:*}.s" 2>&1; echo "as exit status $?") |
		sed -E 's|at [^ ]*/gas/scfi.c:[0-9]+|at gas/scfi.c:LINE|'
done
