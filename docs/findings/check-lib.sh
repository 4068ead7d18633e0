#!/usr/bin/env bash
# Re-runs the reproductions written in docs/findings/016 onwards (libsframe,
# glibc, llvm-mc and GNU ld findings) and fails when what they print is no
# longer what the write-ups say, so that a finding cannot go stale unseen:
# an upstream fix, a moved sid package or a changed layout all turn it red.
#
# Each finding marks its parts with HTML comments before fenced blocks:
#   <!-- check-lib: file NAME -->  the block is written to NAME
#   <!-- check-lib: run -->        the block is run with bash, stdout and
#                                  stderr together, in the scratch directory
#   <!-- check-lib: output -->     what the run before it must print, exactly
# All findings share one scratch directory, in file-name order, so a later
# finding may use a program an earlier one built (017, 021 and 025 use
# 016's find-pc; 019 and 026 use 018's walk).
#
# Usage: docs/findings/check-lib.sh [-v] [FINDING-NUMBER...]
#   -v  print every run's output
# Environment: SFCONFORM_CACHE (default /var/cache/sfconform), as setup.
set -uo pipefail

R=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
C=${SFCONFORM_CACHE:-/var/cache/sfconform}
export R SFCONFORM_CACHE=$C

verbose=0
if [[ ${1:-} == -v ]]; then
	verbose=1
	shift
fi
only=("$@")

# What the findings need from setup; a missing piece is a failure that
# names the step that provides it, never a skip.
need() {
	[[ -e $1 ]] || {
		printf 'check-lib: %s is missing: run make setup (ci/setup.sh %s)\n' "$1" "$2" >&2
		exit 1
	}
}
# The write-ups name the exact sid snapshot they measured. When setup has
# provisioned another one (a fresh cache after sid moved), say so: the
# findings are to be measured again, not the setup to be repeated.
sid=$(sed -n 's/^dir=//p' "$C/stamps/binutils-sid" 2>/dev/null)
if [[ -n $sid && $sid != */binutils-2.47.50.20261021 ]]; then
	printf 'check-lib: the findings were measured with sid binutils 2.47.50.20261021, setup provisioned %s: measure them again and update docs/findings\n' "${sid##*/}" >&2
	exit 1
fi
need "$C/toolchains/binutils-2.40/bin/x86_64-linux-gnu-ld" "step 4"
need "$C/toolchains/binutils-2.44/bin/x86_64-linux-gnu-as" "step 4"
need "$C/toolchains/binutils-2.47.50.20261021/bin/x86_64-linux-gnu-as" "step 4"
need "$C/toolchains/llvm-23/bin/llvm-mc" "step 5"
need "$C/roots/sid/usr/lib/x86_64-linux-gnu/libsframe.a" "step 6"
need "$C/stamps/glibc-src-sid" "step 7"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# blocks DOC prints one line per marked block, "KIND NAME START END" (the
# block's content is lines START..END of DOC), and fails on a marker that
# no fenced block follows.
blocks() {
	awk '
		/^<!-- check-lib: / {
			kind = $3; name = ($4 == "-->") ? "-" : $4; want = NR; next
		}
		/^```/ && !inside {
			inside = 1
			if (kind != "") { start = NR + 1; open = kind; oname = name; kind = "" }
			next
		}
		/^```/ && inside {
			inside = 0
			if (open != "") { print open, oname, start, NR - 1; open = "" }
			next
		}
		kind != "" && !inside && NF { printf "%s:%d: check-lib marker not followed by a block\n", FILENAME, want > "/dev/stderr"; exit 1 }
		END { if (kind != "") { printf "%s:%d: check-lib marker at the end\n", FILENAME, want > "/dev/stderr"; exit 1 } }
	' "$1"
}

failed=0 checked=0
for doc in "$R"/docs/findings/01[6-9]-*.md "$R"/docs/findings/0[2-9][0-9]-*.md; do
	[[ -f $doc ]] || continue
	num=$(basename "$doc" | cut -c1-3)
	run=1
	if ((${#only[@]})); then
		run=0
		for n in "${only[@]}"; do [[ $num == "$n" ]] && run=1; done
	fi
	list=$(blocks "$doc") || {
		failed=1
		continue
	}
	last_out="" runs=0 pending=0
	while read -r kind name start end; do
		[[ -n $kind ]] || continue
		body=$(sed -n "${start},${end}p" "$doc")
		case $kind in
		file)
			printf '%s\n' "$body" >"$work/$name"
			;;
		run)
			if ((pending)); then
				printf 'check-lib: %s: run %d has no output block after it\n' "${doc#"$R"/}" "$runs" >&2
				failed=1
			fi
			((run)) || continue
			runs=$((runs + 1)) pending=1
			printf '%s\n' "$body" >"$work/.run.sh"
			last_out=$(cd "$work" && bash .run.sh 2>&1)
			((verbose)) && printf '=== %s run %d\n%s\n' "$num" "$runs" "$last_out"
			;;
		output)
			((run)) || continue
			checked=$((checked + 1)) pending=0
			if [[ $last_out != "$body" ]]; then
				failed=1
				printf 'check-lib: %s, run %d: the output differs from the write-up (-: %s, +: now)\n' \
					"$num" "$runs" "${doc#"$R"/}"
				diff -u <(printf '%s\n' "$body") <(printf '%s\n' "$last_out") | tail -n +3
			fi
			;;
		*)
			printf 'check-lib: %s: unknown block kind %q\n' "${doc#"$R"/}" "$kind" >&2
			failed=1
			;;
		esac
	done <<<"$list"
	if ((pending)); then
		printf 'check-lib: %s: run %d has no output block after it\n' "${doc#"$R"/}" "$runs" >&2
		failed=1
	fi
done

if ((checked == 0)); then
	echo "check-lib: no output block checked" >&2
	exit 1
fi
if ((failed)); then
	exit 1
fi
echo "check-lib: $checked reproductions print what docs/findings says"
