package main

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/report/html"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/verdict"
)

// maxHTMLFailures is how many failures the HTML report of a run works
// through (each is replayed to show it), taken from every failing cell in
// turn; the rest are listed.
const maxHTMLFailures = 40

func htmlVerdicts() []string {
	var vs []string
	for v := verdict.OK; int(v) < verdict.Count; v++ {
		vs = append(vs, v.String())
	}
	return vs
}

// writeHTML writes the HTML report of a run's (or a merge's) summary into
// dir: the matrix, then each saved failure replayed from its reproducer.
// writeHTML writes the report of a run: the matrix, then one section per
// failure signature of each cell (groupFailures), its first reproducer
// replayed. consent is what the command line allows a replay to run.
func writeHTML(dir string, s *summary, consent repro.Consent) (string, error) {
	r := &html.Report{Title: "sfconform run", Verdicts: htmlVerdicts()}
	line := fmt.Sprintf("seed %d, %d programs x %d paths per cell", s.Seed, s.Programs, s.Paths)
	if s.Shard != nil {
		line += fmt.Sprintf(", shard %s", s.Shard)
	}
	if len(s.PatternsAsked) > 0 {
		line += ", patterns " + strings.Join(s.PatternsAsked, ",")
	}
	r.Lines = append(r.Lines, line)
	known := knownDeviations()
	groups := map[*cell][]*failureGroup{}
	for _, c := range s.Cells {
		groups[c] = groupFailures(c, known)
	}
	shown := detailed(s.Cells, groups, maxHTMLFailures)
	for _, c := range s.Cells {
		hc := html.Cell{Target: c.Target, Producer: c.Producer, Consumer: c.Consumer, Status: c.Status, Reason: c.Reason,
			Programs: c.Programs, Instructions: c.Instructions, Failed: c.Failed, Version: c.Packages}
		if c.Status != "unsupported" && c.Status != "error" {
			for _, v := range r.Verdicts {
				hc.Counts = append(hc.Counts, c.Verdicts[v])
			}
		}
		for _, g := range groups[c] {
			label := fmt.Sprintf("#%d", len(hc.Links)+1)
			if len(g.Paths) > 1 {
				label += fmt.Sprintf(" (%d)", len(g.Paths))
			}
			path := g.Paths[0]
			if !shown[path] {
				why := "a program the producer made no image of: the file holds the tools' output and the assembly"
				if strings.HasSuffix(path, ".json") {
					why = fmt.Sprintf("%s; beyond the %d signatures the report works through: sfconform repro --html DIR %s", groupSummary(g), maxHTMLFailures, path)
				}
				r.Unshown = append(r.Unshown, html.Link{Text: path, Why: why})
				hc.Links = append(hc.Links, html.Link{Text: label, Href: "#unshown"})
				continue
			}
			f, why := htmlFailure(path, len(r.Failures), consent)
			if why != "" {
				r.Unshown = append(r.Unshown, html.Link{Text: path, Why: groupSummary(g) + "; " + why})
				hc.Links = append(hc.Links, html.Link{Text: label, Href: "#unshown"})
				continue
			}
			f.Facts = append(f.Facts, [2]string{"signature", g.Signature}, [2]string{"programs with it", fmt.Sprint(len(g.Paths))})
			if g.Finding != "" {
				f.Facts = append(f.Facts, [2]string{"known", g.Finding})
			}
			if len(g.Paths) > 1 {
				f.Facts = append(f.Facts, [2]string{"the others", strings.Join(g.Paths[1:], " ")})
			}
			r.Failures = append(r.Failures, f)
			hc.Links = append(hc.Links, html.Link{Text: label, Href: "#" + f.ID})
		}
		r.Matrix = append(r.Matrix, hc)
		switch {
		case c.Status == "unsupported" || c.Status == "error":
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %s (%s)", cellKey(c), c.Status, c.Reason))
		case len(c.Unexpressed) > 0:
			r.Notes = append(r.Notes, fmt.Sprintf("%s: patterns %s not in the mix (%s)", cellKey(c), strings.Join(c.Unexpressed, ", "), c.UnexpressedWhy))
		}
	}
	return html.WriteFile(dir, "index.html", r)
}

