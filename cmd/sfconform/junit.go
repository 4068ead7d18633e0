package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
)

// The JUnit XML schema as CI systems read it (the Jenkins / Ant form:
// testsuites > testsuite > testcase with failure, error or skipped).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       float64         `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitReport makes the JUnit report of a summary: a testsuite per
// target x producer x consumer, a testcase per pattern of the cell's
// target. A pattern fails when a program's failure lies in one of its
// functions (the testcase lists the reproducers); a pattern the cell's
// SFrame version cannot express, and every pattern of an unsupported
// cell, is skipped with the reason; a cell's setup error is an error of
// each of its testcases. Failures no pattern's function holds (a section
// that breaks a rule, a program the tools made no image of) are the
// testcase "(whole program)".
func junitReport(s *summary) junitSuites {
	out := junitSuites{Name: "sfconform run"}
	known := knownDeviations()
	for _, c := range s.Cells {
		groups := groupFailures(c, known)
		js := junitSuite{Name: cellKey(c), Time: c.Seconds}
		js.Properties = []junitProperty{{"seed", fmt.Sprint(s.Seed)}, {"programs", fmt.Sprint(c.Programs)}, {"instructions", fmt.Sprint(c.Instructions)}}
		if s.Shard != nil {
			js.Properties = append(js.Properties, junitProperty{"shard", s.Shard.String()})
		}
		if c.ProducerVersion != "" {
			js.Properties = append(js.Properties, junitProperty{"producer_version", c.ProducerVersion})
		}
		class := strings.NewReplacer(" x ", ".", " ", ".").Replace(cellKey(c))
		patterns := slices.Sorted(maps.Keys(c.ByPattern))
		if t, err := target.Parse(c.Target); err == nil {
			for _, p := range gen.Patterns(t) {
				if !slices.Contains(patterns, p) && (c.Status == "unsupported" || c.Status == "error" || slices.Contains(c.Unexpressed, p)) {
					patterns = append(patterns, p)
				}
			}
		}
		slices.Sort(patterns)
		for _, p := range patterns {
			jc := junitCase{Name: p, Classname: class}
			r := c.ByPattern[p]
			switch {
			case c.Status == "error":
				jc.Error = &junitMessage{Message: "setup error: " + c.Reason, Type: "setup"}
				js.Errors++
			case c.Status == "unsupported":
				jc.Skipped = &junitMessage{Message: "unsupported: " + c.Reason}
				js.Skipped++
			case r == nil && slices.Contains(c.Unexpressed, p):
				jc.Skipped = &junitMessage{Message: fmt.Sprintf("not in the mix: %s", c.UnexpressedWhy)}
				js.Skipped++
			case r != nil && r.Failed > 0:
				var lines []string
				n := 0
				for _, g := range groups {
					if slices.ContainsFunc(g.Paths, func(path string) bool { return slices.Contains(r.Reproducers, path) }) {
						lines = append(lines, groupLines(g, 5)...)
						n++
					}
				}
				jc.Failure = &junitMessage{
					Message: fmt.Sprintf("%d of %d programs fail in a function of pattern %s, %d signature(s)", r.Failed, r.Programs, p, n),
					Type:    "conformance",
					Text:    "failures by signature (replay: sfconform repro FILE):\n" + strings.Join(lines, "\n") + "\n",
				}
				js.Failures++
			case r != nil:
				jc.SystemOut = fmt.Sprintf("%d programs with a function of pattern %s, none failing there\n", r.Programs, p)
			}
			js.Cases = append(js.Cases, jc)
		}
		js.Tests = len(js.Cases)
		out.Tests += js.Tests
		out.Failures += js.Failures
		out.Errors += js.Errors
		out.Skipped += js.Skipped
		out.Time += js.Time
		out.Suites = append(out.Suites, js)
	}
	return out
}

func writeJUnit(path string, s *summary) error {
	b, err := xml.MarshalIndent(junitReport(s), "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(path, append([]byte(xml.Header), append(b, '\n')...))
}

// writeReports writes the reports a run or a merge asks for.
func writeReports(s *summary, junit, html string, consent repro.Consent, stderr io.Writer) error {
	if junit != "" {
		if err := writeJUnit(junit, s); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
		fmt.Fprintln(stderr, "wrote", junit)
	}
	if html != "" {
		path, err := writeHTML(html, s, consent)
		if err != nil {
			return fmt.Errorf("--html: %w", err)
		}
		fmt.Fprintln(stderr, "wrote", path)
	}
	return nil
}
