package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/matrix"
	"github.com/sfconform/sfconform/producer"
)

func init() {
	register("matrix", "run every target x producer x consumer x pattern and write docs/matrix.md", cmdMatrix)
}

const matrixUsage = `usage: sfconform matrix [--targets LIST] [--producer LIST] [--consumer LIST] [--patterns LIST]
                        [--programs N] [--seed N] [-j N] [--deviations FILE] [-q]
                        [--out FILE] [--cases DIR]

Runs the whole matrix: for every target, producer and pattern, --programs
programs (seeds --seed, --seed+1, ...), each checked at every executed
instruction by every consumer the producer meets on the target. A failing
step is charged to the pattern of the function whose row was in force for
the first wrong frame; the expected deviations (deviation/expected.txt,
or --deviations) say which failures are known, each with its finding.

Writes --out (docs/matrix.md): per target x producer x consumer the
programs, instructions, verdict counts, expected deviations with their
findings, unsupported cells with the reason, the exact versions, and each
failure with its stored case (one per cell, pattern and verdict, in
--cases; a case replays with sfconform run --replay).

docs/matrix.md and docs/matrix/cases are committed: matrix overwrites them
only when --out and --cases name them on the command line (make matrix
does); without the flags and with them in place, it refuses before
running. Output places are checked before the run starts.

Exit status: 0 when every cell is clean, unsupported or expected; 1 when
something failed unexpectedly or an expected deviation went stale (its
pattern ran and it matched nothing: fixed upstream?); 2 on bad usage or
a setup error.
`

// Defaults of make matrix: what docs/matrix.md shows.
const (
	defaultMatrixPrograms = 12
	defaultMatrixSeed     = 1
)

func cmdMatrix(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("matrix", matrixUsage, stderr)
	programs := fs.Int("programs", defaultMatrixPrograms, "programs per target x producer x pattern")
	var seed seedFlag
	fs.Var(&seed, "seed", "first seed, an integer (default "+strconv.Itoa(defaultMatrixSeed)+")")
	targets := fs.String("targets", "all", "comma-separated targets: "+targetNames()+", or all")
	producers := fs.String("producer", "all", "comma-separated producers, or all (every provisioned one that needs no argument)")
	consumers := fs.String("consumer", "all", "comma-separated consumers, or all (every provisioned one that needs no argument, with the variants its registry entry names)")
	patterns := fs.String("patterns", "", "comma-separated patterns (default: every pattern of each target)")
	out := fs.String("out", "docs/matrix.md", "the Markdown file to write; - for standard output")
	cases := fs.String("cases", "docs/matrix/cases", "folder of the stored cases (emptied first); empty: none stored")
	devs := fs.String("deviations", "", "the expected deviations (default: the list built in, "+deviation.Path+")")
	workers := fs.Int("j", runtime.NumCPU(), "parallel workers (one emulator each)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "sfconform matrix:", err)
		return exitSetup
	}
	if *programs < 1 || *workers < 1 {
		return fail(errors.New("--programs and -j must be at least 1"))
	}
	if err := checkMatrixOutputs(fs, *out, *cases); err != nil {
		return fail(err)
	}
	cfg := matrix.Config{Programs: *programs, Seed: seed.or(defaultMatrixSeed), Workers: *workers}
	var err error
	if cfg.Targets, err = parseTargets(*targets); err != nil {
		return fail(err)
	}
	if cfg.Producers, err = allOr(*producers, matrix.Producers, producer.New); err != nil {
		return fail(err)
	}
	if cfg.Consumers, err = allOr(*consumers, matrix.Consumers, consumer.New); err != nil {
		return fail(err)
	}
	if *patterns != "" {
		cfg.Patterns = strings.Split(*patterns, ",")
		for _, p := range cfg.Patterns {
			if !slices.ContainsFunc(gen.Catalog(), func(i gen.PatternInfo) bool { return i.Name == p }) {
				return fail(fmt.Errorf("--patterns: no pattern %q (see 'sfconform patterns')", p))
			}
		}
	}
	if *devs == "" {
		cfg.List, err = deviation.Expected()
	} else {
		cfg.List, err = deviation.Load(*devs)
	}
	if err != nil {
		return fail(err)
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	fmt.Fprintf(stderr, "sfconform matrix: seed %d, %d programs per target x producer x pattern, producers %s, consumers %s\n",
		cfg.Seed, cfg.Programs, strings.Join(cfg.Producers, ","), strings.Join(cfg.Consumers, ","))
	rep, err := matrix.Run(cfg)
	if err != nil {
		return fail(err)
	}
	md := matrix.Markdown{Command: matrixCommand(args), Versions: matrix.Versions(rep)}
	if *cases != "" {
		if md.Cases, err = matrix.SaveCases(*cases, rep); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "sfconform matrix: stored %d cases, %d KB, in %s\n", md.Cases.Files, (md.Cases.Bytes+1023)/1024, *cases)
	}
	var buf bytes.Buffer
	base := "."
	if *out != "-" {
		base = filepath.Dir(*out)
	}
	md.CaseDir = relPath(base, *cases)
	md.FindingsDir = relPath(base, "docs/findings")
	if err := matrix.WriteMarkdown(&buf, rep, md); err != nil {
		return fail(err)
	}
	if *out == "-" {
		stdout.Write(buf.Bytes())
	} else if err := outfile.Write(*out, buf.Bytes()); err != nil {
		return fail(err)
	}
	code := exitOK
	for _, c := range rep.Cells {
		if c.Outcome == nil {
			continue
		}
		for _, p := range c.Outcome.Problems() {
			fmt.Fprintln(stderr, "FAIL", p)
			code = exitFailure
		}
	}
	fmt.Fprintf(stderr, "sfconform matrix: %d cells in %s; wrote %s\n", len(rep.Cells), rep.Elapsed.Round(1e9), *out)
	return code
}

