package repro

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/toolchain"
)

// Consent is what the user allowed a replay to run besides the
// provisioned producers and consumers: a reproducer is a file anyone may
// have written (attached to a bug report, downloaded from a CI run), and
// a consumer "exec:COMMAND" it names is a shell command, a producer
// "gas:DIR" the as and ld found in a directory.
type Consent struct {
	// Given are the producer and consumer names the user typed: a name
	// in the file equal to one of them runs.
	Given []string
	// Trust runs whatever the file names (--trust-exec).
	Trust bool
}

// ErrNoConsent is wrapped by the error of a replay that would run a
// command or tools a reproducer names without the user's consent.
var ErrNoConsent = errors.New("not run without consent")

// ConsentError names the field, what it would run and how to allow it.
type ConsentError struct {
	Field string // "consumer" or "producer"
	Name  string // the name in the file: exec:COMMAND, gas:DIR
	Runs  string // what it would run, in words
	What  string // the command or directory itself
	Flag  string // the flag that gives consent with the same name
}

func (e *ConsentError) Error() string {
	return fmt.Sprintf("the reproducer's %s would run %s:\n\n    %s\n\n"+
		"sfconform runs nothing a file names without your consent: to run it, give sfconform repro the same name "+
		"(%s %s) or --trust-exec; or replay with a provisioned %s instead (e.g. %s builtin)",
		e.Field, e.Runs, e.What, e.Flag, toolchain.ShellQuote(e.Name), e.Field, e.Flag)
}

func (e *ConsentError) Unwrap() error { return ErrNoConsent }

// CheckConsent refuses a replay of c with opt that would run a command or
// tools the file names without consent: the case's consumer when it is
// the one that unwinds, its producer when the image is made again with
// it. Names that take an argument (kind:ARG) are the ones that run
// something of the file's choosing; registered names without one
// (builtin, libsframe, gas-2.44) run only what setup provisioned. A name
// with control characters is refused even with consent: it cannot be
// shown as it is.
func CheckConsent(c *corpus.Case, opt Options) error {
	if opt.Consumer == "" || opt.Consumer == c.Consumer {
		if err := consent("consumer", "--consumer", c.Consumer, opt.Consent); err != nil {
			return err
		}
	}
	remakes := opt.Remake && (opt.Producer == "" || opt.Producer == c.Producer)
	if remakes {
		if err := consent("producer", "--producer", c.Producer, opt.Consent); err != nil {
			return err
		}
	}
	return nil
}

func consent(field, flag, name string, given Consent) error {
	kind, arg, ok := strings.Cut(name, ":")
	if !ok {
		return nil
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		return fmt.Errorf("the reproducer's %s %q has a control character at byte %d: refused", field, name, i)
	}
	if given.Trust || slices.Contains(given.Given, name) {
		return nil
	}
	// A variant a provisioned consumer declares (glibc:strict) runs
	// nothing of the file's choosing.
	if a, ok := consumer.Lookup(name); ok && slices.Contains(a.Variants, name) {
		return nil
	}
	runs, what := "", arg
	switch kind {
	case "exec":
		runs = "this shell command"
	case "gas":
		runs, what = "the as and ld found in this directory", toolchain.ShellQuote(arg)
	default:
		runs = kind + " with this argument"
	}
	return &ConsentError{Field: field, Name: name, Runs: runs, What: what, Flag: flag}
}
