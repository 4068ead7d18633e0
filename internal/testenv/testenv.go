package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireSetupEnv names the environment variable that turns a missing
// setup-provided piece from a skip into a failure: set to 1 once setup
// has run.
const RequireSetupEnv = "SFCONFORM_REQUIRE_SETUP"

// Step is a numbered step of ci/setup.sh (see the comment at its top).
type Step int

// The steps of ci/setup.sh that tests name directly (toolchain's
// ext test holds those the toolchain package numbers too, toolchain.Setup*,
// to these). A plug-in's step is in its registry entry
// (consumer.About.Setup, producer.About.Setup) and reaches a test
// through the error that says it is missing (IfNotProvisioned).
const (
	HostPackages Step = 1 // gcc, make, python3, host binutils, the cross binutils 2.40 and gcc cross compilers on PATH
	Unicorn      Step = 2 // Unicorn 2.1 under /usr/local
	Ginkgo       Step = 3 // the Ginkgo CLI pinned in go.mod
	Binutils     Step = 4 // GNU binutils 2.40, 2.44 and sid's under $SFCONFORM_CACHE/toolchains
	LLVM         Step = 5 // sid's llvm-mc and llvm-readobj under $SFCONFORM_CACHE/toolchains
	// RealCode provides the real-code campaign's inputs: csmith, cvise
	// and the C code bases' source packages (package realcode).
	RealCode Step = 8
	// Browser installs chromium, in which the tests render the HTML
	// reports.
	Browser Step = 9
	// BinutilsSrc is GNU binutils built from sid's source package. 'make
	// setup' does not run it (it takes tens of CPU minutes): 'make
	// binutils-src' does, and SourceBuildRequiredEnv, not
	// RequireSetupEnv, says whether its absence fails a test.
	BinutilsSrc Step = 10
)

// SourceBuildRequiredEnv names the environment variable that turns a
// missing source build of binutils (step BinutilsSrc, 'make binutils-src')
// from a skip into a failure. RequireSetupEnv does not: 'make setup' does
// not build it, so 'make test' passes without it.
const SourceBuildRequiredEnv = "SFCONFORM_REQUIRE_BINUTILS_SRC"

var stepText = map[Step]string{
	HostPackages: "host packages: gcc, g++, make, python3 (the conformance kit's unwinder), binutils, the cross binutils for x86-64, aarch64, s390x and the gcc and g++ cross compilers for aarch64 and s390x",
	Unicorn:      "Unicorn 2.1",
	Ginkgo:       "the Ginkgo CLI",
	Binutils:     "GNU binutils of Debian bookworm, trixie and sid for x86-64, aarch64, s390x",
	LLVM:         "sid's llvm-mc and llvm-readobj",
	RealCode:     "the real-code campaign's inputs: csmith, cvise and the C code bases' source packages",
	Browser:      "a headless browser, the host suite's chromium",
	BinutilsSrc:  "GNU binutils built from sid's binutils source package by 'make binutils-src' (ci/binutils-src.sh)",
}

// String names the step as ci/setup.sh numbers it, with what it provides.
func (s Step) String() string {
	if text, ok := stepText[s]; ok {
		return fmt.Sprintf("ci/setup.sh step %d, %s", int(s), text)
	}
	return fmt.Sprintf("ci/setup.sh step %d", int(s))
}

// SetupRequired reports whether the environment says setup has run
// (SFCONFORM_REQUIRE_SETUP=1). Any value other than empty, 0 and 1 is an
// error: a typo must not quietly turn the failures back into skips.
func SetupRequired() (bool, error) {
	switch v := os.Getenv(RequireSetupEnv); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want 1 (setup has run: a missing tool fails the test) or unset", RequireSetupEnv, v)
	}
}

// Missing ends the test for lack of something step provides. The message,
// formatted from format and args, says what is absent. It skips the test,
// or fails it when SetupRequired.
func Missing(t testing.TB, step Step, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if step == BinutilsSrc {
		missingSourceBuild(t, msg)
		return
	}
	required, err := SetupRequired()
	switch {
	case err != nil:
		t.Fatalf("%s; and %v", msg, err)
	case required:
		t.Fatalf("%s, although %s=1 says setup has run: run 'make setup' (%s)", msg, RequireSetupEnv, step)
	default:
		t.Skipf("%s: run 'make setup' (%s) for this test; skipping", msg, step)
	}
}

// missingSourceBuild is Missing for the source build of binutils, which
// 'make binutils-src' provides and SourceBuildRequiredEnv requires.
func missingSourceBuild(t testing.TB, msg string) {
	t.Helper()
	switch v := os.Getenv(SourceBuildRequiredEnv); v {
	case "", "0":
		t.Skipf("%s: run 'make binutils-src' (%s) for this test; skipping", msg, BinutilsSrc)
	case "1":
		t.Fatalf("%s, although %s=1 says the source build is required: run 'make binutils-src' (%s)", msg, SourceBuildRequiredEnv, BinutilsSrc)
	default:
		t.Fatalf("%s; and %s=%q: want 1 (the source build is required) or unset", msg, SourceBuildRequiredEnv, v)
	}
}

// IfNotProvisioned ends the test as Missing does when err says that
// something setup provides is missing (a *toolchain.NotProvisionedError
// in its tree), for the step the error names. Any other error, or nil,
// it leaves to the test. (testenv does not import toolchain, whose own
// tests use testenv: it finds the error by its SetupStep method.)
func IfNotProvisioned(t testing.TB, err error) {
	t.Helper()
	var np interface{ SetupStep() int }
	if errors.As(err, &np) {
		Missing(t, Step(np.SetupStep()), "%v", err)
	}
}

// LookPath returns the path of the program name on PATH, and calls
// Missing when there is none.
func LookPath(t testing.TB, name string, step Step) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, step, "%s is not on PATH (%v)", name, err)
	}
	return path
}
