package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/repro"
)

func init() {
	register("repro", "replay a saved failure; --report writes it up as a bug report", cmdRepro)
}

const reproUsage = `usage: sfconform repro [--producer P] [--consumer C] [--remake] [--trust-exec] [--before N] [--after N] FILE
       sfconform repro --report [--testsuite DIR] FILE
       sfconform repro --testsuite DIR FILE
       sfconform repro --html DIR FILE

Replays the reproducer FILE (written by 'sfconform run'; every format
version from sfconform-case/1 on) with the producer and consumer it
records, and prints the instructions around the failing step (address,
disassembly, the row the section has there, the step's verdict) and the
failing step's frames, expected against got, with the row each frame was
unwound by.

--producer makes the image again with another producer, from the program
regenerated with the case's coordinates (e.g. a newer gas: --producer
gas-2.47); --remake does so with the recorded producer. --consumer unwinds
with another consumer.

--report writes a Markdown bug report on standard output instead: a
summary, the affected versions (the failure replayed with every
provisioned toolchain of the producer's kind), the minimized assembly
source and the plain commands that show the defect without sfconform (for
a libsframe consumer, a C program against libsframe's API), and expected
against actual rows at the failing PC. --testsuite DIR writes the case as
a GNU binutils testsuite case (NAME.s and NAME.d, in the style of
gas/testsuite/gas/cfi-sframe) into DIR.

--html DIR writes DIR/index.html instead: the replayed failure as a page
(no network, no JavaScript): the failing function's instructions with the
row covering each and the oracle's frames where it ran, the failing
step's frames expected against got, and a picture of the stack there.

A reproducer is a file anyone may have written. It names a consumer and a
producer; a name that takes an argument runs something of the file's
choosing: exec:COMMAND is a shell command, gas:DIR the as and ld in DIR.
repro runs neither unless you pass the same name (--consumer or
--producer) or --trust-exec; otherwise it prints what it would run and
exits 2. Provisioned names (builtin, libsframe, objdump-2.47, gas-2.44)
run only what 'make setup' installed.

Exit status: 1 while the recorded failure still happens (or the program
fails elsewhere), 0 when it conforms, 2 for a bad file, bad usage, or a
recorded producer or consumer that is not provisioned (the message names
the ci/setup.sh step).
`

func cmdRepro(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("repro", reproUsage, stderr)
	prod := fs.String("producer", "", "make the image again with this producer (default: replay the recorded image)")
	cons := fs.String("consumer", "", "unwind with this consumer (default: the recorded one)")
	remake := fs.Bool("remake", false, "make the image again with the recorded producer")
	report := fs.Bool("report", false, "write a Markdown bug report on standard output")
	suite := fs.String("testsuite", "", "write a binutils testsuite case (NAME.s, NAME.d) into this directory")
	before := fs.Int("before", 6, "instructions shown before the failing step")
	after := fs.Int("after", 2, "instructions shown after it")
	htmlDir := fs.String("html", "", "write an HTML report (index.html) into this directory instead of the table")
	trust := fs.Bool("trust-exec", false, "run the exec: command or gas: directory the file names without asking for the same name")
	files, err := parseArgs(fs, args, 1, 1, stdout)
	if err != nil {
		return parseExit(err)
	}
	opt := repro.Options{Producer: *prod, Consumer: *cons, Remake: *remake,
		Consent: repro.Consent{Given: []string{*prod, *cons}, Trust: *trust}}
	if *htmlDir != "" {
		path, fails, err := reproHTML(*htmlDir, files[0], opt)
		if err != nil {
			fmt.Fprintln(stderr, "sfconform repro:", err)
			return exitSetup
		}
		fmt.Fprintln(stderr, "wrote", path)
		if fails {
			return exitFailure
		}
		return exitOK
	}
	if *report || *suite != "" {
		return reportCase(files[0], opt, *report, *suite, stdout, stderr)
	}
	return replayWith(files[0], opt, *before, *after, stdout, stderr)
}

// replayCase is 'sfconform run --replay FILE': repro with the consumer the
// case records, or else the first of consumers.
func replayCase(path, consumers string, trust bool, w, stderr io.Writer) int {
	first, _, _ := strings.Cut(consumers, ",")
	c, err := corpus.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "sfconform repro:", err)
		return exitSetup
	}
	opt := repro.Options{Consent: repro.Consent{Given: strings.Split(consumers, ","), Trust: trust}}
	if c.Consumer == "" {
		opt.Consumer = first
	}
	return replayLoaded(path, c, opt, 6, 2, w, stderr)
}

