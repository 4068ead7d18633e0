package campaign

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/validate"
)

// Mix is the pattern mix of a cell: what the generator is asked for, what
// is left out and why, and what a toolchain's tools cannot make as asked.
// NewMix is the only place that decides it.
type Mix struct {
	// Version is the SFrame version the generator expresses
	// (gen.Options.SFrameVersion): the producer's, at least 2; 0 for a
	// toolchain below version 3, which gets every pattern but LeftOut.
	Version int
	// SFrame is the version the producer writes.
	SFrame int
	// Patterns is what the generator is given; nil: its default mix for
	// Version.
	Patterns []string
	// LeftOut are the target's patterns left out of the mix, Why says why.
	LeftOut []string
	Why     string
	// Beyond are the patterns a toolchain's version cannot express that
	// are in its mix all the same: what the toolchain does with such CFI
	// (skip the function, warn, write a wrong row) is its result.
	Beyond []string
	// Limited are the patterns of the mix the producer's tools cannot make
	// as the pattern asks, and why (producer.Limited).
	Limited map[string]string
	// Layouts says, for every section layout shape (producer.LayoutNames),
	// whether the cell's programs get it and, if not, why (setLayouts).
	Layouts []LayoutStatus
}

// LayoutStatus is what a cell does with one section layout shape.
type LayoutStatus struct {
	Name     string `json:"name"`
	Produced bool   `json:"produced"`      // some of the cell's sections have it, and are judged
	Why      string `json:"why,omitempty"` // why none has it, or why they are INVALID
	// Rule, for a shape the version's strict rules forbid that the cell
	// produces all the same (its consumers declare they read it), is the
	// rule its sections break (validate.Rule): INVALID as expected, which
	// the cell counts apart (Cell.ExpectedInvalid) and not as a failure.
	Rule string `json:"invalid_as_expected,omitempty"`
	// Measured, for a shape a toolchain decides, counts the cell's
	// programs whose sections, as the toolchain wrote them, have it
	// (producer.ImageShapes over the bytes): set when the run ends.
	Measured *LayoutCount `json:"measured,omitempty"`
	// Note says more of a produced shape: for modules through a
	// toolchain, whether calls between them go through ld's PLT.
	Note string `json:"note,omitempty"`
}

// LayoutCount is how many of Of programs had a shape in their sections.
type LayoutCount struct {
	With int `json:"programs_with"`
	Of   int `json:"programs"`
}

func (l LayoutStatus) String() string {
	switch {
	case l.Measured != nil && l.Measured.With > 0:
		return fmt.Sprintf("%s: written by the toolchain in %d of %d programs' sections, judged", l.Name, l.Measured.With, l.Measured.Of)
	case l.Measured != nil && l.Measured.Of > 0:
		return fmt.Sprintf("%s: not produced (the toolchain wrote it in 0 of %d programs' sections)", l.Name, l.Measured.Of)
	case l.Measured != nil:
		return l.Name + ": not produced (" + l.Why + "; measured as the run goes)"
	case l.Produced && l.Note != "":
		return l.Name + ": produced and judged (" + l.Note + ")"
	case l.Produced && l.Rule != "":
		return l.Name + ": produced, judged and INVALID as expected (" + l.Why + ")"
	case l.Produced:
		return l.Name + ": produced and judged"
	}
	return l.Name + ": not produced (" + l.Why + ")"
}

// ExpectedRules are the rules the cell's sections break on purpose: those
// of the shapes it produces INVALID as expected.
func (m Mix) ExpectedRules() []string {
	var out []string
	for _, l := range m.Layouts {
		if l.Produced && l.Rule != "" {
			out = append(out, l.Rule)
		}
	}
	return out
}

