package packages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Source is a package's unpacked source tree, as ci/packages.sh (or
// ci/setup.sh step 8, for zlib and bzip2) records it in
// $SFCONFORM_CACHE/stamps/src-<package>.
type Source struct {
	Dir, Version, Suite string
}

// ErrNoSource wraps the error of a package whose source is not fetched:
// ci/packages.sh fetches them ('make packages' runs it).
var ErrNoSource = errors.New("source package not fetched (run ci/packages.sh)")

// Locate finds the unpacked source of the Debian source package pkg.
func Locate(pkg string) (Source, error) {
	stamp := filepath.Join(toolchain.CacheDir(), "stamps", "src-"+pkg)
	f, err := os.Open(stamp)
	if err != nil {
		return Source{}, fmt.Errorf("%w: %s: %v", ErrNoSource, pkg, err)
	}
	defer f.Close()
	var s Source
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "dir":
			s.Dir = v
		case "version":
			s.Version = v
		case "suite":
			s.Suite = v
		}
	}
	if s.Dir == "" {
		return Source{}, fmt.Errorf("%s: no dir= line", stamp)
	}
	if _, err := os.Stat(s.Dir); err != nil {
		return Source{}, fmt.Errorf("%w: %s: %s names %v", ErrNoSource, pkg, stamp, err)
	}
	return s, nil
}

// debArch is the Debian architecture of a target (dpkg-buildflags'
// DEB_HOST_ARCH).
var debArch = map[target.Target]string{target.X86_64: "amd64", target.AArch64: "arm64", target.S390X: "s390x"}

// Flags are the compiler and linker flags of one build: dpkg-buildflags'
// for the target's Debian architecture, the package's optimisation level,
// and -Wa,--gsframe.
type Flags struct {
	CFLAGS, CXXFLAGS, CPPFLAGS, LDFLAGS string
}

