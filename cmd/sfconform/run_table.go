package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/verdict"
)

// printSummary writes the table: one row per cell, with the steps per
// verdict, the differential of a toolchain producer ("differs": steps
// whose row is not sfconform's own encoding's; "equiv": of those, the
// ones judged OK), and the exact package versions the row ran.
func printSummary(w io.Writer, cells []*cell) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tproducer\tconsumer\tprograms\tinstructions\tOK\tWRONG\tNOINFO\tERROR\tINVALID\tprobes\tdiffers\tequiv\tfailed programs\tinstr/s\tversion\t")
	var notes []string
	for _, c := range cells {
		switch c.Status {
		case "unsupported", "error":
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t\n", c.Target, c.Producer, c.Consumer)
			notes = append(notes, fmt.Sprintf("%s %s x %s: %s (%s)", c.Target, c.Producer, c.Consumer, c.Status, c.Reason))
			continue
		}
		rate := 0.0
		if c.Seconds > 0 {
			rate = float64(c.Instructions) / c.Seconds
		}
		diff, equiv, version := "-", "-", "-"
		if c.Differs != nil {
			diff, equiv = strconv.Itoa(c.Differs.Steps), strconv.Itoa(c.Differs.Equivalent)
		}
		if c.Packages != "" {
			version = c.Packages
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%.0f\t%s\t\n", c.Target, c.Producer, c.Consumer, c.Programs, c.Instructions,
			c.Counts[verdict.OK], c.Counts[verdict.Wrong], c.Counts[verdict.NoInfo], c.Counts[verdict.Error], invalidColumn(c),
			probeColumn(c.Probes), diff, equiv, c.Failed, rate, version)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, c := range cells {
		if c.Status != "failed" {
			continue
		}
		var parts []string
		if len(c.WrongFields) > 0 {
			fields := make([]string, 0, len(c.WrongFields))
			for f := range c.WrongFields {
				fields = append(fields, f)
			}
			slices.Sort(fields)
			var by []string
			for _, f := range fields {
				by = append(by, fmt.Sprintf("%s %d", f, c.WrongFields[f]))
			}
			parts = append(parts, "WRONG at "+strings.Join(by, ", "))
		}
		if n := probesFailed(c.Probes); n > 0 {
			parts = append(parts, fmt.Sprintf("%d probes at PCs in no function not NOINFO (%s)", n, verdictCounts(c.Probes)))
		}
		if len(c.AtOutermost) > 0 {
			failing, at := 0, 0
			for v := verdict.Wrong; v < verdict.Invalid; v++ {
				failing += c.Counts[v]
				at += c.AtOutermost[v.String()]
			}
			parts = append(parts, fmt.Sprintf("%d of %d failing steps right up to the outermost frame and wrong there", at, failing))
		}
		if c.Warned > 0 {
			parts = append(parts, fmt.Sprintf("%d programs with producer warnings", c.Warned))
		}
		if c.ToolFailed > 0 {
			parts = append(parts, fmt.Sprintf("%d programs the producer made no image of", c.ToolFailed))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "%s %s x %s: %s\n", c.Target, c.Producer, c.Consumer, strings.Join(parts, "; "))
		}
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if c.ProducerVersion != "" && !seen[c.Producer] {
			seen[c.Producer] = true
			fmt.Fprintf(w, "%s: %s\n", c.Producer, c.ProducerVersion)
		}
	}
	for _, c := range cells {
		if c.Status == "unsupported" || c.Status == "error" {
			continue
		}
		if len(c.Unexpressed) > 0 {
			fmt.Fprintf(w, "%s %s x %s: patterns %s unsupported (%s), not in the mix\n",
				c.Target, c.Producer, c.Consumer, strings.Join(c.Unexpressed, ", "), c.UnexpressedWhy)
		}
		for _, p := range slices.Sorted(maps.Keys(c.Limited)) {
			fmt.Fprintf(w, "%s %s x %s: pattern %s: %s\n", c.Target, c.Producer, c.Consumer, p, c.Limited[p])
		}
		if len(c.Beyond) > 0 {
			fmt.Fprintf(w, "%s %s x %s: patterns %s are beyond SFrame v%d, in the mix to see what the toolchain does with them\n",
				c.Target, c.Producer, c.Consumer, strings.Join(c.Beyond, ", "), c.SFrameVersion)
		}
	}
}

func describe(res *harness.Result) string {
	switch {
	case len(res.Failures) > 0:
		f := res.Failures[0]
		return fmt.Sprintf("step %d at %s (%s): %s %s", f.Step, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail)
	case res.Invalid():
		for _, v := range res.Violations {
			if !v.Warning {
				return "section " + v.String()
			}
		}
	case res.LoadErr != nil:
		return "consumer refused the section: " + res.LoadErr.Error()
	case res.RunErr != nil:
		return "run stopped: " + res.RunErr.Error()
	}
	return "clean"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// probeColumn is the table's probes: how many lookups at PCs in no
// function were judged, and how many of them failed.
func probeColumn(p map[string]int) string {
	n := 0
	for _, k := range p {
		n += k
	}
	if f := probesFailed(p); f > 0 {
		return fmt.Sprintf("%d (%d failed)", n, f)
	}
	return strconv.Itoa(n)
}

// probesFailed counts the probes not judged OK.
func probesFailed(p map[string]int) int {
	n := 0
	for v, k := range p {
		if v != verdict.OK.String() {
			n += k
		}
	}
	return n
}

// verdictCounts lists counts by verdict name: "WRONG 3, ERROR 1".
func verdictCounts(p map[string]int) string {
	var out []string
	for v := verdict.Wrong; v < verdict.Invalid; v++ {
		if n := p[v.String()]; n > 0 {
			out = append(out, fmt.Sprintf("%s %d", v, n))
		}
	}
	return strings.Join(out, ", ")
}

// invalidColumn is the table's INVALID: the programs whose section breaks
// a rule, and apart, those that break only what the cell produced on
// purpose ("0 (+12 expected)").
func invalidColumn(c *cell) string {
	s := strconv.Itoa(c.Counts[verdict.Invalid])
	if c.ExpectedInvalid > 0 {
		s += fmt.Sprintf(" (+%d expected)", c.ExpectedInvalid)
	}
	return s
}
