package consumer

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// Step is one machine state to unwind from.
//
// Regs, Mem and Snapshot are valid only during the Unwind call that
// receives them (the harness reuses their memory for the next batch): a
// consumer that keeps them must copy. For consumers that take batches
// (BatchSize > 1), Snapshot holds the same registers and a copy of the
// live stack, serialisable as it is; Regs and Mem then point into it. For
// in-process consumers Snapshot is nil and Mem reads the live machine.
type Step struct {
	Index    int
	Regs     *machine.Registers
	Mem      machine.Memory
	Snapshot *machine.Snapshot
}

// Result is one unwound backtrace: the frames produced and the error the
// consumer stopped with (nil when it reached the outermost frame). When
// the consumer reached a frame it could not unwind, that frame is the
// last one, marked Partial. An error wrapping frame.ErrNoInfo means "no
// unwind information for that PC"; any other error, a failure.
type Result struct {
	Frames []frame.Frame
	Err    error
}

// Consumer is an unwinder under test.
type Consumer interface {
	// Name is the registry name that made the consumer, e.g. "builtin".
	Name() string
	// Supports says whether the consumer reads SFrame version v sections
	// of target t (in t's byte order); a non-nil error is the reason it
	// does not, e.g. "libsframe refuses SFrame version 1".
	Supports(t target.Target, v int) error
	// Load prepares for the image's SFrame section. An error here means
	// the consumer refused the section; every step is then judged ERROR.
	Load(img *image.Image) error
	// BatchSize is how many steps Unwind wants at once: 1 for in-process
	// consumers reading live memory.
	BatchSize() int
	// Unwind fills out[i] for steps[i]. out[i].Frames may reuse its
	// backing array between calls. A returned error means the consumer
	// itself failed (crashed, hung): every step of the batch is ERROR.
	Unwind(steps []Step, out []Result) error
	Close() error
}

// Constructor makes a consumer; arg is what followed "kind:" in its name.
type Constructor func(name, arg string) (Consumer, error)

// registry maps a consumer kind to its entry. Each consumer lives in its
// own file and adds itself with Register from init.
var registry = map[string]entry{}

type entry struct {
	about About
	mk    Constructor
}

// families are the consumer kinds found at run time (RegisterFamily).
var families = map[string]family{}

type family struct {
	list     func() []About // the members there are now
	expected func() []About // the members setup provides
	// describe gives the entry of a member by the form of its name,
	// without looking for its tool (Lookup is called per cell and pattern).
	describe func(kind string) (About, bool)
	mk       Constructor
}

// Register adds a consumer kind, described by a (a.Kind is its name). It
// panics on a duplicate: two files claiming one name is a programming
// error.
func Register(a About, mk Constructor) {
	if _, dup := registry[a.Kind]; dup {
		panic("consumer: " + a.Kind + " registered twice")
	}
	registry[a.Kind] = entry{about: a, mk: mk}
}

// RegisterFamily adds a family of consumer kinds that exist only when a
// tool is provisioned, one kind per tool, e.g. "objdump-2.47": list
// describes the kinds there are now, expected those setup provides, and
// describe a member by the form of its name, whether or not its tool is
// there. They are called when a name is looked up or the kinds are listed,
// never at init, so that importing the package touches no file system.
// Static kinds (Register) win over family members of the same name. It
// panics on a duplicate family name.
func RegisterFamily(name string, list, expected func() []About, describe func(kind string) (About, bool), mk Constructor) {
	if _, dup := families[name]; dup {
		panic("consumer: family " + name + " registered twice")
	}
	families[name] = family{list: list, expected: expected, describe: describe, mk: mk}
}

func (f family) has(kind string) bool {
	return slices.ContainsFunc(f.list(), func(a About) bool { return a.Kind == kind })
}

// New makes a consumer from its name: "builtin", "kind:argument" for
// consumers that take one, or a family member's name ("objdump-2.47").
func New(name string) (Consumer, error) {
	kind, arg, _ := strings.Cut(name, ":")
	if r, ok := registry[kind]; ok {
		return r.mk(name, arg)
	}
	for _, f := range families {
		if f.has(kind) {
			return f.mk(name, arg)
		}
	}
	return nil, fmt.Errorf("unknown consumer %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the consumer kinds: the registered ones and every family's
// current members.
func Names() []string {
	n := make([]string, 0, len(registry))
	for k := range registry {
		n = append(n, k)
	}
	for _, f := range families {
		for _, a := range f.list() {
			if _, static := registry[a.Kind]; !static && !slices.Contains(n, a.Kind) {
				n = append(n, a.Kind)
			}
		}
	}
	sort.Strings(n)
	return n
}

// InFamily reports whether kind is a member of a family (a consumer that
// runs a provisioned tool) rather than a registered kind.
func InFamily(kind string) bool {
	if _, static := registry[kind]; static {
		return false
	}
	for _, f := range families {
		if f.has(kind) {
			return true
		}
	}
	return false
}