// allOr is every name the lister gives for "all", else the names given,
// each checked by making it once.
func allOr[T interface{ Name() string }](s string, all func() []string, mk func(string) (T, error)) ([]string, error) {
	if s == "all" {
		return all(), nil
	}
	return splitNames(s, mk)
}

// makeMatrixArgs are the arguments make matrix passes: naming the
// committed files is what lets matrix overwrite them.
const makeMatrixArgs = "--out docs/matrix.md --cases docs/matrix/cases"

// matrixCommand is how docs/matrix.md says it was made.
func matrixCommand(args []string) string {
	if a := strings.Join(args, " "); a == "" || a == makeMatrixArgs {
		return "make matrix"
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsAny(a, " \t'\"") {
			q[i] = strconv.Quote(a)
		}
	}
	return "sfconform matrix " + strings.Join(q, " ")
}

func relPath(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// checkMatrixOutputs refuses, before the run, to overwrite the committed
// matrix (docs/matrix.md, docs/matrix/cases) unless the command line names
// it, and checks that the places can be written.
func checkMatrixOutputs(fs *flag.FlagSet, out, cases string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if out != "-" {
		if _, err := os.Stat(out); err == nil && !given["out"] {
			return fmt.Errorf("%s exists: pass --out %s to overwrite it (make matrix does), or --out FILE or --out - for another place", out, out)
		}
		if err := outfile.File("--out", out); err != nil {
			return err
		}
	}
	if cases != "" {
		if ents, err := os.ReadDir(cases); err == nil && len(ents) > 0 && !given["cases"] {
			return fmt.Errorf("%s holds stored cases, which matrix empties first: pass --cases %s to replace them (make matrix does), or --cases DIR or --cases '' for none", cases, cases)
		}
		if err := outfile.Dir("--cases", cases); err != nil {
			return err
		}
	}
	return nil
}
