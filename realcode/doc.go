// Package realcode is the real-code campaign: C code bases from Debian's
// source packages (zlib, lua5.4, bzip2; ci/setup.sh step 8 fetches them)
// compiled by Debian's gcc for every sfconform target at several
// optimisation levels, assembled by every provisioned assembler that
// emits SFrame (GNU as --gsframe of each binutils series, llvm-mc for
// x86-64), linked (-r, -static, -pie), and every output checked: its
// .sframe decoded and validated, every function and instruction of the
// code base's own text looked up, and the rows of every dumper consumer
// (objdump, readelf, llvm-readobj) compared with the decoder's.
//
// What checks an output is a Checker: the campaign needs only "check this
// ELF file, give me the report". StaticChecker is the one this package
// has; sfconform check (package check, when it lands) plugs in behind the
// same interface.
//
// Synthetic programs (package gen) cover the unwind patterns sfconform
// thought of; compiler output covers what it did not. The SFrame
// specification the checks follow is
// https://sourceware.org/binutils/docs/sframe-spec.html.
package realcode
