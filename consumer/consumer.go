package consumer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

// Step is one machine state to unwind from. Regs and Mem are valid only
// during the Unwind call that receives them: a consumer that keeps them
// must copy.
type Step struct {
	Index int
	Regs  *sframe.RegisterFile
	Mem   sframe.Memory
}

// Result is one unwound backtrace: the frames produced and the error the
// consumer stopped with (nil when it reached the outermost frame).
type Result struct {
	Frames []oracle.Frame
	Err    error
}

// Consumer is an unwinder under test.
type Consumer interface {
	Name() string
	// Load prepares for the image's SFrame section. An error here means
	// the consumer refused the section; every step is then judged ERROR.
	Load(img *producer.Image) error
	// BatchSize is how many steps Unwind wants at once: 1 for in-process
	// consumers reading live memory.
	BatchSize() int
	// Unwind fills out[i] for steps[i]. out[i].Frames may reuse its
	// backing array between calls. A returned error means the consumer
	// itself failed (crashed, hung): every step of the batch is ERROR.
	Unwind(steps []Step, out []Result) error
	Close() error
}

// constructors maps a consumer name to its constructor; new consumers
// register themselves here.
var constructors = map[string]func(arg string) (Consumer, error){
	"builtin": func(string) (Consumer, error) { return NewBuiltin(), nil },
}

// New makes a consumer from its name: "builtin", or "kind:argument" for
// consumers that take one.
func New(name string) (Consumer, error) {
	kind, arg, _ := strings.Cut(name, ":")
	mk, ok := constructors[kind]
	if !ok {
		return nil, fmt.Errorf("unknown consumer %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return mk(arg)
}

// Names lists the known consumer kinds.
func Names() []string {
	var n []string
	for k := range constructors {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
