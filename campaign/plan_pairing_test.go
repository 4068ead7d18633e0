package campaign

import (
	"errors"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// A consumer that answers the handshake with garbage is broken, not a
// pair that cannot meet: NewPlan gives consumer.ErrCannotAsk, never an
// UnsupportedError a run would report as "unsupported" and exit 0 on.
func TestPlanBrokenConsumer(t *testing.T) {
	t.Parallel()
	prod, err := producer.New("builtin-v3")
	if err != nil {
		t.Fatal(err)
	}
	cons, err := consumer.New(`exec:sh -c "echo garbage"`)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	_, err = NewPlan(prod, target.X86_64, nil, cons)
	var u *UnsupportedError
	if !errors.Is(err, consumer.ErrCannotAsk) || errors.As(err, &u) {
		t.Fatalf("NewPlan with a garbage-speaking consumer: %v (%T); want consumer.ErrCannotAsk", err, err)
	}
}
