package pipelines

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// tools are the programs besides gcc and GNU binutils the scenarios run:
// the host suite's eu-strip, dwz and lld (ci/setup.sh step 1), sid's lld
// and llvm-bolt of the provisioned LLVM (step 5b).
type tools struct {
	euStrip, dwz string
	lld          []linker // host first, then sid's
	bolt         string
	versions     []string
}

// linker is an lld: its path and the version it reports ("14.0.6").
type linker struct {
	name, path string // "ld.lld 14"
}

// findTools finds what the scenarios need; a scenario's missing tool is
// an error (setup provides it), not a skip.
func findTools(scenarios []string) (tools, error) {
	var t tools
	need := map[string]bool{}
	for _, s := range scenarios {
		need[s] = true
	}
	look := func(name, what string) (string, error) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", toolchain.NotProvisioned(toolchain.SetupHost, "%s (%s): %v", name, what, err)
		}
		if v := toolVersion(p, "--version"); v != "" {
			t.versions = append(t.versions, v)
		}
		return p, nil
	}
	var err error
	if need[PostLink] {
		if t.euStrip, err = look("eu-strip", "Debian package elfutils"); err != nil {
			return t, err
		}
		if t.dwz, err = look("dwz", "Debian package dwz"); err != nil {
			return t, err
		}
	}
	llvmBin := func(name string) (string, error) {
		confs, _ := filepath.Glob(filepath.Join(toolchain.CacheDir(), "toolchains", "llvm-*", "llvm.conf"))
		sort.Strings(confs)
		for i := len(confs) - 1; i >= 0; i-- {
			p := filepath.Join(filepath.Dir(confs[i]), "bin", name)
			if _, err := exec.LookPath(p); err == nil {
				if v := toolVersion(p, "--version"); v != "" {
					t.versions = append(t.versions, v)
				}
				return p, nil
			}
		}
		return "", toolchain.NotProvisioned(toolchain.SetupLLVM, "%s of sid's LLVM under %s/toolchains/llvm-*/bin", name, toolchain.CacheDir())
	}
	if need[LLD] {
		host, err := look("ld.lld", "Debian package lld")
		if err != nil {
			return t, err
		}
		sid, err := llvmBin("ld.lld")
		if err != nil {
			return t, err
		}
		t.lld = []linker{{lldName(host), host}, {lldName(sid), sid}}
	}
	if need[BOLT] {
		if t.bolt, err = llvmBin("llvm-bolt"); err != nil {
			return t, err
		}
	}
	return t, nil
}

// lldName is "ld.lld <major>" from what it reports ("Debian LLD 14.0.6
// (compatible with GNU linkers)").
func lldName(p string) string {
	out, _ := exec.Command(p, "--version").Output()
	for _, f := range strings.Fields(string(out)) {
		if f[0] >= '0' && f[0] <= '9' {
			major, _, _ := strings.Cut(f, ".")
			return "ld.lld " + major
		}
	}
	return "ld.lld"
}
