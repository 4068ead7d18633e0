package repro

import (
	"fmt"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
)

// Regenerate makes a case's program again from its coordinates, laid
// out where campaign.Produce lays programs out. A case without them (a
// version 1 case) is regenerated from its seed with the options its
// producer gets by default.
func Regenerate(c *corpus.Case) (*gen.Program, error) {
	t, err := c.TargetOf()
	if err != nil {
		return nil, err
	}
	g := c.Generator
	if g == nil {
		return nil, fmt.Errorf("%s: the case has no generator coordinates (format %s): regenerate it with 'sfconform run --seed %d'", c.Target, c.Format, c.Seed)
	}
	opt := gen.Options{Funcs: g.Funcs, MaxDepth: g.MaxDepth, Patterns: g.Patterns, SFrameVersion: g.SFrameVersion, Paths: g.Paths, Idle: g.Idle}
	var rs []gen.Reduction
	for _, r := range g.Reductions {
		rs = append(rs, gen.Reduction{Op: r.Op, Func: r.Func, Callee: r.Callee, N: r.N})
	}
	p, err := gen.Regenerate(t, g.Seed, opt, rs)
	if err != nil {
		return nil, err
	}
	if err := p.Layout(harness.CodeBase); err != nil {
		return nil, err
	}
	return p, nil
}
