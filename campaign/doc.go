// Package campaign is the one engine that runs cells: a cell is a target
// x producer x consumer checked over a run of seeds. `sfconform run`, the
// matrix (package matrix) and the Ginkgo suites plan and run their cells
// here; the project's layers are in ../shared/DESIGN.md ("one campaign
// engine"), the format in the SFrame specification
// (https://sourceware.org/binutils/docs/sframe-spec.html, sections
// "SFrame Version" and "SFrame Function Descriptor Entries").
//
// NewPlan plans a cell once, before its first program: the producer's
// SFrame version on the target (asked once), whether the consumer reads
// it (an *UnsupportedError with the reason when not: reported as
// unsupported, never a failure) and the pattern mix (NewMix, the only
// place that decides it: what the version cannot express, what a
// toolchain still gets to show what it does with it, what its tools
// cannot make as asked).
//
// Produce makes an image of one program, ProduceBatch of many (a
// producer.BatchProducer gets them laid out one after the other in the
// emulator's regions, to build with one run of its tools), and
// Plan.ProduceAhead makes a cell's programs a batch ahead of its checks.
//
// Run spreads cells over one pool of workers (Each: the only worker pool
// of the tree); a Worker owns one emulator per target it meets, so a
// Ginkgo process makes one Worker and runs its entries' cells on it
// (Worker.RunCell). Every checked program goes to a Sink, which saves
// failures or holds them to matchers, and is folded into its Cell.
//
// Summary and Cell are the JSON schema of `sfconform run --json`, which
// `sfconform merge`, the JUnit and the HTML reports read: their field
// names are a file format and do not change.
package campaign
