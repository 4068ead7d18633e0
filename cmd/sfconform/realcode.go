package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/realcode"
)

func init() {
	register("realcode", "compile real C code bases with every provisioned toolchain and check every output's SFrame", cmdRealcode)
}

func splitFlag(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func cmdRealcode(args []string, stdout, stderr io.Writer) int {
	head := "usage: sfconform realcode [--bases LIST] [--targets LIST] [--opts LIST] [--assemblers LIST]\n" +
		"                          [--links LIST] [--dumpers LIST] [--check static|dynamic|none] [--dir DIR]\n" +
		"                          [--json] [-v]\n\n" +
		"Compiles C code bases from Debian's source packages (zlib, bzip2, lua; 'make setup' step 8\n" +
		"fetches them) with Debian's gcc for each target at each optimisation setting, assembles\n" +
		"them with every provisioned assembler that emits SFrame (gas --gsframe, llvm-mc), links\n" +
		"them (-r; -static and -pie with the C library) and checks every object and link output:\n" +
		"the section decodes and validates, every instruction of the code base's functions has an\n" +
		"FDE and a row, rows start on instruction boundaries, and every dumper prints the decoder's\n" +
		"rows. Findings already triaged (realcode.KnownFindings) are marked known; exit 0 when all are,\n" +
		"1 with a new finding or a build error, 2 on bad usage or setup.\n\n" +
		assemblersHelp()
	fs := newFlagSet("realcode", head, stderr)
	bases := fs.String("bases", "", "code bases, comma-separated (default all: zlib,bzip2,lua)")
	targets := fs.String("targets", "all", "comma-separated targets: "+targetNames()+", or all")
	opts := fs.String("opts", "", "optimisation settings: O0,O2,O2-fp,O2-nofp,O3 (default all)")
	asms := fs.String("assemblers", "", "assemblers: gas-2.40,gas-2.44,gas-2.47,llvm-mc-23 (default all provisioned)")
	links := fs.String("links", "", "link kinds: obj,r,static,pie (default all)")
	dir := fs.String("dir", "", "keep the built files in this directory (default: a temporary one, removed)")
	dumpers := fs.String("dumpers", "", "dumper consumers to compare (default every provisioned one; 'none' for none)")
	checkMode := fs.String("check", "static", "also run sfconform check on every output: static (its CFI differential), dynamic (and every function emulated), none")
	asJSON := fs.Bool("json", false, "print every output's report as JSON")
	verbose := fs.Bool("v", false, "print a line per built cell on stderr")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	opt := realcode.Options{Bases: splitFlag(*bases), Opts: splitFlag(*opts), Assemblers: splitFlag(*asms),
		Links: splitFlag(*links), Dir: *dir}
	ts, err := parseTargets(*targets)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform realcode: %v\n", err)
		return exitSetup
	}
	opt.Targets = ts
	sc := &realcode.StaticChecker{}
	switch *dumpers {
	case "":
	case "none":
		sc.Dumpers = []string{}
	default:
		sc.Dumpers = splitFlag(*dumpers)
	}
	switch *checkMode {
	case "none":
		opt.Checker = sc
	case "static", "dynamic":
		opt.Checker = &realcode.WithCheck{Static: sc, Options: check.Options{Static: true, Dynamic: *checkMode == "dynamic"}}
	default:
		fmt.Fprintf(stderr, "sfconform realcode: --check %q: want static, dynamic or none\n", *checkMode)
		return exitSetup
	}
	if *verbose {
		opt.Progress = stderr
	}
	res, err := realcode.Run(opt)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform realcode: %v\n", err)
		return exitSetup
	}
	for _, s := range res.Sources {
		fmt.Fprintf(stderr, "realcode: %s = Debian %s source package %s %s (%s)\n", s.Base.Name, s.Suite, s.Base.Package, s.Version, s.Dir)
	}
	if *asJSON {
		if err := writeRealcodeJSON(stdout, res); err != nil {
			fmt.Fprintf(stderr, "sfconform realcode: %v\n", err)
			return exitSetup
		}
	} else {
		res.Summary(stdout)
	}
	// Known findings (realcode.KnownFindings, each written up) do not
	// fail the run; anything new does, and so does an output that could
	// not be made or read.
	if len(res.New()) > 0 {
		return exitFailure
	}
	for _, o := range res.Outputs {
		if o.BuildErr != nil || o.CheckErr != nil {
			return exitFailure
		}
	}
	return exitOK
}

type realcodeOutputJSON struct {
	Name     string           `json:"name"`
	Path     string           `json:"path,omitempty"`
	Error    string           `json:"error,omitempty"`
	Commands []string         `json:"commands,omitempty"`
	CheckMS  float64          `json:"check_ms"`
	Report   *realcode.Report `json:"report,omitempty"`
	Findings []string         `json:"findings,omitempty"`
	Target   string           `json:"target"`
}

func writeRealcodeJSON(w io.Writer, res *realcode.Result) error {
	var outs []realcodeOutputJSON
	for _, o := range res.Outputs {
		j := realcodeOutputJSON{Name: o.Name(), Path: o.Path, Commands: o.Commands, CheckMS: float64(o.CheckTime.Microseconds()) / 1000,
			Report: o.Report, Target: o.Target.Name()}
		switch {
		case o.BuildErr != nil:
			j.Error = o.BuildErr.Error()
		case o.CheckErr != nil:
			j.Error = o.CheckErr.Error()
		}
		if o.Report != nil {
			for _, f := range o.Report.Findings {
				j.Findings = append(j.Findings, f.String())
			}
		}
		outs = append(outs, j)
	}
	type figure struct {
		Target        string  `json:"target"`
		Files         int     `json:"files"`
		Functions     int     `json:"functions"`
		Instructions  int     `json:"instructions"`
		CheckSeconds  float64 `json:"check_seconds"`
		FilesFindings int     `json:"files_with_findings"`
		BuildErrors   int     `json:"build_errors"`
	}
	var figs []figure
	for _, f := range res.Figures() {
		figs = append(figs, figure{f.Target.Name(), f.Files, f.Functions, f.Instructions, f.CheckTime.Seconds(), f.Findings, f.BuildErrors})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Figures []figure             `json:"figures"`
		Skipped []string             `json:"skipped,omitempty"`
		Outputs []realcodeOutputJSON `json:"outputs"`
	}{figs, res.Skipped, outs})
}
