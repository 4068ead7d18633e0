package testenv

import (
	"os"
	"strconv"
	"testing"
)

// SeedVar is the one environment variable that replays a randomised test:
// every test that draws random input takes its seed from Seed.
const SeedVar = "SFCONFORM_SEED"

// Seed returns $SFCONFORM_SEED when it is set, otherwise def, and logs the
// seed with the command line that replays it. A value that is not a number
// fails the test instead of being ignored.
func Seed(t testing.TB, def uint64) uint64 {
	t.Helper()
	seed := def
	if v := os.Getenv(SeedVar); v != "" {
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", SeedVar, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with %s=%d)", seed, SeedVar, seed)
	return seed
}
