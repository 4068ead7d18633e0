package gen

import (
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/target"
)

// PatternInfo describes one catalog entry for listings.
type PatternInfo struct {
	Name string
	Doc  string
	// Targets are the targets whose catalog has the pattern.
	Targets []target.Target
	// Versions are the SFrame versions that can express it; Cannot says
	// why the others cannot.
	Versions []int
	Cannot   string
	// Skeleton is set for patterns written once over every target's
	// primitives; the others are one target's own idiom.
	Skeleton bool
	// Far: the pattern places code more than 4 GiB from the rest and from
	// .sframe. Below version 3 that is no table a linker can even write
	// (its 32-bit relocation overflows), not a table that says too little.
	Far bool
	// Signal: the pattern's functions are signal handlers, entered by a
	// signal and returning through the program's signal trampoline.
	Signal bool
	// EmptyFDE: a program with the pattern describes its entry stub
	// (empty-fde) or its signal trampoline (signal-empty-fde) by an FDE
	// without rows; Func.EmptyFDEPattern names the pattern on that
	// function.
	EmptyFDE bool
	// SwitchesStack: the pattern's functions may switch SP to a fresh
	// stack (Program.Stacks) and be the outermost frame from there on.
	SwitchesStack bool
}

// Patterns lists the pattern names of a target, in catalog order.
func Patterns(t target.Target) []string {
	i := isaFor(t)
	if i == nil {
		return nil
	}
	names := make([]string, len(i.patterns))
	for k, p := range i.patterns {
		names[k] = p.name
	}
	return names
}

// Catalog lists every pattern of every target: the skeletons first, then
// each target's own, in catalog order.
func Catalog() []PatternInfo {
	var out []PatternInfo
	index := map[*pattern]int{}
	for _, t := range isas {
		for _, p := range t.patterns {
			k, ok := index[p]
			if !ok {
				vs := p.versions
				if vs == nil {
					vs = []int{2, 3}
				}
				out = append(out, PatternInfo{Name: p.name, Doc: p.doc, Versions: slices.Clone(vs), Cannot: p.cannot,
					Skeleton: slices.Contains(skeletons, p), Far: p.far, Signal: p.signal,
					EmptyFDE: p.emptyEntryFDE || p.emptyTrampolineFDE, SwitchesStack: p.switchesStack})
				k = len(out) - 1
				index[p] = k
			}
			out[k].Targets = append(out[k].Targets, t.abi)
		}
	}
	return out
}

// CannotExpressError says that an SFrame version cannot express a pattern:
// a property of the format, not a failure of a producer.
type CannotExpressError struct {
	Target  target.Target
	Pattern string
	Version int
	Reason  string
}

func (e *CannotExpressError) Error() string {
	return fmt.Sprintf("SFrame v%d cannot express pattern %s on %s: %s", e.Version, e.Pattern, e.Target.Name(), e.Reason)
}
