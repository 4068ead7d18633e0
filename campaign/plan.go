package campaign

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// Plan is what a cell checks, decided once before its first program: the
// producer's SFrame version on the target (asked once), that the consumer
// reads it, and the pattern mix.
type Plan struct {
	Target    target.Target
	Producer  producer.Producer
	Version   int
	Toolchain bool // a toolchain producer: its rows are also compared with sfconform's own encoding
	Mix       Mix
}

// NewPlan plans prod's programs on t for the consumers (none: any), from
// the patterns asked (nil: the default mix). A pair that cannot meet (the
// producer emits no SFrame for t, a consumer does not read that version,
// none of the patterns asked is in the mix: then with the plan, for what
// its mix leaves out) is an *UnsupportedError with the reason; a consumer that cannot be asked (consumer.ErrCannotAsk) is
// that error itself, a broken consumer rather than an unsupported pair.
func NewPlan(prod producer.Producer, t target.Target, asked []string, conses ...consumer.Consumer) (*Plan, error) {
	unsupported := func(cons string, err error) error {
		if errors.Is(err, consumer.ErrCannotAsk) {
			return err
		}
		return &UnsupportedError{Producer: prod.Name(), Consumer: cons, Target: t, Reason: err.Error()}
	}
	v, err := prod.SFrameVersion(t)
	if err != nil {
		name := ""
		if len(conses) > 0 {
			name = conses[0].Name()
		}
		return nil, unsupported(name, err)
	}
	for _, c := range conses {
		if err := c.Supports(t, v); err != nil {
			return nil, unsupported(c.Name(), err)
		}
	}
	plan := &Plan{Target: t, Producer: prod, Version: v, Toolchain: producer.IsToolchain(prod)}
	plan.Mix, err = NewMix(prod, t, v, asked)
	if err != nil {
		// The plan too, for what it leaves out: none of the patterns
		// asked is in the mix.
		var u *UnsupportedError
		if errors.As(err, &u) && len(conses) > 0 {
			u.Consumer = conses[0].Name()
		}
		return plan, err
	}
	plan.setLayouts(conses)
	return plan, nil
}

// UnsupportedError says why a producer and a consumer cannot meet on a
// target: the producer emits no SFrame for it, the consumer does not read
// what the producer emits, or none of the patterns asked is in the mix. It
// is reported as "unsupported (reason)", never as a failure.
type UnsupportedError struct {
	Producer, Consumer string
	Target             target.Target
	Reason             string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s x %s on %s: unsupported (%s)", e.Producer, e.Consumer, e.Target.Name(), e.Reason)
}
