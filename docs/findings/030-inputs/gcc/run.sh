#!/usr/bin/env bash
# run.sh GCC-BIN BINUTILS-BIN: finding 030 with the gcc of GCC-BIN
# (x86_64-linux-gnu-gcc, compiling to assembly only) and the binutils of
# BINUTILS-BIN: d.c's epilogue and gas --gsframe's SFrame rows for it.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$1/x86_64-linux-gnu-gcc" --version | head -n1
"$1/x86_64-linux-gnu-gcc" -O2 -fasynchronous-unwind-tables -S -o d.s "$here/d.c"
echo "epilogue (from popq %rbx):"
sed -n '/popq\t%rbx/,/cfi_endproc/p' d.s
"$2/x86_64-linux-gnu-as" --gsframe -o d.o d.s
"$2/x86_64-linux-gnu-objdump" -d d.o | tail -n4
"$2/x86_64-linux-gnu-objdump" --sframe d.o | sed -n '/func idx/,$p'
