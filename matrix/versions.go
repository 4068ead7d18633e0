package matrix

import (
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/producer"
)

// Producers lists every registered producer that needs no argument and
// whose tools are provisioned.
func Producers() []string {
	var out []string
	for _, n := range producer.Names() {
		if _, err := producer.New(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Consumers lists every registered consumer that needs no argument (an
// exec: consumer names its command only on the command line) and can be
// made here, with the variants its registry entry names.
func Consumers() []string {
	var out []string
	for _, n := range consumer.Runnable() {
		c, err := consumer.New(n)
		if err != nil {
			continue
		}
		c.Close()
		out = append(out, n)
	}
	return out
}

// Versions names the exact version of every plug-in of the report: what
// the tools a producer ran say of themselves (its images' records, or the
// producer's own ExactVersion) and each consumer's ExactVersion.
func Versions(rep *Report) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Cells {
		if c.Outcome != nil && c.Outcome.Record != nil {
			out[c.Producer] = c.Outcome.Record.Versions()
		}
	}
	for _, n := range rep.Config.Producers {
		if _, ok := out[n]; ok {
			continue
		}
		if p, err := producer.New(n); err == nil {
			out[n] = producer.Version(p)
		}
	}
	for _, n := range rep.Config.Consumers {
		if c, err := consumer.New(n); err == nil {
			out[n] = consumer.Version(c)
			c.Close()
		}
	}
	return out
}

// SetupProducers and SetupConsumers are the real producers and consumers
// "make setup" (ci/setup.sh) provisions, with the step that does: once
// setup has run, one that cannot be made is a broken setup, not a cell to
// skip.
var (
	SetupProducers = producer.SetupProvided()
	SetupConsumers = consumer.SetupProvided()
)