// setLayouts decides the section layout shapes of the plan's programs for
// the consumers that judge them: the builtin producer gives a shape its
// SFrame version can carry (producer.LayoutShapes) when every consumer
// declares it reads it (consumer.About.Layouts); the plan's producer is
// then the builtin one with those shapes. A shape the version's strict
// rules forbid is produced on the same terms, its sections INVALID as
// expected for that rule (LayoutStatus.Rule). A toolchain writes its own
// layout, but for modules: a producer.ModuleLinker builds the programs the
// modules layout picks one ELF per module, when the consumers read it.
func (p *Plan) setLayouts(conses []consumer.Consumer) {
	b, builtin := p.Producer.(producer.Builtin)
	ml, linker := p.Producer.(producer.ModuleLinker)
	var set []string
	p.Mix.Layouts = nil
	for _, sh := range producer.LayoutShapes(p.Version) {
		st := LayoutStatus{Name: sh.Name, Why: sh.Why}
		switch {
		case !builtin && !(linker && sh.Name == producer.LayoutModules):
			st.Why = "the toolchain decides its section's layout"
			if p.Toolchain {
				st.Measured = &LayoutCount{}
			}
		case st.Why != "" && sh.Violates == nil:
		case len(conses) == 0:
			st.Why = "no consumer to judge it"
		default:
			for _, c := range conses {
				if !slices.Contains(consumer.Reads(c), sh.Name) {
					st.Why = fmt.Sprintf("consumer %s does not declare it reads it", c.Name())
					break
				}
			}
			st.Produced = st.Why == "" || st.Why == sh.Why
			if st.Produced && sh.Violates != nil {
				st.Rule = validate.Rule(sh.Violates)
			}
		}
		if st.Produced {
			set = append(set, sh.Name)
			if linker && sh.Name == producer.LayoutModules {
				st.Note = "calls between modules through ld's PLT"
				if why, direct := limitsOf(p.Producer, p.Target)["plt-stubs"]; direct {
					st.Note = "calls between modules direct: " + strings.TrimPrefix(why, "the calls reach gen's stubs, not a PLT the linker makes: ")
				}
			}
		}
		p.Mix.Layouts = append(p.Mix.Layouts, st)
	}
	switch {
	case builtin:
		b.Layouts, _ = producer.LayoutSet(set...)
		p.Producer = b
	case linker:
		p.Producer = ml.WithModules(slices.Contains(set, producer.LayoutModules))
	}
}

// LayoutNote is one line saying what the cell does with each section
// layout shape.
func (m Mix) LayoutNote() string {
	parts := make([]string, len(m.Layouts))
	for i, l := range m.Layouts {
		parts[i] = l.String()
	}
	return "section layouts: " + strings.Join(parts, "; ")
}

// measuredNote is LayoutNote's list for the shapes measured alone.
func (m Mix) measuredNote() string {
	var parts []string
	for _, l := range m.Layouts {
		if l.Measured != nil {
			parts = append(parts, l.String())
		}
	}
	return strings.Join(parts, "; ")
}

// NewMix decides the patterns prod, which writes SFrame version v on t,
// gets. asked (nil: the default mix) is kept to the patterns t has and the
// mix does not leave out; when none is left, the error is an
// *UnsupportedError saying so.
//
// sfconform's own encoder gets the patterns its version expresses (at
// least version 2's). A toolchain gets them all, since what it does with
// CFI its version cannot express is part of its result; but below version
// 3 not the patterns that place code more than 4 GiB from .sframe, which
// no linker can write a table for.
func NewMix(prod producer.Producer, t target.Target, v int, asked []string) (Mix, error) {
	m := Mix{Version: max(v, 2), SFrame: v}
	m.LeftOut = unexpressed(t, max(v, 2))
	m.Why = fmt.Sprintf("SFrame v%d cannot express them", v)
	toolchain := producer.IsToolchain(prod)
	if toolchain && v < 3 {
		all := m.LeftOut
		m.Version = 0
		m.LeftOut = farLeftOut(t, v)
		m.Beyond = slices.DeleteFunc(all, func(n string) bool { return slices.Contains(m.LeftOut, n) })
		m.Why = fmt.Sprintf("SFrame v%d cannot reach code more than 4 GiB from .sframe: no linker writes the table", v)
	}
	if asked != nil {
		have := gen.Patterns(t)
		for _, p := range asked {
			if slices.Contains(have, p) && !slices.Contains(m.LeftOut, p) {
				m.Patterns = append(m.Patterns, p)
			}
		}
		if len(m.Patterns) == 0 {
			return m, &UnsupportedError{Producer: prod.Name(), Target: t,
				Reason: fmt.Sprintf("none of the patterns %s exists on %s in an SFrame version the producer writes", strings.Join(asked, ","), t.Name())}
		}
	} else if toolchain && v < 3 {
		m.Patterns = m.inMix(t)
	}
	if l, ok := prod.(producer.Limited); ok {
		mix := m.Patterns
		if mix == nil {
			mix = m.inMix(t)
		}
		for p, why := range l.Limits(t) {
			if slices.Contains(mix, p) {
				if m.Limited == nil {
					m.Limited = map[string]string{}
				}
				m.Limited[p] = why
			}
		}
	}
	return m, nil
}

