package toolchain

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// FromDir finds GNU as and ld in a directory of one's own: a binutils
// developer's build tree (gas/as-new and ld/ld-new under it, or as-new and
// ld-new in it) or a directory of installed programs (as and ld,
// <triple>-as and <triple>-ld). It returns one Toolchain per target those
// programs assemble for, each called "gas:<dir>", with its SFrameVersion
// measured like a provisioned one's. objdump and readelf are not needed
// and may be absent.
//
// A build configured for one target (--target=aarch64-linux-gnu) serves
// that target (and AArch64 both ways round, with -EB or -EL); the triples
// come from "as --version" ("configured for a target of ..."). A directory
// with <triple>-prefixed programs serves each triple present.
//
// The probe's result is cached in the user's cache directory, never in
// the build tree, and a rebuilt as-new (new size or time) is probed again.
func FromDir(dir string) ([]Toolchain, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("gas:%s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("gas:%s: not a directory", dir)
	}
	name := "gas:" + dir
	var out []Toolchain
	var errs []error
	add := func(as, ld, triple string, tcs []Toolchain) {
		for _, t := range tcs {
			t.Name, t.Triple, t.AS, t.LD = name, triple, as, ld
			if o := executable(abs, triple+"-objdump", "objdump", "binutils/objdump"); o != "" {
				t.Objdump = o
			}
			if r := executable(abs, triple+"-readelf", "readelf", "binutils/readelf"); r != "" {
				t.Readelf = r
			}
			if v, err := ToolVersion(as); err == nil {
				t.Version = lastField(v)
			}
			if err := (&t).probe(); err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, t)
		}
	}
	// <triple>-as and <triple>-ld, as an installed cross toolchain has.
	for _, triple := range target.ToolTriples() {
		as, ld := executable(abs, triple+"-as"), executable(abs, triple+"-ld")
		if as != "" && ld != "" {
			add(as, ld, triple, targetsOf(triple))
		}
	}
	// as-new and ld-new of a build tree, or plain as and ld: the target is
	// the one the assembler was configured for.
	if len(out) == 0 && len(errs) == 0 {
		as := executable(abs, "as-new", "gas/as-new", "as")
		ld := executable(abs, "ld-new", "ld/ld-new", "ld")
		switch {
		case as == "" && ld == "":
			return nil, fmt.Errorf("gas:%s: no assembler and linker there (looked for <triple>-as, as-new, gas/as-new, as and the same for ld): %w", dir, ErrNotProvisioned)
		case as == "":
			return nil, fmt.Errorf("gas:%s: %s is there but no assembler (as-new, gas/as-new, as): %w", dir, ld, ErrNotProvisioned)
		case ld == "":
			return nil, fmt.Errorf("gas:%s: %s is there but no linker (ld-new, ld/ld-new, ld): %w", dir, as, ErrNotProvisioned)
		}
		configured, err := configuredTarget(as)
		if err != nil {
			return nil, fmt.Errorf("gas:%s: %w", dir, err)
		}
		triple := tripleOf(configured)
		if triple == "" {
			return nil, fmt.Errorf("gas:%s: %s assembles for %s, none of sfconform's targets (%s)", dir, as, configured, strings.Join(targetNames(), ", "))
		}
		tcs := targetsOf(triple)
		if strings.HasPrefix(configured, "aarch64_be") {
			// A big-endian build defaults to big-endian: the little-endian
			// target needs -EL.
			tcs[0].ASFlags, tcs[0].LDFlags = []string{"-EL"}, []string{"-EL"}
		}
		add(as, ld, triple, tcs)
	}
	if len(out) == 0 {
		return nil, errors.Join(append([]error{fmt.Errorf("gas:%s: no usable toolchain", dir)}, errs...)...)
	}
	return out, errors.Join(errs...)
}

// executable returns the first of names (relative to dir) that is an
// executable file, or "".
func executable(dir string, names ...string) string {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

var configuredRE = regexp.MustCompile("configured for a target of [`'\"]?([^`'\"\\s]+)")

// configuredTarget reads the target triple an assembler was configured for
// from its --version text.
func configuredTarget(as string) (string, error) {
	r, err := run(as, "--version")
	if err != nil {
		return "", err
	}
	m := configuredRE.FindStringSubmatch(r.Output)
	if m == nil {
		return "", fmt.Errorf("%s --version does not say which target it was configured for:\n%s", as, r.Output)
	}
	return m[1], nil
}

// tripleOf maps a configured triple (x86_64-pc-linux-gnu, aarch64_be-unknown-linux-gnu)
// to the Debian triple of the targets it serves, or "".
func tripleOf(configured string) string {
	t, err := target.ParseTriple(configured)
	if err != nil {
		return ""
	}
	return t.ToolTriple()
}

func lastField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

func targetNames() []string {
	var out []string
	for _, t := range target.All {
		out = append(out, t.Name())
	}
	return out
}
