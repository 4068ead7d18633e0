package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sfconform/sfconform/realcode"
)

func init() {
	register("csmith", "run Csmith programs built by the real toolchains under emulation, every instruction's unwind checked", cmdCsmith)
}

// parseSeeds reads "1-20,33" into seeds.
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range splitFlag(s) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q: %v", part, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("seed range %q: want LOW-HIGH", part)
			}
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}

func cmdCsmith(args []string, stdout, stderr io.Writer) int {
	head := "usage: sfconform csmith [--seeds LIST | --c FILE] [--targets LIST] [--opts LIST] [--assemblers LIST]\n" +
		"                        [--consumer LIST] [--budget N] [--dir DIR] [--signature SIG] [-j N] [-q]\n" +
		"                        [--reduce N [--reduce-known] [--reduce-time D]]\n\n" +
		"Generates C programs with Csmith (Debian's csmith, 'make setup' step 8), compiles each with\n" +
		"Debian's gcc for each target and optimisation setting, assembles it with every provisioned\n" +
		"assembler that emits SFrame, links it with sfconform's freestanding runtime at a fixed address,\n" +
		"and runs it to completion under emulation (a budget per program), judging every executed\n" +
		"instruction's backtrace by each consumer against the machine. A line per program, then a table\n" +
		"per target. Exit 0 when every program is clean, 1 otherwise, 2 on bad usage or setup.\n" +
		"With --c FILE the program is FILE instead (the seed only names it); with --signature SIG the\n" +
		"exit status is 0 exactly when the first program fails with that signature (a reducer's test).\n\n" +
		assemblersHelp()
	fs := newFlagSet("csmith", head, stderr)
	seeds := fs.String("seeds", "1-10", "Csmith seeds: a list of numbers and LOW-HIGH ranges")
	targets := fs.String("targets", "all", "comma-separated targets: "+targetNames()+", or all")
	opts := fs.String("opts", "O0,O2", "optimisation settings: O0,O2,O2-fp,O2-nofp,O3")
	asms := fs.String("assemblers", "", "assemblers (default every provisioned one that emits SFrame)")
	conss := fs.String("consumer", "builtin", "comma-separated consumers judged at every instruction (see run --list)")
	fs.Var(aliasFlag{fs.Lookup("consumer")}, "consumers", "the former name of --consumer")
	budget := fs.Int("budget", 2_000_000, "instructions per program run")
	dir := fs.String("dir", "", "keep the programs and their builds here (default: removed)")
	cfile := fs.String("c", "", "run this C file instead of generating one")
	sig := fs.String("signature", "", "exit 0 exactly when the first program's failure signature is this")
	quiet := fs.Bool("q", false, "no line per program")
	workers := fs.Int("j", 1, "seeds run in parallel (one emulator each); the lines then come in the order the programs finish")
	reduce := fs.Int("reduce", 0, "reduce the C of up to this many failing programs with cvise (needs --dir)")
	reduceKnown := fs.Bool("reduce-known", false, "with --reduce, reduce failures already triaged too (default: only new ones)")
	reduceTime := fs.Duration("reduce-time", 20*time.Minute, "time limit of one reduction")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	opt := realcode.CsmithOptions{Opts: splitFlag(*opts), Assemblers: splitFlag(*asms), Consumers: splitFlag(*conss),
		Budget: *budget, Dir: *dir, CFile: *cfile, Workers: *workers}
	var err error
	if opt.Seeds, err = parseSeeds(*seeds); err != nil {
		fmt.Fprintf(stderr, "sfconform csmith: %v\n", err)
		return exitSetup
	}
	if opt.Targets, err = parseTargets(*targets); err != nil {
		fmt.Fprintf(stderr, "sfconform csmith: %v\n", err)
		return exitSetup
	}
	if !*quiet {
		opt.Progress = func(line string) { fmt.Fprintln(stdout, line) }
	}
	progs, err := realcode.RunCsmith(opt)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform csmith: %v\n", err)
		return exitSetup
	}
	if *sig != "" {
		if len(progs) > 0 && progs[0].Signature() == *sig {
			return exitOK
		}
		return exitFailure
	}
	realcode.CsmithSummary(stdout, progs)
	if *reduce > 0 {
		self, err := os.Executable()
		if err != nil || *dir == "" {
			fmt.Fprintf(stderr, "sfconform csmith: --reduce needs --dir and this binary's path (%v)\n", err)
			return exitSetup
		}
		n := 0
		for _, p := range progs {
			if s := p.Signature(); s == "" || s == "outermost-only" || s == "build" || n >= *reduce || (p.Triage() != "" && !*reduceKnown) {
				continue
			}
			n++
			rdir := filepath.Join(*dir, "reduced", strings.ReplaceAll(p.Name(), "/", "-"))
			out, err := realcode.Reduce(p, self, rdir, *reduceTime)
			if err != nil {
				fmt.Fprintf(stderr, "sfconform csmith: %v\n", err)
				continue
			}
			fi, _ := os.Stat(out)
			fmt.Fprintf(stdout, "reduced %s (%s) to %s (%d bytes)\n", p.Name(), p.Signature(), out, fi.Size())
		}
	}
	// Known failures (Program.Triage: findings 008 and 021) do not fail
	// the run; a new one or a build error does.
	for _, p := range progs {
		if p.Signature() != "" && p.Triage() == "" {
			return exitFailure
		}
	}
	return exitOK
}
