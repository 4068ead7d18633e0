// Package findings holds no code: it is the home of the write-ups of what
// the provisioned toolchains and decoders get wrong (the NNN-*.md files
// beside this one, indexed in README.md), and of the test that keeps them
// true.
//
// Each write-up shows its behaviour as a transcript: fenced blocks whose
// info string is "asm FILE" (or any language and a file name) give the
// inputs, and blocks whose info string is "console" followed by toolchain
// names (gas-2.40, gas-2.44, gas-2.47, llvm-mc-23: the names the toolchain
// package gives the provisioned tools) hold "$ command" lines, each
// followed by exactly what it prints. TestTranscripts writes the inputs
// into an empty directory, runs every command there with /bin/sh and the
// named toolchains first on PATH, and fails on the first line that differs,
// so a write-up cannot go on describing a behaviour the tools no longer
// have: an upstream fix shows up as a failing test.
//
// The commands are plain binutils (and llvm-mc) invocations: they need
// nothing of sfconform. The SFrame format they are judged against is the
// SFrame specification, version 3 (https://sourceware.org/binutils/docs/sframe-spec.html),
// and DWARF 5, section 6.4 (call frame information), for the truth the
// .cfi_* directives state.
package findings