func replayWith(path string, opt repro.Options, before, after int, w, stderr io.Writer) int {
	c, err := corpus.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "sfconform repro:", err)
		return exitSetup
	}
	return replayLoaded(path, c, opt, before, after, w, stderr)
}

func replayLoaded(path string, c *corpus.Case, opt repro.Options, before, after int, w, stderr io.Writer) int {
	r, err := repro.Run(c, opt)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform repro: %s: %v\n", path, err)
		return exitSetup
	}
	fmt.Fprintf(w, "repro %s: %s, SFrame v%d, producer %s, consumer %s, seed %d\n", path, c.Target, r.Img.SFrameVersion, r.Producer, r.Consumer, c.Seed)
	if r.Remade {
		fmt.Fprintf(w, "remade:   the program regenerated from the case's coordinates, made by %s\n", r.Producer)
	}
	if v := c.ProducerVersion; v != "" && !r.Remade {
		fmt.Fprintf(w, "made by:  %s\n", v)
	} else if rec := r.Img.Record; rec != nil {
		fmt.Fprintf(w, "made by:  %s\n", rec.Versions())
	}
	if c.ConsumerHello != "" && r.Consumer == c.Consumer {
		fmt.Fprintf(w, "consumer: says it is %s\n", c.ConsumerHello)
	}
	if rec := r.Img.Record; rec != nil {
		for _, wn := range rec.Warnings {
			fmt.Fprintf(w, "warning:  %s\n", wn)
		}
	}
	if m := c.Minimization; m != nil {
		if m.Skipped != "" {
			fmt.Fprintf(w, "program:  %v, not minimized: %s\n", m.Original, m.Skipped)
		} else {
			fmt.Fprintf(w, "program:  minimized from %v to %v keeping %s (%d attempts)\n", m.Original, m.Minimized, m.Signature, m.Attempts)
		}
	}
	fmt.Fprintf(w, "recorded: step %d at %s (%s): %s %s\n", c.Step, c.Function, c.Insn, c.Verdict, c.Detail)
	if c.ReferenceRow != "" {
		fmt.Fprintf(w, "row:      %s; sfconform's own encoding: %s\n", c.Row, c.ReferenceRow)
	}
	for _, v := range r.Res.Violations {
		fmt.Fprintf(w, "section:  %v\n", v)
	}
	res := r.Res
	switch f := r.Failure; {
	case f != nil:
		same := "the same failure"
		if !r.SameFailure() {
			same = "another failure at the same step"
		}
		fmt.Fprintf(w, "now:      step %d at %s (%s): %s %s (%s)\n\n%s", f.Step, f.Function, f.Insn, f.Judgement.Verdict, f.Judgement.Detail, same,
			r.Table(before, after))
		return exitFailure
	case c.Verdict.String() == "INVALID" && res.Invalid():
		fmt.Fprintln(w, "now:      the section is still invalid")
		return exitFailure
	case res.LoadErr != nil:
		fmt.Fprintf(w, "now:      consumer refused the section: %v\n", res.LoadErr)
		return exitFailure
	case res.RunErr != nil:
		fmt.Fprintf(w, "now:      run stopped: %v\n", res.RunErr)
		return exitFailure
	case !res.Clean():
		fmt.Fprintf(w, "now:      the recorded failure is gone, but the program still fails: %s\n", describe(res))
		return exitFailure
	}
	fmt.Fprintf(w, "now:      all %d steps conform: the failure no longer reproduces\n", res.Steps)
	return exitOK
}

// reportCase writes the bug report and the testsuite case.
func reportCase(path string, opt repro.Options, md bool, suite string, w, stderr io.Writer) int {
	c, err := corpus.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "sfconform repro:", err)
		return exitSetup
	}
	rep, err := repro.NewReport(c, path, opt)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform repro: %s: %v\n", path, err)
		return exitSetup
	}
	if suite != "" {
		files, err := rep.Testsuite()
		if err != nil {
			fmt.Fprintf(stderr, "sfconform repro: %s: %v\n", path, err)
			return exitSetup
		}
		if err := os.MkdirAll(suite, 0o755); err != nil {
			fmt.Fprintln(stderr, "sfconform repro:", err)
			return exitSetup
		}
		for _, f := range files {
			p := suite + string(os.PathSeparator) + f.Name
			if err := os.WriteFile(p, []byte(f.Text), 0o644); err != nil {
				fmt.Fprintln(stderr, "sfconform repro:", err)
				return exitSetup
			}
			fmt.Fprintln(stderr, "wrote", p)
		}
	}
	if md {
		io.WriteString(w, rep.Markdown())
	}
	if rep.Replay.StillFails() {
		return exitFailure
	}
	return exitOK
}
