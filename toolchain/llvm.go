package toolchain

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// LLVM returns the provisioned llvm-mc (ci/setup.sh step 5: sid's newest
// LLVM under toolchains/llvm-<major>) as one Toolchain per target, in
// version order, each with its measured SFrameVersion. AS is llvm-mc and
// ASFlags select the target (-triple=..., -filetype=obj), so Assemble
// works as for GNU as; LD and the other GNU tools are empty: LLVM's own
// linker has no SFrame support (lld concatenates .sframe sections), so a
// producer links llvm-mc's objects with a GNU ld of its choice. Name is
// "llvm-mc-<major>".
//
// A target llvm-mc takes --gsframe for but writes no FDE of a plain
// function for has SFrameVersion 0, with llvm-mc's warning as the reason.
func LLVM() ([]Toolchain, error) {
	root := filepath.Join(CacheDir(), "toolchains")
	confs, err := filepath.Glob(filepath.Join(root, "llvm-*", "llvm.conf"))
	if err != nil {
		return nil, err
	}
	if len(confs) == 0 {
		return nil, NotProvisioned(SetupLLVM, "no llvm-mc under %s", root)
	}
	var out []Toolchain
	var errs []error
	for _, path := range confs {
		kv, err := ReadConf(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		dir := filepath.Dir(path)
		mc := filepath.Join(dir, "bin", "llvm-mc")
		if executable(dir, "bin/llvm-mc") == "" {
			errs = append(errs, NotProvisioned(SetupLLVM, "%s: %s is missing", path, mc))
			continue
		}
		name, version := kv["name"], kv["version"]
		if name == "" || version == "" {
			errs = append(errs, fmt.Errorf("%s: no name= or version= line", path))
			continue
		}
		pkg := kv["package"]
		if pkg == "" && kv["root"] != "" {
			// Caches provisioned before setup wrote package=: the
			// changelog of the package whose files are in the root.
			major := strings.TrimPrefix(filepath.Base(dir), "llvm-")
			pkg = changelogVersion(filepath.Join(kv["root"], "usr/share/doc/llvm-"+major+"/changelog.Debian.gz"))
		}
		for _, tg := range target.All {
			t := Toolchain{
				Name: name, Version: version, Suite: kv["suite"], Package: pkg, Target: tg,
				Triple: tg.Triple(), AS: mc,
				ASFlags: []string{"-triple=" + tg.Triple(), "-filetype=obj"},
				dir:     dir,
			}
			if err := t.probe(); err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Toolchain) int { return CompareVersions(a.Version, b.Version) })
	return out, errors.Join(errs...)
}

// LLVMNames lists the provisioned llvm-mc toolchains' names
// (llvm-mc-<major>) without running anything: what a registry offers.
func LLVMNames() []string {
	confs, _ := filepath.Glob(filepath.Join(CacheDir(), "toolchains", "llvm-*", "llvm.conf"))
	var out []string
	for _, path := range confs {
		if kv, err := ReadConf(path); err == nil && kv["name"] != "" && !slices.Contains(out, kv["name"]) {
			out = append(out, kv["name"])
		}
	}
	slices.Sort(out)
	return out
}

var changelogRE = regexp.MustCompile(`^\S+ \(([^)]+)\)`)

// changelogVersion is the version in the first line of a Debian
// changelog.Debian.gz ("llvm-toolchain-23 (1:23.1.4-2) unstable; ..."),
// or "" when the file cannot be read.
func changelogVersion(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	line, _ := bufio.NewReader(z).ReadString('\n')
	if m := changelogRE.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}
