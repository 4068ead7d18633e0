package consumer

import "strings"

// About is what a consumer kind says of itself: its registry entry. Every
// fact that other packages need about one consumer (which setup step
// provides it, which names with an argument are worth running, which
// patterns it cannot be judged on) is here, next to the consumer, so that
// adding a consumer touches its own file, this registry and its setup step
// only (docs/extending.md).
type About struct {
	// Kind is the registry name: "builtin", "libsframe", "exec"; for a
	// family member its full name ("objdump-2.47").
	Kind string
	// Setup is the ci/setup.sh step that provides the consumer;
	// toolchain.NoSetup when it is built into sfconform or brings its own
	// program (exec).
	Setup int
	// Library names the library whose code decides what the consumer
	// reads ("libsframe", "glibc"), "" when that is sfconform's own code
	// or a program of the user's. A reproducer of its failure is written
	// against that library (repro's report kinds).
	Library string
	// Variants are the names with an argument that campaigns over every
	// consumer run too ("glibc:strict").
	Variants []string
	// Limits are the patterns the consumer reads the SFrame version of but
	// cannot be judged on, each with the reason: what its unwinder does
	// not do by design, as opposed to what it does wrong.
	Limits map[string]string
	// Layouts are the section layout shapes (producer.LayoutNames:
	// "aux-header", "unsorted", "section-relative", "fre-padding",
	// "concatenated", "modules") the
	// consumer declares it reads: a producer that varies a section's
	// layout gives it those, and only those. None: the plain layout only.
	Layouts []string
	// NeedsArg says the kind is usable only as "kind:argument" (exec).
	NeedsArg bool
	// Summary is one line for 'sfconform run --list'.
	Summary string
}

// Versioned is a consumer that names its exact version: the library or
// tool and the package it came from, or sfconform's own build. Every
// registered consumer is one (tested); Version asks it.
type Versioned interface {
	ExactVersion() string
}

// Version is c's exact version (Versioned), or its name for a consumer
// that does not say.
func Version(c Consumer) string {
	if v, ok := c.(Versioned); ok {
		if s := v.ExactVersion(); s != "" {
			return s
		}
	}
	return c.Name()
}

// Lookup returns the registry entry of a consumer name: "glibc:strict"
// is glibc's, "objdump-2.47" its family's member (by the form of the
// name: whether its tool is provisioned is New's business). ok is false
// for a name of no form the registry knows. It touches no file system.
func Lookup(name string) (About, bool) {
	kind, _, _ := strings.Cut(name, ":")
	if r, ok := registry[kind]; ok {
		return r.about, true
	}
	for _, f := range families {
		if a, ok := f.describe(kind); ok {
			return a, true
		}
	}
	return About{}, false
}

// Describe lists every consumer kind there is now, registered and family
// members, in name order.
func Describe() []About {
	var out []About
	for _, n := range Names() {
		if a, ok := Lookup(n); ok {
			out = append(out, a)
		}
	}
	return out
}

// PatternLimit says why the consumer called name cannot be judged on the
// programs of pattern although it reads their SFrame version: "" when it
// can (About.Limits).
func PatternLimit(name, pattern string) string {
	a, _ := Lookup(name)
	return a.Limits[pattern]
}

// LayoutReader is a consumer that says itself which layout shapes it
// reads, beyond its registry entry (an exec consumer learns from the
// program's hello whether it takes several modules).
type LayoutReader interface {
	LayoutsRead() []string
}

// Reads is the layout shapes consumer c reads: its own answer
// (LayoutReader), or its registry entry's (LayoutsRead).
func Reads(c Consumer) []string {
	if r, ok := c.(LayoutReader); ok {
		return r.LayoutsRead()
	}
	return LayoutsRead(c.Name())
}

// LayoutsRead is the section layout shapes the consumer called name
// declares it reads (About.Layouts).
func LayoutsRead(name string) []string {
	a, _ := Lookup(name)
	return a.Layouts
}

// Runnable lists every consumer name that needs no argument, with the
// variants its entry names: what a campaign over every consumer runs
// (each still has to be made: a family member or C consumer may be
// missing).
func Runnable() []string {
	var out []string
	for _, a := range Describe() {
		if a.NeedsArg {
			continue
		}
		out = append(out, a.Kind)
		out = append(out, a.Variants...)
	}
	return out
}

// SetupProvided names every consumer that 'make setup' provisions, with
// the ci/setup.sh step that does: once setup has run, one of them that
// cannot be made is a broken setup, not a cell to skip. Family members
// are those the family expects setup to provide (RegisterFamily's
// expected), whether or not they are there now.
func SetupProvided() map[string]int {
	out := map[string]int{}
	for _, r := range registry {
		if r.about.Setup > 0 {
			out[r.about.Kind] = r.about.Setup
			for _, v := range r.about.Variants {
				out[v] = r.about.Setup
			}
		}
	}
	for _, f := range families {
		for _, a := range f.expected() {
			out[a.Kind] = a.Setup
		}
	}
	return out
}

// Hello is what an out-of-process consumer announced of itself in its
// hello (NAME VERSION, docs/consumer-protocol.md), recorded in reproducers
// and reports next to the command that ran it; "" for a consumer that has
// no hello or has not said it yet.
func Hello(c Consumer) string {
	if p, ok := c.(interface{ Peer() string }); ok {
		return p.Peer()
	}
	return ""
}
