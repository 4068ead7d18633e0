package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// listPlugins prints every registered producer and consumer as it
// describes itself: per target, the SFrame version a producer emits (or
// why it emits none) and the versions a consumer reads; the setup step
// that provides it; its exact version. Below each table, the reasons and
// the plug-ins that could not be made.
func listPlugins(w io.Writer) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := func(kind string) {
		fmt.Fprint(tw, kind)
		for _, t := range target.All {
			fmt.Fprintf(tw, "\t%s", t.Name())
		}
		fmt.Fprintln(tw, "\tSETUP\tVERSION")
	}
	header("PRODUCER")
	var notes []string
	for _, a := range producer.Describe() {
		n := a.Name
		p, err := producer.New(n)
		if err != nil {
			fmt.Fprint(tw, n)
			for range target.All {
				fmt.Fprint(tw, "\t(needs an argument)")
			}
			fmt.Fprintf(tw, "\t%s\t%s\n", setupText(a.Setup), a.Summary)
			notes = append(notes, fmt.Sprintf("%s: %v", n, err))
			continue
		}
		fmt.Fprint(tw, n)
		for _, t := range target.All {
			if v, err := p.SFrameVersion(t); err != nil {
				fmt.Fprint(tw, "\tunsupported")
				notes = append(notes, fmt.Sprintf("%s on %s: unsupported (%v)", n, t.Name(), err))
			} else {
				fmt.Fprintf(tw, "\tv%d", v)
			}
		}
		fmt.Fprintf(tw, "\t%s\t%s\n", setupText(a.Setup), producer.Version(p))
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(tw)
	header("CONSUMER")
	notes = nil // why a consumer does not read some target and version
	for _, a := range consumer.Describe() {
		if a.NeedsArg {
			fmt.Fprint(tw, a.Kind)
			for range target.All {
				fmt.Fprint(tw, "\t(needs an argument)")
			}
			fmt.Fprintf(tw, "\t%s\t%s\n", setupText(a.Setup), a.Summary)
			continue
		}
		for _, n := range append([]string{a.Kind}, a.Variants...) {
			notes = append(notes, listConsumer(tw, n, a)...)
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return exitOK
}

// listConsumer prints the row of the consumer called name and returns
// the notes to print below the table.
func listConsumer(tw io.Writer, name string, a consumer.About) []string {
	c, err := consumer.New(name)
	if err != nil {
		// Below the table: a line of its own would split the columns.
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	defer c.Close()
	fmt.Fprint(tw, name)
	var reasons, notes []string
	unread := map[string][]string{}
	for _, t := range target.All {
		var vs []string
		for v := 1; v <= 3; v++ {
			if err := c.Supports(t, v); err == nil {
				vs = append(vs, "v"+strconv.Itoa(v))
			} else {
				if _, seen := unread[err.Error()]; !seen {
					reasons = append(reasons, err.Error())
				}
				unread[err.Error()] = append(unread[err.Error()], fmt.Sprintf("%s v%d", t.Name(), v))
			}
		}
		if len(vs) == 0 {
			vs = []string{"-"}
		}
		fmt.Fprintf(tw, "\t%s", strings.Join(vs, ","))
	}
	fmt.Fprintf(tw, "\t%s\t%s\n", setupText(a.Setup), consumer.Version(c))
	for _, r := range reasons {
		notes = append(notes, fmt.Sprintf("%s does not read %s: %s", name, strings.Join(unread[r], ", "), r))
	}
	for _, pattern := range slices.Sorted(maps.Keys(a.Limits)) {
		notes = append(notes, fmt.Sprintf("%s is not judged on pattern %s: %s", name, pattern, a.Limits[pattern]))
	}
	return notes
}

// setupText is the SETUP column: the ci/setup.sh step, or "built in".
func setupText(step int) string {
	if step == toolchain.NoSetup {
		return "built in"
	}
	return "step " + strconv.Itoa(step)
}
