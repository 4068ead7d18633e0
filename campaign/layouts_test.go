package campaign

import (
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// TestPlanLayouts checks that a cell says of every section layout shape
// what it does: the builtin producer's version 2 gives the builtin
// consumer every shape, version 3 only what its strict rules allow, and a
// shape a consumer does not declare is not produced, with the reason.
func TestPlanLayouts(t *testing.T) {
	t.Parallel()
	status := func(p *Plan) map[string]LayoutStatus {
		out := map[string]LayoutStatus{}
		for _, l := range p.Mix.Layouts {
			out[l.Name] = l
		}
		if len(out) != len(producer.LayoutNames) {
			t.Fatalf("%d layout statuses for %d shapes: %+v", len(out), len(producer.LayoutNames), p.Mix.Layouts)
		}
		return out
	}
	p, err := NewPlan(producer.Builtin{Version: 2}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	for n, l := range status(p) {
		if !l.Produced || !p.Producer.(producer.Builtin).Layouts.Has(n) {
			t.Errorf("v2 x builtin: %s", l)
		}
	}
	p, err = NewPlan(producer.Builtin{Version: 3}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	for n, l := range status(p) {
		if l.Produced != (n == producer.LayoutPadding) || !l.Produced && l.Why == "" {
			t.Errorf("v3 x builtin: %s", l)
		}
	}
	if s := p.Mix.LayoutNote(); !strings.Contains(s, "aux-header: not produced (SFrame v3") {
		t.Errorf("note %q", s)
	}
	// Two consumers: what both read.
	p.Version = 2
	p.Producer = producer.Builtin{Version: 2}
	p.setLayouts([]consumer.Consumer{consumer.NewBuiltin(), named("libsframe")})
	got := p.Producer.(producer.Builtin).Layouts.Names()
	if want := consumer.LayoutsRead("libsframe"); !slices.Equal(got, want) {
		t.Errorf("builtin and libsframe: %v, libsframe declares %v", got, want)
	}
	if l := status(p)[producer.LayoutUnsorted]; l.Produced || !strings.Contains(l.Why, "libsframe") {
		t.Errorf("builtin and libsframe: %s", l)
	}
}

// TestConsumersDeclareKnownLayouts: every layout a consumer declares is a
// shape a producer knows.
func TestConsumersDeclareKnownLayouts(t *testing.T) {
	for _, a := range consumer.Describe() {
		if _, err := producer.LayoutSet(a.Layouts...); err != nil {
			t.Errorf("consumer %s: %v", a.Kind, err)
		}
	}
}

// named is a consumer that is only a name, for what the registry says of it.
type namedConsumer struct {
	consumer.Consumer
	name string
}

func (n namedConsumer) Name() string { return n.name }

func named(name string) consumer.Consumer { return namedConsumer{name: name} }
