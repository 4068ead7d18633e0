package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sfconform/sfconform/gen"
)

func init() {
	register("patterns", "list the generator's patterns with the targets and SFrame versions each covers", cmdPatterns)
}

const patternsUsage = `usage: sfconform patterns [--json]

Lists every pattern of the generator's catalog: the targets whose catalog
has it, the SFrame versions that can express its rows (and why the others
cannot), and whether it is a skeleton written once over every target's
primitives or one target's own idiom.
`

type patternJSON struct {
	Name     string   `json:"name"`
	Doc      string   `json:"doc"`
	Targets  []string `json:"targets"`
	Versions []int    `json:"sframe_versions"`
	Cannot   string   `json:"cannot_express,omitempty"`
	Skeleton bool     `json:"skeleton"`
}

func cmdPatterns(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("patterns", patternsUsage, stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	var rows []patternJSON
	for _, p := range gen.Catalog() {
		r := patternJSON{Name: p.Name, Doc: p.Doc, Versions: p.Versions, Cannot: p.Cannot, Skeleton: p.Skeleton}
		for _, t := range p.Targets {
			r.Targets = append(r.Targets, t.Name())
		}
		rows = append(rows, r)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			fmt.Fprintln(stderr, "sfconform patterns:", err)
			return exitSetup
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATTERN\tKIND\tTARGETS\tSFRAME\tWHAT")
	for _, r := range rows {
		kind := "own"
		if r.Skeleton {
			kind = "skeleton"
		}
		var vs []string
		for _, v := range r.Versions {
			vs = append(vs, fmt.Sprintf("v%d", v))
		}
		what := r.Doc
		if r.Cannot != "" {
			what += " (other versions: " + r.Cannot + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, kind, strings.Join(r.Targets, ","), strings.Join(vs, ","), what)
	}
	tw.Flush()
	return exitOK
}
