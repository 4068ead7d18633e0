package difffuzz

import (
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
)

var (
	seedOnce  sync.Once
	seedCases []*Case
	seedErr   error
)

// seedsFor makes the seed cases once per test process; a producer whose
// toolchain is not provisioned ends the test as testenv says.
func seedsFor(t testing.TB) []*Case {
	t.Helper()
	seedOnce.Do(func() { seedCases, seedErr = Seeds(Producers, DefaultSeedOptions) })
	testenv.IfNotProvisioned(t, seedErr)
	if seedErr != nil {
		t.Fatal(seedErr)
	}
	return seedCases
}

// runnerFor starts a Runner for the test, or ends the test as testenv
// says when setup has not built the C consumers.
func runnerFor(t testing.TB, withGlibc bool) *Runner {
	t.Helper()
	r, err := NewRunner(withGlibc)
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// envInt reads a positive integer from the environment, or def.
func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
