// Package corpus is the Ginkgo suite that replays the curated reproducers
// of corpus/cases (docs/reproducer-format.md, "Curated cases"), one table
// entry per file (labels corpus, upstream or fixed, target:NAME,
// producer:NAME, consumer:NAME).
//
// An upstream bug's case must still fail exactly as recorded (the same
// step, verdict, frame and field): its stored image with the provisioned
// consumer and, for a toolchain producer, the program made again by the
// provisioned toolchain. When an upstream release fixes one, the entry
// goes red: update the case's expectation and its finding. A fixed bug of
// sfconform's must stay fixed: its stored bytes conform, or, for a bug of
// gen's (expect.regenerate), the program today's gen makes from the
// case's coordinates conforms while the stored program, the one the bug
// made, still fails.
//
// The cases are made by ./curate (go run ./suites/corpus/curate), which
// lists the coordinates of each.
package corpus