// DistFlags asks dpkg-buildflags for the target's default flags (run in
// dir: its -ffile-prefix-map names the working directory) and adds what a
// distribution enabling SFrame adds: -Wa,--gsframe to the compiler flags.
func DistFlags(tg target.Target, opt, dir string) (Flags, error) {
	arch, ok := debArch[tg]
	if !ok {
		return Flags{}, fmt.Errorf("no Debian architecture for target %s", tg.Name())
	}
	get := func(name string) (string, error) {
		cmd := exec.Command("dpkg-buildflags", "--get", name)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DEB_HOST_ARCH="+arch, "LC_ALL=C")
		out, err := cmd.Output()
		if err != nil {
			return "", toolchain.NotProvisioned(toolchain.SetupHost, "dpkg-buildflags --get %s (DEB_HOST_ARCH=%s): %v", name, arch, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	var f Flags
	for _, v := range []struct {
		name string
		to   *string
	}{{"CFLAGS", &f.CFLAGS}, {"CXXFLAGS", &f.CXXFLAGS}, {"CPPFLAGS", &f.CPPFLAGS}, {"LDFLAGS", &f.LDFLAGS}} {
		s, err := get(v.name)
		if err != nil {
			return f, err
		}
		*v.to = s
	}
	for _, p := range []*string{&f.CFLAGS, &f.CXXFLAGS} {
		if opt != "" {
			*p = strings.Replace(*p, "-O2", opt, 1)
		}
		*p += " -Wa,--gsframe"
	}
	return f, nil
}

// compilers are Debian's gcc and g++ 12 of each target.
var compilers = map[target.Target][2]string{
	target.X86_64:  {"x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++"},
	target.AArch64: {"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"},
	target.S390X:   {"s390x-linux-gnu-gcc", "s390x-linux-gnu-g++"},
}

// cmakeProcessor is CMAKE_SYSTEM_PROCESSOR of a cross build.
var cmakeProcessor = map[target.Target]string{target.AArch64: "aarch64", target.S390X: "s390x"}

// Targets are the targets the campaign builds for.
var Targets = []target.Target{target.X86_64, target.AArch64, target.S390X}

// drivers writes the compiler drivers of a build into bdir: cc and c++,
// which run the target's gcc and g++ with -B bdir/, where as and ld are
// the toolchain's: what installing that binutils would do, for every
// compile and link the build system runs (libtool and cmake pass the
// driver on, where they filter -B out of flags).
func drivers(bdir string, tg target.Target, tc toolchain.Toolchain) (cc, cxx string, err error) {
	pair, ok := compilers[tg]
	if !ok {
		return "", "", fmt.Errorf("no compiler for target %s", tg.Name())
	}
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return "", "", err
	}
	for name, to := range map[string]string{"as": tc.AS, "ld": tc.LD} {
		p := filepath.Join(bdir, name)
		os.Remove(p)
		if err := os.Symlink(to, p); err != nil {
			return "", "", err
		}
	}
	var out [2]string
	for i, name := range []string{"cc", "c++"} {
		drv, err := exec.LookPath(pair[i])
		if err != nil {
			return "", "", toolchain.NotProvisioned(toolchain.SetupHost, "%s compiler %s: %v", tg.Name(), pair[i], err)
		}
		p := filepath.Join(bdir, name)
		script := fmt.Sprintf("#!/bin/sh\n# %s with the as and ld of %s (%s)\nexec %s -B%s/ \"$@\"\n", pair[i], tc.Name, tc.Version, drv, bdir)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			return "", "", err
		}
		out[i] = p
	}
	return out[0], out[1], nil
}

// stepTimeout bounds one step of a build (configure, make).
const stepTimeout = 40 * time.Minute

// builder runs the steps of one build, logging them to one file and
// summing their CPU time.
type builder struct {
	log      io.Writer
	env      []string
	cpu      time.Duration
	commands []string
	jobs     int
}

func (b *builder) run(dir string, args ...string) error {
	line := toolchain.ShellJoin(args)
	b.commands = append(b.commands, "(cd "+dir+" && "+line+")")
	fmt.Fprintf(b.log, "\n$ cd %s && %s\n", dir, line)
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = b.env
	cmd.Stdout, cmd.Stderr = b.log, b.log
	err := cmd.Run()
	if cmd.ProcessState != nil {
		// The rusage of a waited-for process includes its waited-for
		// descendants: make's compilers and linkers.
		b.cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), stepTimeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", line, err)
	}
	return nil
}

