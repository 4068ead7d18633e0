package deviation_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/toolchain"
)

func expected(t *testing.T) *deviation.List {
	t.Helper()
	l, err := deviation.Expected()
	if err != nil {
		t.Fatalf("the checked-in list does not parse:\n%v", err)
	}
	return l
}

// The embedded list is the file in the repository.
func TestExpectedIsTheFile(t *testing.T) {
	t.Parallel()
	l := expected(t)
	f, err := deviation.Load("expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != len(l.Entries) {
		t.Fatalf("embedded %d entries, the file %d", len(l.Entries), len(f.Entries))
	}
}

// Every finding an entry links to exists. A finding written in parallel
// with its entry makes this fail until both are in the tree.
func TestFindingsExist(t *testing.T) {
	t.Parallel()
	for _, e := range expected(t).Entries {
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(e.Finding))); err != nil {
			t.Errorf("%v: its finding %s: %v", e, e.Finding, err)
		}
	}
}

// Every entry names registered plug-ins and patterns the generator
// charges failures to: an entry with a typo would match nothing and, its
// cell never running, never go stale either.
func TestExpectedNamesExist(t *testing.T) {
	t.Parallel()
	patterns := []string{"entry", "noreturn", deviation.PatternSection, deviation.AnyPattern}
	for _, p := range gen.Catalog() {
		patterns = append(patterns, p.Name)
	}
	known := func(names string, mk func(string) error) {
		if names == "*" {
			return
		}
		for _, name := range strings.Split(names, ",") {
			knownOne(t, name, mk)
		}
	}
	for _, e := range expected(t).Entries {
		if !slices.Contains(patterns, e.Pattern) {
			t.Errorf("%v: no pattern %q (sfconform patterns)", e, e.Pattern)
		}
		known(e.Producer, func(n string) error { _, err := producer.New(n); return err })
		known(e.Consumer, func(n string) error {
			c, err := consumer.New(n)
			if err == nil {
				c.Close()
			}
			return err
		})
	}
}

// knownOne checks that mk makes the plug-in name, or says what setup
// step provides it.
func knownOne(t *testing.T, name string, mk func(string) error) {
	t.Helper()
	err := mk(name)
	testenv.IfNotProvisioned(t, err)
	switch {
	case errors.Is(err, toolchain.ErrNotProvisioned): // no step named
		testenv.Missing(t, testenv.Binutils, "%v", err)
	case err != nil:
		t.Errorf("%v", err)
	}
}
