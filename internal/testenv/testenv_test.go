package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test ended instead of
// ending it. Only the methods Missing and LookPath call are implemented.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// The tests that set the environment do not run in parallel (t.Setenv
// refuses to).

func TestMissingSkipsWithoutSetup(t *testing.T) {
	for _, v := range []string{"", "0"} {
		t.Setenv(RequireSetupEnv, v)
		var r recorder
		Missing(&r, Binutils, "gas-2.44 for %s is not provisioned", "s390x")
		if r.failed != "" {
			t.Errorf("%s=%q: Missing failed the test (%q), want a skip", RequireSetupEnv, v, r.failed)
		}
		for _, want := range []string{"gas-2.44 for s390x is not provisioned", "make setup", "ci/setup.sh step 4"} {
			if !strings.Contains(r.skipped, want) {
				t.Errorf("%s=%q: skip message %q does not say %q", RequireSetupEnv, v, r.skipped, want)
			}
		}
	}
}

func TestMissingFailsOnceSetupRan(t *testing.T) {
	t.Setenv(RequireSetupEnv, "1")
	var r recorder
	Missing(&r, HostPackages, "objdump is not on PATH")
	if r.skipped != "" {
		t.Errorf("Missing skipped (%q) with %s=1, want a failure", r.skipped, RequireSetupEnv)
	}
	for _, want := range []string{"objdump is not on PATH", RequireSetupEnv + "=1", "make setup", "ci/setup.sh step 1"} {
		if !strings.Contains(r.failed, want) {
			t.Errorf("failure message %q does not say %q", r.failed, want)
		}
	}
}

func TestMissingRefusesAnUnknownSetting(t *testing.T) {
	t.Setenv(RequireSetupEnv, "yes")
	var r recorder
	Missing(&r, LLVM, "llvm-mc is not provisioned")
	if r.skipped != "" || !strings.Contains(r.failed, `"yes"`) || !strings.Contains(r.failed, "llvm-mc is not provisioned") {
		t.Errorf("%s=yes: skipped %q, failed %q; want a failure quoting the value and the missing piece", RequireSetupEnv, r.skipped, r.failed)
	}
}

// The source build of binutils is not make setup's: its absence skips even
// with SFCONFORM_REQUIRE_SETUP=1, naming make binutils-src, and fails with
// SFCONFORM_REQUIRE_BINUTILS_SRC=1.
func TestMissingSourceBuild(t *testing.T) {
	t.Setenv(RequireSetupEnv, "1")
	t.Setenv(SourceBuildRequiredEnv, "")
	var r recorder
	Missing(&r, BinutilsSrc, "gas-src is not built")
	if r.failed != "" || !strings.Contains(r.skipped, "make binutils-src") || !strings.Contains(r.skipped, "gas-src is not built") {
		t.Errorf("without %s: failed %q, skipped %q; want a skip naming make binutils-src", SourceBuildRequiredEnv, r.failed, r.skipped)
	}
	for _, v := range []string{"1", "yes"} {
		t.Setenv(SourceBuildRequiredEnv, v)
		r = recorder{}
		Missing(&r, BinutilsSrc, "gas-src is not built")
		if r.skipped != "" || !strings.Contains(r.failed, SourceBuildRequiredEnv) || !strings.Contains(r.failed, "gas-src is not built") {
			t.Errorf("%s=%s: failed %q, skipped %q; want a failure naming the variable", SourceBuildRequiredEnv, v, r.failed, r.skipped)
		}
	}
}

func TestLookPath(t *testing.T) {
	t.Setenv(RequireSetupEnv, "1")
	var r recorder
	// sh is on every machine these tests run on: POSIX requires it.
	if p := LookPath(&r, "sh", HostPackages); p == "" || r.failed != "" || r.skipped != "" {
		t.Errorf("LookPath(sh) = %q, failed %q, skipped %q", p, r.failed, r.skipped)
	}
	const absent = "sfconform-no-such-tool"
	if p := LookPath(&r, absent, HostPackages); p != "" || !strings.Contains(r.failed, absent) {
		t.Errorf("LookPath(%s) = %q, failed %q; want a failure naming it", absent, p, r.failed)
	}
}

