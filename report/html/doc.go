// Package html renders sfconform's reports as one self-contained HTML
// file: the matrix of target x producer x consumer cells with their
// verdict counts first, then every failure worked through: the failing
// function's instructions, each with the row of the section that covers it
// and the oracle's frames where it ran, the failing step's frames expected
// against got with the row each was unwound by, and a picture of the stack
// at the failing step (its slots, each frame's CFA, where the return
// address and frame pointer were saved, and where the consumer's row
// looked for them).
//
// The page needs no network and no JavaScript: styles are inline, the
// stack picture is an HTML table, links are fragment links. The failing
// instruction of each failure carries the id "failing-step-N" (N its
// index in Report.Failures), so a link to it shows it.
//
// The package renders what it is given and imports nothing of the
// project: the values come from the reproducers and their replay
// (package repro), so it judges nothing and cannot disagree with the
// oracle it never sees (architecture/architecture_test.go).
//
// The failure's step and verdict follow the reproducer format,
// docs/reproducer-format.md; the rows and frames, the SFrame v3 spec
// (sections 2.4 "SFrame FRE" and 3, the unwinding appendix).
//
// # Security
//
// Every value is escaped by html/template; a report made from a hostile
// reproducer can show odd text but run nothing.
package html
