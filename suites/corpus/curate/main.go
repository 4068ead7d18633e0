// Command curate makes the curated reproducers of corpus/cases: each
// upstream finding the toolchain producers and the consumers reach, found
// at coordinates written down here, minimized and saved with what its
// replay must show; and, from reproducers an older sfconform saved
// (-old DIR), the cases of sfconform's own fixed bugs.
//
//	go run ./suites/corpus/curate             # from the repository root
//	go run ./suites/corpus/curate -old DIR -fix COMMIT -note TEXT
//
// It needs the provisioned toolchains and consumers (make setup).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/minimize"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

const dir = "corpus/cases"

// finding is one curated upstream case: where it is found and which
// failing step to keep.
type finding struct {
	name               string
	producer, consumer string
	target             target.Target
	seed               int64
	opt                gen.Options
	pick               func(f *harness.Failure) bool // nil: the first failure
	finding, note      string
}

var findings = []finding{
	{name: "008-gas-2.44-x86-64-start-not-outermost", producer: "gas-2.44", consumer: "builtin", target: target.X86_64, seed: 5,
		finding: "008-gas-mid-function-undefined-ra-ignored",
		note:    "GNU as 2.44 ignores the entry stub's .cfi_undefined %rip: _start's row gives a CFA and an RA, so an unwinder goes past the outermost frame"},
	{name: "008-gas-2.40-x86-64-start-not-outermost", producer: "gas-2.40", consumer: "builtin", target: target.X86_64, seed: 5,
		finding: "008-gas-mid-function-undefined-ra-ignored",
		note:    "GNU as 2.40 (SFrame v1) ignores the entry stub's .cfi_undefined %rip: _start's row gives a CFA and an RA"},
	{name: "008-gas-2.44-aarch64be-start-not-outermost", producer: "gas-2.44", consumer: "builtin", target: target.AArch64BE, seed: 4,
		finding: "008-gas-mid-function-undefined-ra-ignored",
		note:    "GNU as 2.44 ignores the entry stub's .cfi_undefined x30 on big-endian AArch64: _start's row says the RA is still in x30"},
	{name: "001-gas-2.44-x86-64-drap-no-fde", producer: "gas-2.44", consumer: "builtin", target: target.X86_64, seed: 1,
		opt:     gen.Options{SFrameVersion: 3, Patterns: []string{"drap", "fp-frame"}},
		pick:    func(f *harness.Failure) bool { return f.Judgement.Verdict == verdict.NoInfo && f.Judgement.Frame > 0 },
		finding: "001-gas-drap-no-fde",
		note:    "GNU as 2.44 skips the FDE of a DRAP function (\"skipping SFrame FDE; non-SP/FP register 10 in .cfi_def_cfa\"): SFrame v2 cannot express its CFA; an unwinder has no row there"},
	{name: "001-gas-2.40-x86-64-drap-no-fde", producer: "gas-2.40", consumer: "builtin", target: target.X86_64, seed: 1,
		opt:     gen.Options{SFrameVersion: 3, Patterns: []string{"drap", "fp-frame"}},
		pick:    func(f *harness.Failure) bool { return f.Judgement.Verdict == verdict.NoInfo && f.Judgement.Frame > 0 },
		finding: "001-gas-drap-no-fde",
		note:    "GNU as 2.40 writes no FDE for a DRAP function, and says nothing"},
	{name: "009-gas-2.44-x86-64-simple-empty-no-fde", producer: "gas-2.44", consumer: "builtin", target: target.X86_64, seed: 2,
		opt:     gen.Options{SFrameVersion: 3, Patterns: []string{"empty-fde", "fp-frame"}},
		finding: "009-gas-simple-empty-no-fde",
		note:    "GNU as 2.44 writes no FDE for `.cfi_startproc simple` without CFI (2.47: an FDE without rows, outermost in v3): the entry stub has none"},
	{name: "018-glibc-x86-64-caller-looked-up-at-ra", producer: "builtin-v2", consumer: "glibc", target: target.X86_64, seed: 118,
		pick: func(f *harness.Failure) bool {
			return f.Judgement.Verdict == verdict.Wrong && f.Judgement.Field == "cfa"
		},
		finding: "018-glibc-callers-at-ra",
		note:    "glibc's SFrame walker looks a caller's row up at its return address, not RA-1: a noreturn call as a function's last instruction unwinds with the next function's row"},
	{name: "019-glibc-aarch64-ra-in-lr", producer: "builtin-v2", consumer: "glibc", target: target.AArch64, seed: 4,
		pick: func(f *harness.Failure) bool {
			return f.Judgement.Verdict == verdict.Wrong && f.Judgement.Field == "pc"
		},
		finding: "019-glibc-lr-and-outermost",
		note:    "glibc's SFrame walker does not support an AArch64 frame whose RA is still in x30 (a leaf, a prologue)"},
	{name: "019-glibc-strict-x86-64-outermost-drops-trace", producer: "builtin-v2", consumer: "glibc:strict", target: target.X86_64, seed: 1,
		finding: "019-glibc-lr-and-outermost",
		note:    "glibc's backtrace() drops the whole trace at an RA-undefined (outermost) row: NOINFO from the entry stub on"},
	{name: "011-objdump-2.44-pcrel-v2-refused", producer: "builtin-v2", consumer: "objdump-2.44", target: target.X86_64, seed: 1,
		finding: "011-objdump-2.44-pcrel-v2-refused",
		note:    "objdump 2.44 refuses an SFrame v2 section with SFRAME_F_FDE_FUNC_START_PCREL (what llvm-mc and the builtin encoder write)"},
	{name: "020-llvm-mc-23-x86-64-simple-empty", producer: "llvm-mc-23", consumer: "builtin", target: target.X86_64, seed: 2,
		opt:     gen.Options{Patterns: []string{"empty-fde", "fp-frame"}},
		finding: "020-llvm-mc-interop",
		note:    "llvm-mc 23 and GNU ld 2.44 on an entry stub with `.cfi_startproc simple` and no CFI"},
	{name: "libsframe-v3-fde-without-rows", producer: "builtin-v3", consumer: "libsframe", target: target.X86_64, seed: 2,
		opt:     gen.Options{SFrameVersion: 3, Patterns: []string{"empty-fde", "fp-frame"}},
		finding: "sframe-facts.md section 5",
		note:    "libsframe finds no FRE in a version 3 FDE without FREs, which the specification makes an outermost frame: the entry stub"},
}

