// Package dumper reads the text SFrame dumpers print: GNU objdump
// --sframe and readelf --sframe (binutils 2.40 to 2.47, ParseGNU) and
// llvm-readobj --sframe (LLVM 21 to 23, ParseLLVM). A Listing holds what
// the text says of one section: the header fields shown, and every
// function with its rows, each row's columns read as sframe.Rule values.
// Listing.Table turns the rows into an sframe.Table, so that a dumper's
// reading of a section can be looked up and unwound exactly like a
// decoder's; ELF wraps a bare section into the smallest ELF file the
// dumpers accept.
//
// The consumers objdump-<version>, readelf-<version> and
// llvm-readobj-<major> (package consumer) are built on it: a dumper that
// misprints a row shows up as a consumer that unwinds wrongly.
//
// The layouts are the tools' own; nothing specifies them. What each
// notation means is taken from the SFrame specification
// (https://sourceware.org/binutils/docs/sframe-spec.html, sections
// "SFrame FRE" and "Flexible FDE Type Interpretation") and checked against
// sections made by GNU as and ld, whose rows the sframe package decodes
// (sframe/testdata): see ParseGNU and ParseLLVM for the notation, and the
// tests for the measured behaviour of each tool version.
//
// What the text does not say is not guessed: GNU dumpers print no
// repetition size for PCMASK functions (Listing.Table needs it from the
// caller), and binutils 2.40 prints no fixed header offsets (its
// listings are read with the ones GNU as writes).
//
// # Security
//
// The parsers read any text without panicking and with bounded memory
// per line; they reject anything they do not recognise rather than skip
// it. Running the dumpers themselves is the caller's business: they are
// programs of the toolchain, and some versions crash on malformed input.
package dumper
