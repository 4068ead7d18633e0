package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/pipelines"
	"github.com/sfconform/sfconform/target"
)

func init() {
	register("pipelines", "build real C/C++ through strip, gc-sections, ld -r, COMDAT, mixed SFrame versions, LTO, far code, lld and BOLT; check every output", cmdPipelines)
}

func cmdPipelines(args []string, stdout, stderr io.Writer) int {
	head := "usage: sfconform pipelines [--out docs/pipelines.md] [--targets LIST] [--series LIST] [--scenarios LIST]\n" +
		"                           [--static-only] [--dir DIR] [--json FILE] [-q]\n" +
		"       sfconform pipelines --merge [--out docs/pipelines.md] SHARD.json...\n\n" +
		"Builds check's test programs (check/testdata/programs) with gcc/g++ -Wa,--gsframe and every provisioned\n" +
		"binutils series that writes SFrame for the target, through post-link tools (strip, strip --strip-debug,\n" +
		"objcopy --only-keep-debug + --add-gnu-debuglink, eu-strip, dwz), -ffunction-sections -Wl,--gc-sections,\n" +
		"ld -r chains, C++ COMDAT deduplication, links of objects from different gas series, LTO, the large code\n" +
		"model and .sframe 2/4 GiB from its code, lld as the linker and BOLT, and gen's generated programs (linked,\n" +
		"stripped, through ld -r), and judges every output with\n" +
		"check. Each scenario runs a negative control (an output with one FDE moved onto the next function) that\n" +
		"must be reported. Writes a Markdown table (a row per case x toolchain x target). Exit 1 when a negative\n" +
		"control stayed green; findings are results, not failures.\n\n" +
		"Targets: x86-64, aarch64, s390x (those with a gcc; aarch64_be has none). --static-only: no emulation of the\n" +
		"linked programs. --dir keeps the builds; -q: no progress on stderr.\n\n" +
		"A campaign on several machines: each runs a shard (a subset of --targets, --series or --scenarios) with\n" +
		"--json FILE; --merge joins the shards' files, in the order given, into the one report.\n"
	fs := newFlagSet("pipelines", head, stderr)
	out := fs.String("out", "", "write the Markdown report here (default: stdout)")
	targets := fs.String("targets", "x86-64,aarch64,s390x", "targets, comma-separated")
	series := fs.String("series", "", "binutils series, comma-separated (default: every provisioned one)")
	scenarios := fs.String("scenarios", "", "scenarios by number 1-10, comma-separated (1 post-link, 2 gc-sections, 3 ld -r, 4 COMDAT, 5 mixed, 6 LTO, 7 far code, 8 lld, 9 BOLT, 10 generated programs; default: all)")
	static := fs.Bool("static-only", false, "no dynamic check (emulation) of the linked programs")
	dir := fs.String("dir", "", "keep the builds in this directory (default: a temporary one, removed)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	jsonOut := fs.String("json", "", "also write the result as JSON here (a shard for --merge)")
	merge := fs.Bool("merge", false, "join the shards' JSON files (the arguments) into one report; builds nothing")
	files, err := parseArgs(fs, args, 0, -1, stdout)
	if err != nil {
		return parseExit(err)
	}
	if *merge != (len(files) > 0) {
		fmt.Fprintf(stderr, "sfconform pipelines: --merge takes the shards' JSON files as arguments, and only it does\n")
		return exitSetup
	}
	if *merge {
		var shards []*pipelines.Result
		for _, f := range files {
			r, err := pipelines.ReadJSON(f)
			if err != nil {
				fmt.Fprintf(stderr, "sfconform pipelines: %v\n", err)
				return exitSetup
			}
			shards = append(shards, r)
		}
		return report(pipelines.Merge(shards...), *out, "sfconform pipelines --merge", stdout, stderr)
	}
	cfg := pipelines.Config{Dynamic: !*static, Dir: *dir}
	for _, n := range splitFlag(*targets) {
		tg, err := target.Parse(n)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform pipelines: %v\n", err)
			return exitSetup
		}
		cfg.Targets = append(cfg.Targets, tg)
	}
	cfg.Series = splitFlag(*series)
	for _, n := range splitFlag(*scenarios) {
		var i int
		if _, err := fmt.Sscanf(n, "%d", &i); err != nil || i < 1 || i > len(pipelines.Scenarios) {
			fmt.Fprintf(stderr, "sfconform pipelines: scenario %q: want a number from 1 to %d\n", n, len(pipelines.Scenarios))
			return exitSetup
		}
		cfg.Scenarios = append(cfg.Scenarios, pipelines.Scenarios[i-1])
	}
	if !*quiet {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(stderr, "pipelines: "+format+"\n", a...) }
	}
	res, err := pipelines.Run(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform pipelines: %v\n", err)
		return exitSetup
	}
	if *jsonOut != "" {
		var b strings.Builder
		if err := res.WriteJSON(&b); err != nil {
			return exitSetup
		}
		if err := outfile.Write(*jsonOut, []byte(b.String())); err != nil {
			fmt.Fprintf(stderr, "sfconform pipelines: %v\n", err)
			return exitSetup
		}
	}
	return report(res, *out, strings.TrimSpace("sfconform pipelines "+strings.Join(args, " ")), stdout, stderr)
}

// report writes the Markdown report (to out, or stdout) and says whether a
// negative control stayed green.
func report(res *pipelines.Result, out, command string, stdout, stderr io.Writer) int {
	if out == "" {
		if err := res.Markdown(stdout, command); err != nil {
			return exitSetup
		}
	} else if err := writeMarkdown(out, res, command); err != nil {
		fmt.Fprintf(stderr, "sfconform pipelines: %v\n", err)
		return exitSetup
	}
	if n := res.ControlsFailed(); n > 0 {
		fmt.Fprintf(stderr, "sfconform pipelines: %d negative controls stayed green: check missed a corrupted section\n", n)
		return exitFailure
	}
	return exitOK
}

func writeMarkdown(path string, res *pipelines.Result, command string) error {
	var b strings.Builder
	if err := res.Markdown(&b, command); err != nil {
		return err
	}
	return outfile.Write(path, []byte(b.String()))
}
