package toolchain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// DefaultCacheDir is where ci/setup.sh provisions toolchains unless
// CacheEnv says otherwise.
const DefaultCacheDir = "/var/cache/sfconform"

// CacheEnv names the environment variable that moves the cache directory.
const CacheEnv = "SFCONFORM_CACHE"

// ErrNotProvisioned is wrapped by every error about a toolchain that is not
// in the cache directory.
var ErrNotProvisioned = errors.New("toolchain not provisioned (run 'make setup')")

// Toolchain is one GNU binutils version for one target.
type Toolchain struct {
	// Name is what producers and labels call it: "gas-" and the release
	// series (Series), so a moving Debian suite (sid's snapshots) keeps its
	// name from one snapshot to the next: "gas-2.44", "gas-2.47". A
	// toolchain in a directory of one's own (FromDir) is "gas:<dir>".
	Name    string
	Version string // as "as --version" reports it: "2.44", "2.47.50.20261021"
	Suite   string // the Debian suite it came from: bookworm, trixie, sid; "" for FromDir
	// Package is the exact Debian package version it was installed from
	// (toolchain.conf's package=, e.g. "2.47.50.20261021-1"); "" for a
	// toolchain not from Debian's archive (FromDir).
	Package       string
	Target        target.Target // the target it assembles for
	Triple        string        // GNU triple of the tools: x86_64-linux-gnu, aarch64-linux-gnu, s390x-linux-gnu
	AS            string        // paths of the tools
	LD            string
	Objdump       string
	Readelf       string
	SFrameVersion int      // what "as --gsframe" emits for Target; 0 if it cannot
	ASFlags       []string // flags as needs for Target (-EB for aarch64_be)
	LDFlags       []string // flags ld needs for Target

	dir      string // toolchains/binutils-<version>; "" for FromDir
	confName string // the name toolchain.conf gives it ("gas-2.47.50"), also accepted by Find
	noSFWhy  string // the assembler's complaint when SFrameVersion is 0
}

// SFrameUnsupportedReason is the assembler's own message when
// SFrameVersion is 0, empty otherwise.
func (t Toolchain) SFrameUnsupportedReason() string { return t.noSFWhy }

// CacheDir is the directory ci/setup.sh provisions into: $SFCONFORM_CACHE
// or DefaultCacheDir.
func CacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	return DefaultCacheDir
}

// targetsOf maps a GNU triple to the targets it serves, with the flags each
// one needs.
func targetsOf(triple string) []Toolchain {
	var out []Toolchain
	for _, t := range target.ServedBy(triple) {
		out = append(out, Toolchain{Target: t, ASFlags: t.ToolFlags(), LDFlags: t.ToolFlags()})
	}
	return out
}

// conf is one toolchain.conf as ci/setup.sh writes it.
type conf struct {
	path    string
	name    string
	version string
	suite   string
	pkg     string
	triples []string
}

// readConf parses a toolchain.conf (ReadConf) and checks its keys.
func readConf(path string) (conf, error) {
	kv, err := ReadConf(path)
	if err != nil {
		return conf{}, err
	}
	c := conf{path: path, name: kv["name"], version: kv["version"], suite: kv["suite"], pkg: kv["package"], triples: strings.Fields(kv["triples"])}
	for _, req := range []struct{ key, value string }{{"name", c.name}, {"version", c.version}, {"suite", c.suite}} {
		if req.value == "" {
			return conf{}, fmt.Errorf("%s: no %s= line", path, req.key)
		}
	}
	if len(c.triples) == 0 {
		return conf{}, fmt.Errorf("%s: no triples= line", path)
	}
	return c, nil
}

