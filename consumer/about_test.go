package consumer

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/toolchain"
)

// SourceHash, over the embedded sources, is what ci/setup.sh computes over
// the files on disk, for every folder of C sources: a file the embed
// patterns miss (or a new folder's) would make setup's build look absent
// forever.
func TestSourceHashIsSetups(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "cprotocol" || e.Name() == "internal" {
			continue // the shared protocol code; Go helpers of the tests
		}
		dir := e.Name()
		// ci/setup.sh's consumer_hash, run as it is written there.
		out, err := exec.Command("/bin/sh", "-c",
			`find cprotocol "$1" -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16`, "sh", dir).Output()
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		got, err := SourceHash(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if want := strings.TrimSpace(string(out)); got != want {
			t.Errorf("SourceHash(%s) = %s, ci/setup.sh computes %s: a file on disk is not embedded (cbuild.go's go:embed)", dir, got, want)
		}
		n++
	}
	if n < 2 {
		t.Fatalf("found %d C consumer folders, want libsframe and glibc at least", n)
	}
}

// Every consumer kind describes itself: a setup step (or NoSetup) and a
// summary, and a variant or limit only where it means something.
func TestRegistryEntries(t *testing.T) {
	t.Parallel()
	for _, a := range Describe() {
		if a.Setup == 0 || a.Setup < toolchain.NoSetup {
			t.Errorf("%s: setup step %d: want the ci/setup.sh step that provides it, or toolchain.NoSetup", a.Kind, a.Setup)
		}
		if a.Summary == "" {
			t.Errorf("%s: no summary", a.Kind)
		}
		for _, v := range a.Variants {
			if got, ok := Lookup(v); !ok || got.Kind != a.Kind {
				t.Errorf("%s: variant %s is not found as its own", a.Kind, v)
			}
		}
	}
	if PatternLimit("libsframe", "signal") == "" || PatternLimit("builtin", "signal") != "" {
		t.Error("PatternLimit does not read the entries' limits")
	}
	if a, ok := Lookup("glibc:strict"); !ok || a.Library != "glibc" {
		t.Errorf("Lookup(glibc:strict) = %+v, %v", a, ok)
	}
	// Family members by the form of their name, provisioned or not.
	for name, step := range map[string]int{"objdump-2.47": toolchain.SetupBinutils, "readelf-2.9": toolchain.SetupBinutils, "llvm-readobj-23": toolchain.SetupLLVM} {
		if a, ok := Lookup(name); !ok || a.Kind != name || a.Setup != step {
			t.Errorf("Lookup(%s) = %+v, %v; want step %d", name, a, ok, step)
		}
	}
	for _, name := range []string{"objdump-", "objdump-x", "strings-2.47", "nonesuch"} {
		if a, ok := Lookup(name); ok {
			t.Errorf("Lookup(%s) = %+v, want none", name, a)
		}
	}
}
