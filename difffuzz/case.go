package difffuzz

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// Case is one question put to the consumers: an SFrame section at its
// address, for a target, and the machine states to unwind from. A
// reproducer file holds one (Repro), so it replays with no generator,
// producer or emulator.
type Case struct {
	// Name says where the case comes from: the producer, target, version
	// and generator seed of the section it was mutated from, and the
	// mutation.
	Name    string              `json:"name"`
	Target  target.Target       `json:"target"`
	Addr    uint64              `json:"addr"`
	Section HexBytes            `json:"section"`
	Steps   []*machine.Snapshot `json:"steps"`
}

// Image is the case's section as the consumers load it. Only the fields a
// consumer reads are set.
func (c *Case) Image() *image.Image {
	v := 0
	if len(c.Section) > 2 {
		v = int(c.Section[2])
	}
	return &image.Image{Target: c.Target, SFrame: c.Section, SFrameAddr: c.Addr, SFrameVersion: v, Producer: "difffuzz"}
}

// WithSection is a copy of c asking the same steps of another section.
func (c *Case) WithSection(name string, sec []byte) *Case {
	d := *c
	d.Name, d.Section = name, sec
	return &d
}

// HexBytes is a byte string written as hex in JSON, so that a reproducer's
// section reads alongside a hex dump.
type HexBytes []byte

func (h HexBytes) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h)), nil }

func (h *HexBytes) UnmarshalText(b []byte) error {
	out, err := hex.DecodeString(string(b))
	*h = out
	return err
}

// Repro is a reproducer file: a case and what it showed when it was kept.
// Replaying it (TestRepros; one file: go test ./difffuzz -run
// 'TestRepros/NAME') asks the case again and checks that it still shows
// the same thing.
type Repro struct {
	Case *Case `json:"case"`
	// Consumer is the consumer that disagreed with builtin (or crashed).
	Consumer string `json:"consumer"`
	// Class is the disagreement's class (a Rule's name, or "unclassified").
	Class string `json:"class"`
	// Step is the index into Case.Steps of the step that showed it, or -1
	// for the load of the section.
	Step int `json:"step"`
	// Crash is true when the consumer's process died.
	Crash bool `json:"crash,omitempty"`
	// Detail is what the consumers answered, for the reader.
	Detail string `json:"detail"`
	// Nondeterministic marks a crash that asking the case again did not
	// repeat: it depends on memory outside the section (what libsframe
	// read past its buffer). Replaying checks what does repeat: the
	// consumer still disagrees with builtin on the case.
	Nondeterministic bool `json:"nondeterministic,omitempty"`
}

// ReadRepro reads a reproducer file.
func ReadRepro(path string) (*Repro, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Repro
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Case == nil || !r.Case.Target.Valid() {
		return nil, fmt.Errorf("%s: no case, or no valid target in it", path)
	}
	for i, s := range r.Case.Steps {
		if s == nil {
			return nil, fmt.Errorf("%s: step %d is null", path, i)
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%s: step %d: %w", path, i, err)
		}
	}
	return &r, nil
}

// WriteRepro writes a reproducer file.
func WriteRepro(path string, r *Repro) error {
	b, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// reproName is a file name for a reproducer of d in c: the consumer, the
// class, and a hash of the section and the step.
func reproName(d Disagreement, c *Case) string {
	h := sha256.New()
	h.Write(c.Section)
	fmt.Fprintf(h, "|%d|%d", d.Step, len(c.Steps))
	kind := "differs"
	if d.Crash {
		kind = "crash"
	}
	return fmt.Sprintf("%s-%s-%s-%x", d.Consumer, d.Class, kind, h.Sum(nil)[:6])
}
