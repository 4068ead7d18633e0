package producer

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Producer turns a generated Program into an Image whose SFrame section it
// made.
type Producer interface {
	// Name is the registry name that made the producer, e.g. "builtin-v3".
	Name() string
	// SFrameVersion is the version of the sections the producer emits for
	// t, in t's byte order; a non-nil error is the reason it emits none
	// for t (e.g. "GNU as 2.44 does not emit SFrame for s390x").
	SFrameVersion(t target.Target) (int, error)
	// Produce makes the image of a laid-out program.
	Produce(p *gen.Program) (*image.Image, error)
}

// Constructor makes a producer; arg is what followed "kind:" in its name.
type Constructor func(name, arg string) (Producer, error)

// registry maps a producer name (or "kind" of "kind:argument") to its
// constructor. Each producer lives in its own file and adds itself with
// Register from init.
var registry = map[string]Constructor{}

// Register adds a producer. It panics on a duplicate.
func Register(name string, mk Constructor) {
	if _, dup := registry[name]; dup {
		panic("producer: " + name + " registered twice")
	}
	registry[name] = mk
}

// New makes a producer from its name, e.g. "builtin-v3".
func New(name string) (Producer, error) {
	kind, arg, _ := strings.Cut(name, ":")
	mk, ok := registry[kind]
	if !ok {
		if strings.HasPrefix(name, "gas-") || strings.HasPrefix(name, "llvm-mc-") {
			// A toolchain producer exists when its toolchain does.
			return nil, fmt.Errorf("producer %s: no such toolchain under %s (provisioned producers: %s): %w",
				name, filepath.Join(toolchain.CacheDir(), "toolchains"), strings.Join(Names(), ", "), toolchain.ErrNotProvisioned)
		}
		return nil, fmt.Errorf("unknown producer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(name, arg)
}

// Names lists the registered producers.
func Names() []string {
	n := make([]string, 0, len(registry))
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