func TestStepNames(t *testing.T) {
	t.Parallel()
	for step, want := range map[Step]string{
		HostPackages: "ci/setup.sh step 1, host packages",
		Unicorn:      "ci/setup.sh step 2, Unicorn 2.1",
		Ginkgo:       "ci/setup.sh step 3, the Ginkgo CLI",
		Binutils:     "ci/setup.sh step 4, GNU binutils",
		LLVM:         "ci/setup.sh step 5, sid's llvm-mc",
		Step(9):      "ci/setup.sh step 9",
	} {
		if got := step.String(); !strings.HasPrefix(got, want) {
			t.Errorf("Step(%d).String() = %q, want it to start %q", int(step), got, want)
		}
	}
}

// TestStepsAreSetupsOwn holds the numbering to ci/setup.sh's own list of
// steps, so that a message never sends anyone to the wrong step.
func TestStepsAreSetupsOwn(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../ci/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	for step, word := range map[Step]string{
		HostPackages: "host packages", Unicorn: "Unicorn 2.1", Ginkgo: "Ginkgo CLI",
		Binutils: "GNU binutils", LLVM: "llvm-mc", RealCode: "real-code campaign", Browser: "headless browser",
		BinutilsSrc: "make binutils-src",
	} {
		line := fmt.Sprintf("#   %d. ", int(step))
		i := strings.Index(string(data), line)
		if i < 0 {
			t.Errorf("ci/setup.sh has no step %d (%q)", int(step), line)
			continue
		}
		rest, _, _ := strings.Cut(string(data[i+len(line):]), "\n")
		if !strings.Contains(rest, word) || !strings.Contains(step.String(), word) {
			t.Errorf("ci/setup.sh step %d is %q, testenv calls it %q: want both to mention %q", int(step), rest, step, word)
		}
	}
}

func TestSeedFromEnvironment(t *testing.T) {
	t.Setenv(SeedVar, "0x2a")
	if got := Seed(t, 7); got != 42 {
		t.Fatalf("Seed with %s=0x2a = %d, want 42", SeedVar, got)
	}
	t.Setenv(SeedVar, "")
	if got := Seed(t, 7); got != 7 {
		t.Fatalf("Seed without %s = %d, want the default 7", SeedVar, got)
	}
}

// The conformance kit's Python unwinder needs python3; setup installs it
// in step 1, and a missing python3 names that step.
func TestPython3IsAHostPackage(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../ci/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(data), "\nHOST_PACKAGES=(")
	list, _, _ = strings.Cut(list, ")")
	found := false
	for _, p := range strings.Fields(list) {
		found = found || p == "python3"
	}
	if !ok || !found {
		t.Errorf("ci/setup.sh's HOST_PACKAGES (%q) lacks python3, which kit's test runs", list)
	}
	if !strings.Contains(HostPackages.String(), "python3") {
		t.Errorf("%q does not name python3", HostPackages)
	}
}

// stepErr stands for toolchain.NotProvisionedError, which testenv finds by
// its SetupStep method.
type stepErr int

func (e stepErr) Error() string  { return "consumer x is not built" }
func (e stepErr) SetupStep() int { return int(e) }

func TestIfNotProvisioned(t *testing.T) {
	t.Setenv(RequireSetupEnv, "1")
	var r recorder
	IfNotProvisioned(&r, fmt.Errorf("making it: %w", stepErr(6)))
	if !strings.Contains(r.failed, "consumer x is not built") || !strings.Contains(r.failed, "ci/setup.sh step 6") {
		t.Errorf("failure %q does not name the error and its step", r.failed)
	}
	r = recorder{}
	IfNotProvisioned(&r, fmt.Errorf("something else"))
	IfNotProvisioned(&r, nil)
	if r.failed != "" || r.skipped != "" {
		t.Errorf("another error ended the test: failed %q, skipped %q", r.failed, r.skipped)
	}
}
