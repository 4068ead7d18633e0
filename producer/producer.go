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

// About is what a producer says of itself: its registry entry.
type About struct {
	// Name is the registry name: "builtin-v3", "gas-2.47", "gas" (of
	// gas:DIR).
	Name string
	// Setup is the ci/setup.sh step that provides it; toolchain.NoSetup
	// when it is built into sfconform or its tools are the user's (gas:DIR).
	Setup int
	// NeedsArg says the name is usable only as "name:argument".
	NeedsArg bool
	// Summary is one line for 'sfconform run --list'.
	Summary string
}

// Versioned is a producer that names its exact version: the tools and the
// packages they came from, or sfconform's own build. Every registered
// producer is one (tested); Version asks it.
type Versioned interface {
	ExactVersion() string
}

// Version is p's exact version (Versioned), or its name for a producer
// that does not say.
func Version(p Producer) string {
	if v, ok := p.(Versioned); ok {
		if s := v.ExactVersion(); s != "" {
			return s
		}
	}
	return p.Name()
}

// registry maps a producer name (or "kind" of "kind:argument") to its
// entry. Each producer lives in its own file and adds itself with
// Register from init.
var registry = map[string]entry{}

type entry struct {
	about About
	mk    Constructor
}

// expected are the producers setup provides, whether or not they are
// there now (Expect); families the steps that provide any producer whose
// name starts with the key (ExpectFamily).
var (
	expected = map[string]About{}
	families = map[string]int{}
)

// Register adds a producer. It panics on a duplicate.
func Register(a About, mk Constructor) {
	if _, dup := registry[a.Name]; dup {
		panic("producer: " + a.Name + " registered twice")
	}
	registry[a.Name] = entry{about: a, mk: mk}
}

// Expect declares a producer that setup provides (a.Setup) and that is
// registered only when its tools are there: without them, New says which
// step provides it, and SetupProvided names it.
func Expect(a About) { expected[a.Name] = a }

// ExpectFamily declares that producers named prefix+VERSION come from
// setup step (e.g. "gas-", step 4): New says so for one that is not
// there, as for an Expect'ed one.
func ExpectFamily(prefix string, step int) { families[prefix] = step }

// expectedStep is the setup step of a producer that is not registered: 0
// when its name is no expected producer's nor family's.
func expectedStep(name string) int {
	if a, ok := expected[name]; ok {
		return a.Setup
	}
	for prefix, step := range families {
		if strings.HasPrefix(name, prefix) {
			return step
		}
	}
	return 0
}

// New makes a producer from its name, e.g. "builtin-v3".
func New(name string) (Producer, error) {
	kind, arg, _ := strings.Cut(name, ":")
	r, ok := registry[kind]
	if !ok {
		if step := expectedStep(kind); step != 0 {
			return nil, toolchain.NotProvisioned(step, "producer %s: no such toolchain under %s (provisioned producers: %s)",
				name, filepath.Join(toolchain.CacheDir(), "toolchains"), strings.Join(Names(), ", "))
		}
		return nil, fmt.Errorf("unknown producer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return r.mk(name, arg)
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

// Lookup returns the registry entry of a producer name ("gas:DIR" is
// gas's); an expected producer that is not there is found too.
func Lookup(name string) (About, bool) {
	kind, _, _ := strings.Cut(name, ":")
	if r, ok := registry[kind]; ok {
		return r.about, true
	}
	a, ok := expected[kind]
	return a, ok
}

// Describe lists every registered producer's entry, in name order.
func Describe() []About {
	var out []About
	for _, n := range Names() {
		out = append(out, registry[n].about)
	}
	return out
}

// SetupProvided names every producer 'make setup' provisions, with the
// ci/setup.sh step that does: once setup has run, one that cannot be made
// is a broken setup, not a cell to skip.
func SetupProvided() map[string]int {
	out := map[string]int{}
	for _, r := range registry {
		if r.about.Setup > 0 && !r.about.NeedsArg {
			out[r.about.Name] = r.about.Setup
		}
	}
	for n, a := range expected {
		out[n] = a.Setup
	}
	return out
}
