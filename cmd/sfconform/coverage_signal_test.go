package main

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// A zero among the signal edges comes with the reason when the version
// cannot express a signal pattern, and only then.
func TestNoSignalReason(t *testing.T) {
	t.Parallel()
	for _, tg := range []target.Target{target.X86_64, target.AArch64, target.S390X} {
		if why := noSignalReason(tg, 2); !strings.Contains(why, "SFrame v2 cannot express pattern signal") {
			t.Errorf("%s v2: %q", tg.Name(), why)
		}
		if why := noSignalReason(tg, 3); why != "" {
			t.Errorf("%s v3 has signal patterns, yet: %q", tg.Name(), why)
		}
	}
}