// buildPackage copies the source to work/src and runs the recipe's build
// system there with the toolchain's as and ld, at optimisation level opt
// ("": the recipe's own); quick builds only the
// recipe's Quick targets. It returns the build directory (where the
// outputs are), the flags, and what ran; a failed step is an error, with
// the log kept.
func buildPackage(r Recipe, src Source, tg target.Target, tc toolchain.Toolchain, work, opt string, jobs int, quick bool, log io.Writer) (*builder, Flags, string, error) {
	b := &builder{log: log, jobs: max(jobs, 1)}
	// Nothing of an earlier build stays: its outputs would be taken for
	// this one's (a recipe that moved from cmake to configure).
	tree := filepath.Join(work, "src")
	for _, d := range []string{tree, filepath.Join(work, "build"), filepath.Join(work, "members")} {
		if err := os.RemoveAll(d); err != nil {
			return b, Flags{}, "", err
		}
	}
	if out, err := exec.Command("cp", "-a", src.Dir, tree).CombinedOutput(); err != nil {
		return b, Flags{}, "", fmt.Errorf("copying %s: %v: %s", src.Dir, err, out)
	}
	top := filepath.Join(tree, r.Dir)
	if opt == "" {
		opt = r.Opt
	}
	flags, err := DistFlags(tg, opt, top)
	if err != nil {
		return b, flags, "", err
	}
	cc, cxx, err := drivers(filepath.Join(work, "B"), tg, tc)
	if err != nil {
		return b, flags, "", err
	}
	triple := tg.Triple()
	ar, ranlib := "/usr/bin/"+triple+"-ar", "/usr/bin/"+triple+"-ranlib"
	b.env = append(os.Environ(), "LC_ALL=C", "CC="+cc, "CXX="+cxx, "AR="+ar, "RANLIB="+ranlib,
		"CFLAGS="+flags.CFLAGS, "CXXFLAGS="+flags.CXXFLAGS, "CPPFLAGS="+flags.CPPFLAGS, "LDFLAGS="+flags.LDFLAGS)
	cross := tg != target.X86_64
	jobsArg := fmt.Sprintf("-j%d", b.jobs)
	fmt.Fprintf(log, "# %s %s for %s with %s (%s): CC=%s CXX=%s\n# CFLAGS=%s\n# CXXFLAGS=%s\n# CPPFLAGS=%s\n# LDFLAGS=%s\n",
		r.Package, src.Version, tg.Name(), tc.Name, tc.Version, cc, cxx, flags.CFLAGS, flags.CXXFLAGS, flags.CPPFLAGS, flags.LDFLAGS)
	subst := func(args []string) []string {
		var out []string
		for _, a := range args {
			if strings.Contains(a, "%[") {
				a = fmt.Sprintf(a, flags.CFLAGS, flags.CPPFLAGS, flags.LDFLAGS, cc)
			}
			out = append(out, a)
		}
		return out
	}
	b.env = append(b.env, subst(r.Env)...)
	switch r.System {
	case Configure:
		if r.Autoreconf {
			if err := b.run(top, "autoreconf", "-fi"); err != nil {
				return b, flags, top, err
			}
		}
		args := []string{"./configure"}
		if r.Package == "zlib" {
			// zlib's own configure knows no --host: CHOST names the cross
			// tools.
			if cross {
				b.env = append(b.env, "CHOST="+triple)
			}
		} else {
			args = append(args, "--build=x86_64-linux-gnu", "--host="+triple)
		}
		if err := b.run(top, append(args, subst(r.Args)...)...); err != nil {
			return b, flags, top, err
		}
		mk := []string{"make", jobsArg}
		if quick {
			mk = append(mk, r.Quick...)
		}
		return b, flags, top, b.run(top, mk...)
	case CMake:
		bdir := filepath.Join(work, "build")
		os.RemoveAll(bdir)
		// CMake reads CFLAGS but not CPPFLAGS: debhelper puts them in
		// CFLAGS and CXXFLAGS, as here.
		b.env = append(b.env, "CFLAGS="+flags.CFLAGS+" "+flags.CPPFLAGS, "CXXFLAGS="+flags.CXXFLAGS+" "+flags.CPPFLAGS)
		args := []string{"cmake", "-S", top, "-B", bdir, "-DCMAKE_BUILD_TYPE=None", "-DCMAKE_AR=" + ar, "-DCMAKE_RANLIB=" + ranlib,
			"-DCMAKE_VERBOSE_MAKEFILE=ON", "-DCMAKE_INSTALL_PREFIX=/usr"}
		if cross {
			args = append(args, "-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_SYSTEM_PROCESSOR="+cmakeProcessor[tg])
		}
		if err := b.run(work, append(args, subst(r.Args)...)...); err != nil {
			return b, flags, bdir, err
		}
		mk := []string{"make", jobsArg}
		if quick {
			mk = append(mk, r.Quick...)
		}
		return b, flags, bdir, b.run(bdir, mk...)
	case Make:
		args := []string{"make", jobsArg, "AR=" + ar, "RANLIB=" + ranlib}
		targs := subst(r.Args)
		if quick {
			var vars []string
			for _, a := range targs {
				if strings.Contains(a, "=") {
					vars = append(vars, a)
				}
			}
			targs = append(vars, r.Quick...)
		}
		return b, flags, top, b.run(top, append(args, targs...)...)
	}
	return b, flags, top, fmt.Errorf("recipe %s: unknown build system %q", r.Package, r.System)
}
