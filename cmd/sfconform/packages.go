package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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
	head := "usage: sfconform packages --dir DIR [--packages LIST | --group LIST] [--targets LIST] [--series LIST] [--opt LIST] [--jobs N]\n" +
		"                          [--force] [--dynamic] [--recheck] [--json FILE] [--out docs/packages.md] [--report-only] [-q]\n" +
		"       sfconform packages --merge [--out docs/packages.md] SHARD.json...\n\n" +
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
		"emulate every function of the linked files (slow). --opt: build at these optimisation levels, which replace\n" +
		"Debian's -O2 (a level's builds stay beside the -O2 ones). --jobs: make -j. -q: no progress on stderr.\n\n" +
		"A campaign on several machines: each runs a shard (a subset of --packages or --group, --targets, --series,\n" +
		"--opt) with --json FILE (its results, resumed ones too); --merge joins the shards' files into the one report\n" +
		"(refusing a build that two shards hold). Groups: " + groupNames() + ".\n\n" +
		"Exit 1 when a build failed or a file has an error no docs/findings write-up explains; 2 on a setup problem.\n"
	fs := newFlagSet("packages", head, stderr)
	dir := fs.String("dir", "", "the campaign directory: builds, logs and results (kept)")
	pkgs := fs.String("packages", "", "Debian source packages, comma-separated (default: all)")
	group := fs.String("group", "", "package groups (the CI shards' split), comma-separated, in place of --packages")
	targets := fs.String("targets", "x86-64", "targets, comma-separated")
	series := fs.String("series", "", "binutils series, comma-separated (default: every provisioned one)")
	opt := fs.String("opt", "", "optimisation levels in place of Debian's -O2, comma-separated ("+strings.Join(packages.OptLevels, ", ")+"; default: the package's own)")
	jobs := fs.Int("jobs", 2, "make -j")
	force := fs.Bool("force", false, "build again what has a result")
	recheck := fs.Bool("recheck", false, "build nothing; check the kept outputs of the selected builds again")
	dynamic := fs.Bool("dynamic", false, "also run check's dynamic check on linked files")
	out := fs.String("out", "", "write the Markdown report here (default: stdout)")
	reportOnly := fs.Bool("report-only", false, "build nothing; write the report of the results in --dir")
	quiet := fs.Bool("q", false, "no progress on stderr")
	jsonOut := fs.String("json", "", "also write this run's results as JSON here (a shard for --merge)")
	merge := fs.Bool("merge", false, "join the shards' JSON files (the arguments) into one report; builds nothing")
	files, err := parseArgs(fs, args, 0, -1, stdout)
	if err != nil {
		return parseExit(err)
	}
	if *merge != (len(files) > 0) {
		fmt.Fprintf(stderr, "sfconform packages: --merge takes the shards' JSON files as arguments, and only it does\n")
		return exitSetup
	}
	if *merge {
		var shards []*packages.Shard
		for _, f := range files {
			s, err := packages.ReadShard(f)
			if err != nil {
				fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
				return exitSetup
			}
			shards = append(shards, s)
		}
		results, err := packages.Merge(shards...)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
			return exitSetup
		}
		var b strings.Builder
		if err := packages.Markdown(&b, results, strings.TrimSpace("sfconform packages "+strings.Join(args, " "))); err != nil {
			return exitSetup
		}
		packages.ShardTable(&b, shards)
		return packagesReport(b.String(), *out, results, stdout, stderr)
	}
	if *dir == "" {
		fmt.Fprintf(stderr, "sfconform packages: --dir is required\n")
		return exitSetup
	}
	if *group != "" {
		if *pkgs != "" {
			fmt.Fprintf(stderr, "sfconform packages: --group and --packages: give one\n")
			return exitSetup
		}
		for _, g := range splitFlag(*group) {
			list, err := packages.FindShardGroup(g)
			if err != nil {
				fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
				return exitSetup
			}
			*pkgs += "," + strings.Join(list, ",")
		}
	}
	cfg := packages.Config{Work: *dir, Jobs: *jobs, Force: *force, Recheck: *recheck, Dynamic: *dynamic, Packages: splitFlag(*pkgs), Series: splitFlag(*series),
		Opts: splitFlag(*opt)}
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
		start := time.Now()
		res, err := packages.Run(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
			return exitSetup
		}
		if *jsonOut != "" {
			shard := packages.NewShard(shardName(args), time.Since(start), res)
			var b strings.Builder
			if err := shard.WriteJSON(&b); err != nil {
				return exitSetup
			}
			if err := outfile.Write(*jsonOut, []byte(b.String())); err != nil {
				fmt.Fprintf(stderr, "sfconform packages: %v\n", err)
				return exitSetup
			}
		}
	} else if *jsonOut != "" {
		fmt.Fprintf(stderr, "sfconform packages: --json writes what a run builds: not with --report-only\n")
		return exitSetup
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
	return packagesReport(b.String(), *out, results, stdout, stderr)
}

// packagesReport writes the report (to out, or stdout) and says whether a
// build failed or a file has an error no write-up explains.
func packagesReport(md, out string, results []*packages.BuildResult, stdout, stderr io.Writer) int {
	if out == "" {
		io.WriteString(stdout, md)
	} else if err := outfile.Write(out, []byte(md)); err != nil {
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

// shardName is a shard's selection: its command line without the
// directories and files, which differ from machine to machine.
func shardName(args []string) string {
	var keep []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "dir", "json", "out", "jobs":
			if !hasValue {
				i++
			}
			continue
		case "q", "force", "report-only":
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) == 0 {
		return "everything"
	}
	return strings.Join(keep, " ")
}

func groupNames() string {
	var out []string
	for _, g := range packages.ShardGroups {
		out = append(out, g.Name+" ("+strings.Join(g.Packages, ", ")+")")
	}
	return strings.Join(out, "; ")
}
