package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// execCase saves a failing case unwound by an exec consumer (this test
// binary serving the builtin consumer) and returns its path and the
// consumer's name.
func execCase(t *testing.T, command string) (string, string) {
	t.Helper()
	bad, _, prog := brokenTable(t, target.X86_64)
	chk, err := harness.New(target.X86_64, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	name := "exec:" + command
	cons, err := consumer.New(name)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	res := chk.Check(bad, cons)
	if res.Clean() {
		t.Fatal("the broken table conforms")
	}
	path, err := corpus.Save(t.TempDir(), repro.NewCase(repro.CaseInput{Img: bad, Prog: prog, Seed: 21, Consumer: cons, Res: res, Checker: chk}))
	if err != nil {
		t.Fatal(err)
	}
	return path, name
}

// repro runs no command a reproducer names unless the user passes the same
// name or --trust-exec: it says what it would run and exits 2.
func TestReproExecNeedsConsent(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(t.TempDir(), "PWNED")
	path, name := execCase(t, "touch "+toolchain.ShellQuote(pwned)+"; SFCONFORM_TEST_MAIN=1 exec "+toolchain.ShellQuote(exe)+" serve")
	os.Remove(pwned) // made while the case was recorded
	c, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.ConsumerHello, "builtin") {
		t.Errorf("the reproducer records the consumer's hello as %q", c.ConsumerHello)
	}
	for _, args := range [][]string{{path}, {"--report", path}, {"--html", t.TempDir(), path}, {"--consumer", "exec:true", "--remake", path}} {
		var errOut bytes.Buffer
		if code := cmdRepro(args, io.Discard, &errOut); code != exitSetup {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitSetup, errOut.String())
		}
		if _, err := os.Stat(pwned); err == nil {
			t.Fatalf("%v ran the file's command", args)
		}
		if args[0] == "--consumer" {
			continue // another consumer: the file's is not run, nothing to refuse
		}
		msg := errOut.String()
		if !strings.Contains(msg, "\n    touch "+toolchain.ShellQuote(pwned)) || !strings.Contains(msg, "--trust-exec") || !strings.Contains(msg, path) {
			t.Errorf("%v: the refusal does not show the command, the file and the way out:\n%s", args, msg)
		}
	}
	for _, args := range [][]string{{"--trust-exec", path}, {"--consumer", name, path}} {
		var out, errOut bytes.Buffer
		if code := cmdRepro(args, &out, &errOut); code != exitFailure {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, exitFailure, out.String(), errOut.String())
		}
		if _, err := os.Stat(pwned); err != nil {
			t.Errorf("%v: the consented command did not run", args)
		}
		os.Remove(pwned)
		if !strings.Contains(out.String(), "says it is builtin") {
			t.Errorf("%v: the consumer's hello is not shown:\n%s", args, out.String())
		}
	}
	var md bytes.Buffer
	if code := cmdRepro([]string{"--trust-exec", "--report", path}, &md, io.Discard); code != exitFailure || !strings.Contains(md.String(), "which says it is builtin") {
		t.Errorf("--report: exit %d, the consumer's hello not in the report:\n%s", code, md.String())
	}
	os.Remove(pwned)
}

// A producer naming a directory of tools (gas:DIR) is a command too: a
// remake with it needs consent.
func TestReproToolDirNeedsConsent(t *testing.T) {
	t.Parallel()
	path, _ := failingCase(t, target.X86_64)
	c, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	c.Producer = "gas:/tmp/evil tools"
	p := filepath.Join(t.TempDir(), "gasdir.json")
	if err := corpus.WriteFile(p, c); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	if code := cmdRepro([]string{"--remake", p}, io.Discard, &errOut); code != exitSetup ||
		!strings.Contains(errOut.String(), "'/tmp/evil tools'") || !strings.Contains(errOut.String(), "--producer") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}
