// Package gen generates seeded synthetic programs for SFrame conformance
// runs: an entry stub and a call graph of functions built from a catalog of
// per-target prologue/epilogue patterns, with the unwind rule (CFA, RA, FP)
// that holds at every instruction.
//
// A Program is rendered two ways: as machine code by gen's own encoders
// (Layout), and as GNU as source with .cfi_* directives derived from the
// same rules (Assembly), so that `as --gsframe` builds an equivalent SFrame
// table. The encoders are checked byte for byte against GNU as in
// encode_ext_test.go.
//
// Rules follow the SFrame format (https://sourceware.org/binutils/docs/sframe-spec.html):
// the CFA is SP or FP plus an offset; the RA and FP are either still in
// their register (RuleSame) or saved at CFA+offset. AArch64 instructions are
// stored little-endian for both data byte orders.
//
// Patterns per target (Patterns lists them): leaf (no frame), fp-frame,
// sp-frame (several stack adjustments), callee-saved, multi-epilogue (early
// return on an argument bit), tail-call. Each target's catalog lives in its
// own file (amd64.go, arm64.go, s390x.go); adding a pattern is adding a
// constructor there and an entry to the catalog.
//
// Generation is deterministic: math/rand/v2's PCG seeded from the seed and
// the ABI, no map iteration on any path that shapes the output.
//
// # Security
//
// Generate trusts its options only as far as sizes go: unknown pattern names
// are errors; huge Funcs values cost time and memory proportionally.
package gen
