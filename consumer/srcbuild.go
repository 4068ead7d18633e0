package consumer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The consumers of binutils built from source: the build 'make
// binutils-src' makes from Debian sid's source package (libsframe-src,
// objdump-src, readelf-src: a family whose members exist while the build
// does; make setup does not provide them), and a binutils developer's own
// build tree (objdump:DIR, readelf:DIR here, libsframe:DIR in
// libsframe.go).
func init() {
	RegisterFamily("binutils-src", sourceBuildAbout, func() []About { return nil }, describeSourceBuild, func(name, arg string) (Consumer, error) {
		if arg != "" {
			return nil, fmt.Errorf("consumer %s takes no argument (got %q)", name, name)
		}
		return newSourceBuildConsumer(name)
	})
	for _, tool := range dumperTools {
		tool := tool
		Register(About{Kind: tool, Setup: toolchain.NoSetup, NeedsArg: true,
			Summary: tool + ":DIR, GNU " + tool + " --sframe of a binutils build of one's own (DIR/binutils/" + tool + ", DIR/" + tool + " or DIR/<triple>-" + tool + ")"},
			func(name, dir string) (Consumer, error) {
				if dir == "" {
					return nil, fmt.Errorf("consumer %s needs a directory: %s:<dir> holding %s, binutils/%s or <triple>-%s", name, tool, tool, tool, tool)
				}
				return DumperFromDir(tool, dir)
			})
	}
}

// sourceBuildKinds are the family's members, in the order listed.
var sourceBuildKinds = []string{"libsframe-src", "objdump-src", "readelf-src"}

func describeSourceBuild(kind string) (About, bool) {
	if !slices.Contains(sourceBuildKinds, kind) {
		return About{}, false
	}
	a := About{Kind: kind, Setup: toolchain.SetupBinutilsSrc}
	switch kind {
	case "libsframe-src":
		a.Library, a.Limits = "libsframe", map[string]string{"signal": libsframeSignal, "signal-empty-fde": libsframeSignal}
		a.Summary = "GNU libsframe built from sid's binutils source package (make binutils-src) behind consumer/libsframe's walk"
	default:
		a.Summary = "GNU " + strings.TrimSuffix(kind, "-src") + " --sframe of binutils built from sid's source package (make binutils-src)"
	}
	return a, true
}

// sourceBuildAbout lists the members while the source build is there.
func sourceBuildAbout() []About {
	if _, err := toolchain.FindSourceBuild(); err != nil {
		return nil
	}
	out := make([]About, len(sourceBuildKinds))
	for i, k := range sourceBuildKinds {
		out[i], _ = describeSourceBuild(k)
	}
	return out
}

func newSourceBuildConsumer(name string) (Consumer, error) {
	b, err := toolchain.FindSourceBuild()
	if err != nil {
		return nil, err
	}
	pkg := fmt.Sprintf("built from Debian sid's binutils source package %s", b.Package)
	switch name {
	case "libsframe-src":
		a, _ := Lookup(name)
		bb, err := builtBinaryAt(name, "libsframe", "libsframe-src", "sfconform-libsframe", a.Setup)
		if err != nil {
			return nil, err
		}
		x := NewExec(a.Kind, "exec "+toolchain.ShellQuote(bb.bin))
		x.SetGiveUpAfter(0)
		return &Libsframe{Exec: x, version: fmt.Sprintf("libsframe %s (%s), through sfconform's consumer/libsframe", bb.conf["version"], pkg)}, nil
	case "objdump-src", "readelf-src":
		tool := strings.TrimSuffix(name, "-src")
		paths := map[target.Target]string{}
		for _, tc := range b.Toolchains {
			if tool == "objdump" {
				paths[tc.Target] = tc.Objdump
			} else {
				paths[tc.Target] = tc.Readelf
			}
		}
		return newDumperAt(name, tool, b.Version, pkg, paths), nil
	}
	return nil, fmt.Errorf("unknown consumer %q", name)
}

// newDumperAt is a GNU dumper consumer running paths (one per target) of
// binutils version.
func newDumperAt(name, tool, version, pkg string, paths map[target.Target]string) *Dumper {
	d := &Dumper{name: name, tool: tool, series: toolchain.Series(version), version: version, pkg: pkg, paths: paths, timeout: DefaultExecTimeout}
	if v, err := time.ParseDuration(os.Getenv("SFCONFORM_CONSUMER_TIMEOUT")); err == nil && v > 0 {
		d.timeout = v
	}
	return d
}

// DumperFromDir is the dumper consumer tool:DIR (tool objdump or readelf)
// of a binutils build of one's own: DIR/<triple>-tool serves that triple's
// targets; otherwise DIR/tool or DIR/binutils/tool (a build tree) serves
// what it reads: readelf every target (it reads any ELF file), objdump
// the targets its BFD lists ("supported targets" in --help).
func DumperFromDir(tool, dir string) (*Dumper, error) {
	name := tool + ":" + dir
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", name)
	}
	paths := map[target.Target]string{}
	var version string
	for _, triple := range target.ToolTriples() {
		p := executableIn(abs, triple+"-"+tool)
		if p == "" {
			continue
		}
		for _, t := range target.ServedBy(triple) {
			paths[t] = p
		}
		version = p
	}
	if len(paths) == 0 {
		p := executableIn(abs, tool, filepath.Join("binutils", tool))
		if p == "" {
			return nil, fmt.Errorf("%s: no %s there (looked for <triple>-%s, %s, binutils/%s): %w", name, tool, tool, tool, tool, toolchain.ErrNotProvisioned)
		}
		targets := target.All
		if tool == "objdump" {
			if targets, err = objdumpTargets(p); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		for _, t := range targets {
			paths[t] = p
		}
		version = p
	}
	v, err := toolchain.ToolVersion(version)
	if err != nil {
		return nil, fmt.Errorf("%s: %s --version: %w", name, version, err)
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return nil, fmt.Errorf("%s: %s --version printed nothing", name, version)
	}
	return newDumperAt(name, tool, f[len(f)-1], "a build of one's own in "+abs, paths), nil
}

// objdumpTargets reads the targets objdump at path reads from the
// "supported targets" line of its --help.
func objdumpTargets(path string) ([]target.Target, error) {
	out, _ := exec.Command(path, "--help").CombinedOutput()
	var ts []target.Target
	for _, line := range strings.Split(string(out), "\n") {
		_, list, ok := strings.Cut(line, "supported targets:")
		if !ok {
			continue
		}
		names := strings.Fields(list)
		for _, t := range target.All {
			if slices.Contains(names, t.BFDName()) && !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%s --help lists none of sfconform's targets among its supported targets", path)
	}
	return ts, nil
}

// executableIn returns the first of names (relative to dir) that is an
// executable file, or "".
func executableIn(dir string, names ...string) string {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
