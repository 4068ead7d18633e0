// Package testenv says what a test does when something that "make setup"
// (ci/setup.sh) provides is absent: a tool, a provisioned toolchain, a
// library.
//
// Tests that drive the real toolchains cannot run on a machine where setup
// never ran, and a bare "go test" there should still pass: such a test
// calls Missing, which skips it with a message naming what is absent and
// the setup step that provides it. Once setup has run, the same absence is
// a broken environment, and a skip would let a test that checks nothing
// pass: with SFCONFORM_REQUIRE_SETUP=1 in the environment (as "make test"
// sets it), Missing fails the test instead, with the same message.
//
// This is the scheme of the Go distribution's internal/testenv
// (MustHaveExec, MustHaveExternalNetwork), which skips by default and fails
// on the builders that must have everything.
//
// The sframe package imports nothing of the project, not even in its
// tests, so it cannot use this package; its tests follow the same
// convention on their own.
package testenv
