// Package validate checks every section a producer makes against the rules
// that strict consumers apply, before any consumer sees it: the rules of
// the SFrame specification and of libsframe's decoder for every version,
// and for version 3 also what the Linux user-space unwinder refuses when a
// section is registered (SFrame v3 specification; shared/spec
// sframe-facts.md section 6 lists both sets).
//
// The rules themselves are implemented by sframe.Table.Check; this package
// turns its findings into verdict.Violations (rule, byte offset, detail)
// and decides which of them are warnings: shapes real toolchains emit that
// reference consumers accept although a strict reading refuses them.
package validate
