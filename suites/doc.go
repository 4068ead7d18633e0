// Package suites holds the Ginkgo suites: run them with
//
//	ginkgo -r ./suites
//
// conformance checks every instruction of generated programs on every
// target, pattern, producer and consumer; mutation proves the harness catches
// faults injected into correct tables and unwinders with one rule broken.
// Entries carry labels (target:NAME,
// pattern:NAME, producer:NAME, consumer:NAME, slow) to select
// with --label-filter. Programs are seeded from GinkgoRandomSeed(): rerun
// a failure with --seed. Failures are saved as reproducers under
// $SFCONFORM_FAILURES (default: failures/ at the repository root).
package suites
