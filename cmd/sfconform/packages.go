package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/packages"
	"github.com/sfconform/sfconform/target"
)

func init() {
	register("packages", "build Debian source packages with their own build systems and -Wa,--gsframe; check every ELF, measure .sframe", cmdPackages)
}

func cmdPackages(args []string, stdout, stderr io.Writer) int {
	var names []string
	for _, r := range packages.Recipes {
		names = append(names, r.Package)
	}
	head := "usage: sfconform packages --dir DIR [--packages LIST] [--targets LIST] [--series LIST] [--jobs N] [--force]\n" +
		"                          [--dynamic] [--recheck] [--out docs/packages.md] [--report-only] [-q]\n\n" +
		"Builds Debian source packages (fetched by ci/packages.sh) with their upstream build system (configure, cmake,\n" +
		"their own Makefile) and dpkg-buildflags' flags plus -Wa,--gsframe, with the as and ld of each provisioned\n" +
		"binutils series (gcc -B), and checks every ELF file the build makes (executables, shared libraries, objects,\n" +
		"static archives' members) with check. Each build's result and log stay in --dir; a build with a result is not\n" +
		"run again unless --force, so the campaign resumes where it stopped. Then writes the Markdown report of every\n" +
		"result in --dir (--out; default stdout): builds, findings grouped by cause, sizes of .sframe against\n" +
		".eh_frame + .eh_frame_hdr. --report-only: build nothing, only write the report. --recheck: build nothing,\n" +
		"check the kept outputs of the selected builds again (after a change to check).\n\n" +
		"Packages: " + strings.Join(names, ", ") + ".\n" +
		"Targets: x86-64, aarch64, s390x (Debian's gcc of each; aarch64_be has no Debian C library). --dynamic: also\n" +
		"emulate every function of the linked files (slow). --jobs: make -j. -q: no progress on stderr. Exit 1 when a\n" +
		"build failed or a file has an error no docs/findings write-up explains; 2 on a setup problem.\n"
	fs := newFlagSet("packages", head, stderr)
	dir := fs.String("dir", "", "the campaign directory: builds, logs and results (kept)")
	pkgs := fs.String("packages", "", "Debian source packages, comma-separated (default: all)")
	targets := fs.String("targets", "x86-64", "targets, comma-separated")
	series := fs.String("series", "", "binutils series, comma-separated (default: every provisioned one)")
	jobs := fs.Int("jobs", 2, "make -j")
	force := fs.Bool("force", false, "build again what has a result")
	recheck := fs.Bool("recheck", false, "build nothing; check the kept outputs of the selected builds again")
	dynamic := fs.Bool("dynamic", false, "also run check's dynamic check on linked files")
	out := fs.String("out", "", "write the Markdown report here (default: stdout)")
	reportOnly := fs.Bool("report-only", false, "build nothing; write the report of the results in --dir")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	if *dir == "" {
		fmt.Fprintf(stderr, "sfconform packages: --dir is required\n")
		return exitSetup
	}
	cfg := packages.Config{Work: *dir, Jobs: *jobs, Force: *force, Recheck: *recheck, Dynamic: *dynamic, Packages: splitFlag(*pkgs), Series: splitFlag(*series)}
	for _, n := range splitFlag(*targets) {
		tg, err := target.Parse(n)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
			return exitSetup
		}
		cfg.Targets = append(cfg.Targets, tg)
	}
	if !*quiet {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(stderr, "packages: "+format+"\n", a...) }
	}
	if !*reportOnly {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
			return exitSetup
		}
		if _, err := packages.Run(cfg); err != nil {
			fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
			return exitSetup
		}
	}
	results, err := packages.Load(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
		return exitSetup
	}
	var b strings.Builder
	command := strings.ReplaceAll("sfconform packages "+strings.Join(args, " "), *dir, "DIR")
	if err := packages.Markdown(&b, results, strings.TrimSpace(command)); err != nil {
		return exitSetup
	}
	if *out == "" {
		io.WriteString(stdout, b.String())
	} else if err := outfile.Write(*out, []byte(b.String())); err != nil {
		fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
		return exitSetup
	}
	code := exitOK
	for _, r := range results {
		if r.Status == packages.Failed {
			code = exitFailure
		}
		for _, f := range r.Files {
			if f.Unusable != "" {
				code = exitFailure
			}
			for _, g := range f.Groups {
				if g.Severity == "error" && packages.Triage(r, f, g) == "" {
					code = exitFailure
				}
			}
		}
	}
	return code
}
