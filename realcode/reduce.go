package realcode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/sfconform/sfconform/toolchain"
)

// Reduce shrinks a failing program's C source with C-Vise (Debian's
// cvise, ci/setup.sh step 8) while it keeps its failure signature
// (Program.Signature: the first failure's verdict and field) built the
// same way (target, optimisation, assembler) and judged by the same
// consumer. The interestingness test is this very binary: sfconform
// csmith --c prog.c ... --signature SIG, which exits 0 exactly when the
// candidate still fails that way. It returns the reduced file, in dir.
//
// The machine-level minimizer (package minimize) shrinks gen's programs,
// not compiled C: for a Csmith program the C reduction is the one there
// is, and its result is small enough to read.
func Reduce(p *Program, sfconform, dir string, limit time.Duration) (string, error) {
	sig := p.Signature()
	if sig == "" || sig == "outermost-only" || sig == "build" {
		return "", fmt.Errorf("%s: nothing to reduce (signature %q)", p.Name(), sig)
	}
	cvise, err := exec.LookPath("cvise")
	if err != nil {
		return "", toolchain.NotProvisioned(toolchain.SetupRealCode, "cvise: %v", err)
	}
	src := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(p.Path)))), "prog.c")
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return "", err
	}
	test := filepath.Join(dir, "interesting.sh")
	script := fmt.Sprintf("#!/bin/sh\n# Interesting: the program still fails with %s.\nexec %s csmith -q --c prog.c --seeds %d --targets %s --opts %s --assemblers %s --consumers %s --signature %s\n",
		sig, toolchain.ShellQuote(sfconform), p.Seed, p.Target.Name(), p.Opt, p.Assembler, p.Consumer, toolchain.ShellQuote(sig))
	if err := os.WriteFile(test, []byte(script), 0o755); err != nil {
		return "", err
	}
	check := exec.Command(test)
	check.Dir = dir
	if err := check.Run(); err != nil {
		return "", fmt.Errorf("%s: the interestingness test %s fails on the original program: %v", p.Name(), test, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cvise, "--n", "1", "--timeout", "120", test, filepath.Base(out))
	cmd.Dir = dir
	log, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(dir, "cvise.log"), log, 0o644)
	if err != nil && ctx.Err() == nil {
		return "", fmt.Errorf("cvise on %s: %v: %s", out, err, firstLines(string(log), 5))
	}
	return out, nil
}