// load lists every (toolchain x target) the cache directory describes,
// without probing the assemblers. Toolchains come in version order.
func load() ([]Toolchain, error) {
	root := filepath.Join(CacheDir(), "toolchains")
	confs, err := filepath.Glob(filepath.Join(root, "binutils-*", "toolchain.conf"))
	if err != nil {
		return nil, err
	}
	if len(confs) == 0 {
		return nil, NotProvisioned(SetupBinutils, "no GNU toolchains under %s", root)
	}
	var all []Toolchain
	var errs []error
	for _, path := range confs {
		c, err := readConf(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ts, terrs := c.toolchains(path, "gas-"+Series(c.version), c.pkg, SetupBinutils)
		all, errs = append(all, ts...), append(errs, terrs...)
	}
	slices.SortStableFunc(all, func(a, b Toolchain) int {
		if c := CompareVersions(a.Version, b.Version); c != 0 {
			return c
		}
		return slices.Index(target.All, a.Target) - slices.Index(target.All, b.Target)
	})
	return all, errors.Join(errs...)
}

func (t Toolchain) missingTools() []string {
	var missing []string
	for _, p := range []string{t.AS, t.LD, t.Objdump, t.Readelf} {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	return missing
}

// All returns every provisioned (toolchain x target), in version and then
// target order, each with its measured SFrameVersion. A toolchain that is
// incomplete or whose probe fails is left out and named in the error, so
// the result can be non-empty together with a non-nil error. With nothing
// provisioned, the error wraps ErrNotProvisioned.
func All() ([]Toolchain, error) {
	all, err := load()
	errs := []error{err}
	out := all[:0]
	for _, t := range all {
		if perr := (&t).probe(); perr != nil {
			errs = append(errs, perr)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// Find returns the toolchain called name for target. name is a Toolchain's
// Name ("gas-2.47"), "gas-" followed by its full Version
// ("gas-2.47.50.20261021"), the name its toolchain.conf gives it
// ("gas-2.47.50"), or "gas-" followed by its Debian suite ("gas-sid").
func Find(name string, tg target.Target) (Toolchain, error) {
	all, loadErr := load()
	var have []string
	for _, t := range all {
		if !slices.Contains(have, t.Name) {
			have = append(have, t.Name)
		}
		if t.Target != tg || !t.matches(name) {
			continue
		}
		if err := (&t).probe(); err != nil {
			return Toolchain{}, err
		}
		return t, nil
	}
	msg := fmt.Sprintf("toolchain %s for %s is not in %s", name, tg.Name(), filepath.Join(CacheDir(), "toolchains"))
	if len(have) > 0 {
		msg += " (provisioned: " + strings.Join(have, ", ") + ")"
	}
	if loadErr != nil && !errors.Is(loadErr, ErrNotProvisioned) {
		return Toolchain{}, fmt.Errorf("%s: %w; also: %v", msg, ErrNotProvisioned, loadErr)
	}
	return Toolchain{}, fmt.Errorf("%s: %w", msg, ErrNotProvisioned)
}

func (t Toolchain) matches(name string) bool {
	return name == t.Name || name == "gas-"+t.Version || (t.confName != "" && name == t.confName) ||
		(t.Suite != "" && name == "gas-"+t.Suite)
}

// Series is the release series of a binutils version: its first two
// numbers. Snapshots of one development cycle (2.47.50.20261021,
// 2.47.50.20261107) and the release they lead to share nothing else
// stable, so names and expected deviations key on the series.
func Series(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}

// Names lists the provisioned toolchains' names (gas-<series>), oldest
// first, without running anything: what a registry of producers offers.
func Names() ([]string, error) {
	all, err := load()
	var out []string
	for _, t := range all {
		if !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out, err
}

// toolchains are the toolchains the conf file at path describes, one per
// target its triples serve, called name with package pkg; a tool missing
// from the directory is a NotProvisionedError naming setup step step.
func (c conf) toolchains(path, name, pkg string, step int) ([]Toolchain, []error) {
	var out []Toolchain
	var errs []error
	dir := filepath.Dir(path)
	for _, triple := range c.triples {
		targets := targetsOf(triple)
		if targets == nil {
			errs = append(errs, fmt.Errorf("%s: unknown triple %q", path, triple))
			continue
		}
		bin := filepath.Join(dir, "bin", triple+"-")
		for _, t := range targets {
			t.Name, t.Version, t.Suite, t.Triple = name, c.version, c.suite, triple
			t.AS, t.LD, t.Objdump, t.Readelf = bin+"as", bin+"ld", bin+"objdump", bin+"readelf"
			t.dir, t.Package, t.confName = dir, pkg, c.name
			if missing := t.missingTools(); len(missing) > 0 {
				errs = append(errs, NotProvisioned(step, "%s for %s: missing %s", t.Name, t.Target.Name(), strings.Join(missing, ", ")))
				continue
			}
			out = append(out, t)
		}
	}
	return out, errs
}
