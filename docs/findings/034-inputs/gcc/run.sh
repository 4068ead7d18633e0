#!/usr/bin/env bash
# run.sh GCC-BIN BINUTILS-BIN: finding 034 with the gcc of GCC-BIN
# (s390x-linux-gnu-gcc, compiling to assembly only) and the binutils of
# BINUTILS-BIN: where f034-gcc16.c's function f moves the CFA back
# (.cfi_def_cfa_offset 160) against where it restores %r15 (lgdr %r15,%f0),
# and gas --gsframe's SFrame rows for it.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$1/s390x-linux-gnu-gcc" --version | head -n1
"$1/s390x-linux-gnu-gcc" -O3 -S -o f.s "$here/f034-gcc16.c"
echo "CFI of f (line numbers from f:):"
sed -n '/^f:/,/cfi_endproc/p' f.s | grep -n 'cfi_register 15\|cfi_def_cfa_offset\|lgdr\|ldgr\|lay\|br\s'
"$2/s390x-linux-gnu-as" --gsframe -o f.o f.s
echo "exit $?"
"$2/s390x-linux-gnu-objdump" -d f.o | grep 'lgdr\|br\s'
"$2/s390x-linux-gnu-objdump" --sframe f.o | sed -n '/func idx/,$p'
