#!/usr/bin/env bash
# replay.sh LIBSFRAME.A INCLUDE-DIR: finding 040 against one libsframe.
# Compiles fres-buf.c (public API only) against the library and asks
# sframe_decoder_get_fres_buf for the FREs of function 0 of one.sframe (GNU
# as and ld 2.47, SFrame v3, x86-64, one function), then of function 1,
# which does not exist.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -Wall -I "$2" "$here/fres-buf.c" "$1" -o "$tmp/fres-buf" || exit 2
# The shell's own report of a killed child goes to /dev/null; exit status
# 139 is 128 + SIGSEGV.
run() { "$@"; echo "  exit status $?"; } 2>/dev/null
run "$tmp/fres-buf" "$here/one.sframe" 0 1
