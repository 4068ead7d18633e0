package main

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/target"
)

// failureGroup is the failures of one cell that share a signature: the
// verdict, the field that first differed, the pattern of the function at
// fault and the row in force there. Thirty reproducers of one root cause
// are one group, shown once with its count.
type failureGroup struct {
	Signature string
	Paths     []string // the reproducers, the first one shown
	Verdict   string
	Detail    string // the first one's message (what an ERROR said)
	Finding   string // the finding an expected deviation names, if one covers it
}

// groupFailures groups a cell's saved reproducers by signature, in the
// order their first member was saved. Files that are not reproducers (a
// producer's failure, kept as text) are a group each.
func groupFailures(c *cell, known *deviation.List) []*failureGroup {
	patternOf := map[string]string{}
	for p, r := range c.ByPattern {
		for _, path := range r.Reproducers {
			patternOf[path] = p
		}
	}
	t, _ := target.Parse(c.Target)
	var out []*failureGroup
	bySig := map[string]*failureGroup{}
	for _, path := range c.Saved {
		sig, g := path, &failureGroup{Paths: []string{path}}
		if strings.HasSuffix(path, ".json") {
			if k, err := corpus.Load(path); err == nil {
				field := ""
				if k.Field != "" {
					field = ":" + k.Field
				}
				pattern := patternOf[path]
				// The row, without the module that holds it: one root
				// cause in programs of one and of several modules.
				row := k.Row
				if rest, ok := strings.CutPrefix(row, "module "); ok {
					if _, r, ok := strings.Cut(rest, ": "); ok {
						row = r
					}
				}
				sig = fmt.Sprintf("%s%s in pattern %s, frame %d, row %s", k.Verdict, field, orDash(pattern), k.Frame, orDash(row))
				g.Verdict, g.Detail = k.Verdict.String(), k.Detail
				if e := known.Match(deviation.Key{Producer: c.Producer, Consumer: c.Consumer, Target: t, Pattern: pattern, Verdict: k.Verdict, Field: k.Field}); e != nil {
					g.Finding = e.Finding
				}
			}
		} else {
			sig = "the producer made no image: " + path
		}
		if h := bySig[sig]; h != nil {
			h.Paths = append(h.Paths, path)
			continue
		}
		g.Signature = sig
		bySig[sig] = g
		out = append(out, g)
	}
	return out
}

// groupLines are a group's lines in a text report: its signature and
// count, what is known of it, and its reproducers (at most max listed).
func groupLines(g *failureGroup, max int) []string {
	lines := []string{fmt.Sprintf("%d program(s): %s", len(g.Paths), g.Signature)}
	if g.Finding != "" {
		lines = append(lines, "  known: "+g.Finding)
	}
	if g.Verdict == "ERROR" && g.Detail != "" {
		lines = append(lines, "  message: "+firstLine(g.Detail))
	}
	for i, p := range g.Paths {
		if i == max {
			lines = append(lines, fmt.Sprintf("  ... and %d more", len(g.Paths)-max))
			break
		}
		lines = append(lines, "  "+p)
	}
	return lines
}

// knownDeviations is the built-in list of expected deviations, or none
// when it cannot be read (the reports then name no finding).
func knownDeviations() *deviation.List {
	l, err := deviation.Expected()
	if err != nil {
		return nil
	}
	return l
}