// Options are the generator's options for the mix, each program run with
// paths argument vectors.
func (m Mix) Options(paths int) gen.Options {
	return gen.Options{Paths: paths, Patterns: m.Patterns, SFrameVersion: m.Version}
}

// inMix is the target's patterns the mix does not leave out.
func (m Mix) inMix(t target.Target) []string {
	return slices.DeleteFunc(gen.Patterns(t), func(n string) bool { return slices.Contains(m.LeftOut, n) })
}

// genOptions completes opt for prod on t, unless opt.SFrameVersion says:
// the version the generator expresses and, for a toolchain below version
// 3, the patterns of the mix (NewMix). A pattern named in opt that the mix
// leaves out is a *gen.CannotExpressError, a property of the format to
// report as such, not a failure.
func genOptions(prod producer.Producer, t target.Target, opt gen.Options) (gen.Options, error) {
	if opt.SFrameVersion != 0 {
		return opt, nil
	}
	v, err := prod.SFrameVersion(t)
	if err != nil {
		return opt, fmt.Errorf("producer %s on %s: %w", prod.Name(), t.Name(), err)
	}
	m, _ := NewMix(prod, t, v, nil)
	if m.Version != 0 {
		// The generator says which named pattern the version cannot express.
		opt.SFrameVersion = m.Version
		return opt, nil
	}
	if opt.Patterns == nil {
		opt.Patterns = m.Patterns
		return opt, nil
	}
	for _, name := range opt.Patterns {
		if err := m.Cannot(t, name); err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// Cannot is a *gen.CannotExpressError when the mix leaves pattern out,
// else nil.
func (m Mix) Cannot(t target.Target, pattern string) error {
	if !slices.Contains(m.LeftOut, pattern) {
		return nil
	}
	for _, p := range gen.Catalog() {
		if p.Name == pattern {
			return &gen.CannotExpressError{Target: t, Pattern: pattern, Version: max(m.SFrame, m.Version), Reason: p.Cannot}
		}
	}
	return nil
}

// unexpressed lists the patterns of t that SFrame version v cannot express.
func unexpressed(t target.Target, v int) []string {
	var out []string
	for _, p := range gen.Catalog() {
		if slices.Contains(p.Targets, t) && !slices.Contains(p.Versions, v) {
			out = append(out, p.Name)
		}
	}
	return out
}

// farLeftOut is the patterns of t that place code too far from .sframe
// for version v's 32-bit offsets (the link fails).
func farLeftOut(t target.Target, v int) []string {
	var out []string
	for _, p := range gen.Catalog() {
		if p.Far && slices.Contains(p.Targets, t) && !slices.Contains(p.Versions, v) {
			out = append(out, p.Name)
		}
	}
	return out
}

// limitsOf is what a producer says it cannot do for t (producer.Limited).
func limitsOf(prod producer.Producer, t target.Target) map[string]string {
	if l, ok := prod.(producer.Limited); ok {
		return l.Limits(t)
	}
	return nil
}

// MeasuredLayouts is layouts with the shapes a toolchain decides counted
// over the sections of of programs: with[name] of them had each.
func MeasuredLayouts(layouts []LayoutStatus, with map[string]int, of int) []LayoutStatus {
	out := slices.Clone(layouts)
	for i := range out {
		if out[i].Measured == nil {
			continue
		}
		out[i].Measured = &LayoutCount{With: with[out[i].Name], Of: of}
		out[i].Produced = out[i].Measured.With > 0
	}
	return out
}
