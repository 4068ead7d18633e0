package toolchain

import (
	"errors"
	"os"
	"path/filepath"
)

// SourceBuildConf is the description ci/binutils-src.sh writes into the
// source build's directory. It has toolchain.conf's keys (and source=),
// under another name so that the release toolchains' glob
// (binutils-*/toolchain.conf) never takes the source build for the
// release series it builds: gas-2.47 stays Debian's package.
const SourceBuildConf = "srcbuild.conf"

// SourceBuild is GNU binutils built from Debian sid's binutils source
// package by ci/binutils-src.sh (make binutils-src): gas, ld, objdump and
// readelf for every target, and the target-independent libsframe.
type SourceBuild struct {
	Dir     string // $SFCONFORM_CACHE/toolchains/binutils-src-<package>
	Version string // as "as --version" reports it: 2.47
	// Package is the Debian source package version the tree was unpacked
	// from (2.47-6), Debian's patches applied.
	Package string
	Src     string // the unpacked source tree
	Lib     string // libsframe.a
	Include string // the directory of sframe-api.h
	// Toolchains are the build's as/ld/objdump/readelf per target, called
	// "gas-src", not probed (All and Find never list them).
	Toolchains []Toolchain
}

// sourceBuildStamp is where ci/binutils-src.sh records the build's
// directory.
func sourceBuildStamp() string { return filepath.Join(CacheDir(), "stamps", "binutils-src") }

// FindSourceBuild reads the source build's description. A build that is
// not there (or not finished) is a *NotProvisionedError of step
// SetupBinutilsSrc, whose message names make binutils-src.
func FindSourceBuild() (SourceBuild, error) {
	stamp, err := ReadConf(sourceBuildStamp())
	if err != nil {
		return SourceBuild{}, NotProvisioned(SetupBinutilsSrc, "binutils built from source: %v", err)
	}
	dir := stamp["dir"]
	path := filepath.Join(dir, SourceBuildConf)
	if _, err := os.Stat(path); err != nil {
		return SourceBuild{}, NotProvisioned(SetupBinutilsSrc, "binutils built from source: %s is not finished (no %s)", dir, SourceBuildConf)
	}
	c, err := readConf(path)
	if err != nil {
		return SourceBuild{}, err
	}
	b := SourceBuild{Dir: dir, Version: c.version, Package: c.pkg, Src: filepath.Join(dir, "src"),
		Lib: filepath.Join(dir, "lib", "libsframe.a"), Include: filepath.Join(dir, "include")}
	ts, errs := c.toolchains(path, "gas-src", c.pkg+" (built from source)", SetupBinutilsSrc)
	b.Toolchains = ts
	for _, p := range []string{b.Lib, filepath.Join(b.Include, "sframe-api.h")} {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, NotProvisioned(SetupBinutilsSrc, "binutils built from source: no %s", p))
		}
	}
	return b, errors.Join(errs...)
}

// Probed returns the build's toolchains with their SFrame versions
// measured (as All's are); one whose probe fails is left out and named in
// the error.
func (b SourceBuild) Probed() ([]Toolchain, error) {
	var out []Toolchain
	var errs []error
	for _, t := range b.Toolchains {
		if err := (&t).probe(); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}