func main() {
	old := flag.String("old", "", "directory of reproducers an older sfconform saved, to keep as fixed bugs")
	fix := flag.String("fix", "", "with -old: the commit that fixed the bug")
	note := flag.String("note", "", "with -old: what the bug was")
	only := flag.String("only", "", "make only the cases whose name contains this")
	flag.Parse()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	if *old != "" {
		if err := curateOld(*old, *fix, *note); err != nil {
			fail(err)
		}
		return
	}
	for _, f := range findings {
		if *only != "" && !strings.Contains(f.name, *only) {
			continue
		}
		if err := curate(f); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f.name, err)
			continue
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "curate:", err)
	os.Exit(1)
}

func curate(f finding) error {
	prod, err := producer.New(f.producer)
	if err != nil {
		return err
	}
	cons, err := consumer.New(f.consumer)
	if err != nil {
		return err
	}
	defer cons.Close()
	hopt := harness.Options{}
	if f.pick != nil {
		hopt.MaxFailures = 1 << 20
	}
	chk, err := harness.New(f.target, hopt)
	if err != nil {
		return err
	}
	defer chk.Close()
	img, prog, err := campaign.Produce(prod, f.target, f.seed, f.opt)
	if err != nil {
		return err
	}
	res := chk.Check(img, cons)
	var fl *harness.Failure
	for i := range res.Failures {
		if f.pick == nil || f.pick(&res.Failures[i]) {
			fl = &res.Failures[i]
			break
		}
	}
	var sig minimize.Signature
	path := 0
	if fl != nil {
		sig, path = minimize.FailureSignature(img, fl), fl.Path
	} else if sig, err = minimize.SignatureOf(img, res); err != nil || f.pick != nil {
		return fmt.Errorf("no failure to keep (%d failing steps)", len(res.Failures))
	}
	m, err := minimize.Minimize(chk, prod, cons, prog, path, sig, minimize.Options{})
	if err != nil {
		return err
	}
	c := repro.NewCase(repro.CaseInput{Img: m.Img, Prog: m.Prog, Seed: f.seed, Consumer: cons, Res: m.Res, Failure: m.Failure, Minimization: m.Minimization(), Checker: chk})
	c.Expect = &corpus.Expectation{Fails: true, Finding: f.finding, Note: f.note}
	out := filepath.Join(dir, f.name+".json")
	c.Replay = "sfconform repro " + out
	if err := corpus.WriteFile(out, c); err != nil {
		return err
	}
	fmt.Printf("%s: %v, %v -> %v (%d attempts)\n", out, sig, m.Original, m.Minimized, m.Attempts)
	return nil
}

// curateOld keeps reproducers an older sfconform saved as cases of a bug
// fixed since in gen: their programs are what the bug made; the case
// records gen's coordinates so that the suite makes the program again
// with today's gen and checks it conforms.
func curateOld(old, fix, note string) error {
	if fix == "" || note == "" {
		return fmt.Errorf("-old needs -fix and -note")
	}
	paths, err := filepath.Glob(filepath.Join(old, "*.json"))
	if err != nil {
		return err
	}
	for _, p := range paths {
		c, err := corpus.Load(p)
		if err != nil {
			return err
		}
		prod, err := producer.New(c.Producer)
		if err != nil {
			return err
		}
		t, err := c.TargetOf()
		if err != nil {
			return err
		}
		v, err := prod.SFrameVersion(t)
		if err != nil {
			return err
		}
		// What campaign.Produce gives the builtin producer: the version's
		// patterns, at least version 2's.
		c.Generator = &corpus.Generator{Seed: c.Seed, SFrameVersion: max(v, 2)}
		c.Expect = &corpus.Expectation{Fails: false, Regenerate: true, Fix: fix, Note: note}
		out := filepath.Join(dir, fmt.Sprintf("fixed-%s-%s-seed%d.json", fix, c.Target, c.Seed))
		c.Replay = "sfconform repro " + out
		if err := corpus.WriteFile(out, c); err != nil {
			return err
		}
		fmt.Println(out)
	}
	return nil
}
