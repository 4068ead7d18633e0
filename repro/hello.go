package repro

import "github.com/sfconform/sfconform/consumer"

// ConsumerHello is what an out-of-process consumer announced of itself in
// its hello (NAME VERSION, docs/consumer-protocol.md), recorded in the
// reproducer and the report next to the command that ran it; "" for a
// consumer that has no hello or has not said it.
func ConsumerHello(c consumer.Consumer) string {
	if p, ok := c.(interface{ Peer() string }); ok {
		return p.Peer()
	}
	return ""
}