// detailed picks the groups whose first reproducer the report works
// through: at most n, taken from the failing cells in turn (each cell's
// first signature, then each one's second, ...), so that every failing
// cell shows some.
func detailed(cells []*cell, groups map[*cell][]*failureGroup, n int) map[string]bool {
	out := map[string]bool{}
	for k := 0; len(out) < n; k++ {
		more := false
		for _, c := range cells {
			var cases []string
			for _, g := range groups[c] {
				if strings.HasSuffix(g.Paths[0], ".json") {
					cases = append(cases, g.Paths[0])
				}
			}
			if k < len(cases) && len(out) < n {
				out[cases[k]] = true
				more = true
			}
		}
		if !more {
			break
		}
	}
	return out
}

// groupSummary says how many programs share a group's signature.
func groupSummary(g *failureGroup) string {
	s := fmt.Sprintf("%d program(s) with %s", len(g.Paths), g.Signature)
	if g.Finding != "" {
		s += ", known: " + g.Finding
	}
	return s
}

// htmlFailure replays a reproducer for the report; why says why it shows
// no detail.
func htmlFailure(path string, index int, consent repro.Consent) (html.Failure, string) {
	c, err := corpus.Load(path)
	if err != nil {
		return html.Failure{}, err.Error()
	}
	rp, err := repro.Run(c, repro.Options{Consent: consent})
	if err != nil {
		return html.Failure{}, "replay: " + err.Error()
	}
	f, ok := rp.HTMLFailure(path, index)
	if !ok {
		return html.Failure{}, fmt.Sprintf("recorded %s at step %d; it no longer fails there on replay", c.Verdict, c.Step)
	}
	return f, ""
}

// reproHTML is 'sfconform repro --html DIR FILE': the report of one
// replayed case.
func reproHTML(dir, path string, opt repro.Options) (string, bool, error) {
	c, err := corpus.Load(path)
	if err != nil {
		return "", false, err
	}
	rp, err := repro.Run(c, opt)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	r := &html.Report{Title: "sfconform repro " + path, Verdicts: htmlVerdicts()}
	r.Lines = append(r.Lines, fmt.Sprintf("%s, SFrame v%d, producer %s, consumer %s, seed %d", c.Target, rp.Img.SFrameVersion, rp.Producer, rp.Consumer, c.Seed))
	hc := html.Cell{Target: c.Target, Producer: rp.Producer, Consumer: rp.Consumer, Status: "clean", Programs: 1, Instructions: rp.Res.Steps}
	var counts [verdict.Count]int
	counts = rp.Res.Counts
	if rp.Res.Invalid() {
		counts[verdict.Invalid] = 1
	}
	hc.Counts = counts[:]
	if f, ok := rp.HTMLFailure(path, 0); ok {
		r.Failures = append(r.Failures, f)
		hc.Status, hc.Failed = "failed", 1
		hc.Links = []html.Link{{Text: "#1", Href: "#" + f.ID}}
	} else if !rp.Res.Clean() {
		hc.Status, hc.Failed = "failed", 1
		r.Notes = append(r.Notes, fmt.Sprintf("recorded: %s at step %d; now: %s", c.Verdict, c.Step, describe(rp.Res)))
	} else {
		r.Notes = append(r.Notes, fmt.Sprintf("recorded: %s at step %d; now all %d steps conform: the failure no longer reproduces", c.Verdict, c.Step, rp.Res.Steps))
	}
	r.Matrix = []html.Cell{hc}
	out, err := html.WriteFile(dir, "index.html", r)
	return out, rp.StillFails(), err
}
