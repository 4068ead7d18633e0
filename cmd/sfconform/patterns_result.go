package main

import (
	"slices"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/repro"
)

// wholeProgram is the pattern a failure is put down to when no function
// of a pattern holds it: a section that breaks a rule, a consumer that
// refuses the section, a run that stops, a program the producer's tools
// made no image of.
const wholeProgram = "(whole program)"

// patternResult is what a cell found for one pattern.
type patternResult struct {
	Programs    int      `json:"programs"`        // programs with a function of the pattern
	Failed      int      `json:"failed_programs"` // of those, programs whose failure lies in such a function
	Reproducers []string `json:"reproducers,omitempty"`
}

// countPatterns adds a checked program to the cell's per-pattern results:
// every pattern it has a function of, and, when it failed, the failure to
// the pattern of the function at fault (failingPattern) with the
// reproducer saved at path.
func (c *cell) countPatterns(prog *gen.Program, res *harness.Result, failed bool, path string) {
	if c.ByPattern == nil {
		c.ByPattern = map[string]*patternResult{}
	}
	get := func(p string) *patternResult {
		r := c.ByPattern[p]
		if r == nil {
			r = &patternResult{}
			c.ByPattern[p] = r
		}
		return r
	}
	if prog != nil {
		var seen []string
		for _, f := range prog.Funcs {
			if f.Pattern != "" && !slices.Contains(seen, f.Pattern) {
				seen = append(seen, f.Pattern)
				get(f.Pattern).Programs++
			}
		}
	}
	if !failed {
		return
	}
	p := failingPattern(prog, res)
	r := get(p)
	if p == wholeProgram {
		r.Programs++ // it counts the programs put down to it
	}
	r.Failed++
	if path != "" {
		r.Reproducers = append(r.Reproducers, path)
	}
}

// failingPattern is the pattern of the function whose row gave the first
// wrong value of a result's first failing step: for a frame's CFA, that
// frame's own function; for any other field (the PC, which is the return
// address its callee's row found; SP; FP), its callee's, frame k-1. A
// failure no function holds is the whole program's.
func failingPattern(prog *gen.Program, res *harness.Result) string {
	if prog == nil || res == nil || len(res.Failures) == 0 || len(res.Failures[0].Expected) == 0 {
		return wholeProgram
	}
	f := res.Failures[0]
	k := min(f.Judgement.Frame, len(f.Expected)-1)
	if k > 0 && f.Judgement.Field != "cfa" {
		k--
	}
	pc := repro.LookupPC(f.Expected, k)
	for _, fn := range prog.Funcs {
		if pc >= fn.Addr && pc < fn.Addr+uint64(fn.Size) && fn.Pattern != "" {
			return fn.Pattern
		}
	}
	return wholeProgram
}
