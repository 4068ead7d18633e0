package consumer

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// NewLibsframeDir is the consumer libsframe:DIR: consumer/libsframe
// compiled with the host's gcc against the libsframe of a binutils build
// of one's own. DIR is a build tree (DIR/libsframe/.libs/libsframe.a, the
// headers from the source tree its libsframe/Makefile names as srcdir) or
// an installed prefix (DIR/lib/libsframe.a and DIR/include/sframe-api.h).
//
// The program is compiled once per content of the library and of the
// consumer's sources, into the user's cache directory (never into DIR);
// a rebuilt libsframe.a is compiled against again.
func NewLibsframeDir(dir string) (*Libsframe, error) {
	name := "libsframe:" + dir
	lib, include, version, err := findLibsframe(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	bin, err := compileLibsframe(lib, include, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	x := NewExec(name, "exec "+toolchain.ShellQuote(bin))
	x.SetGiveUpAfter(0)
	return &Libsframe{Exec: x, version: fmt.Sprintf("libsframe %s (%s, a build of one's own), through sfconform's consumer/libsframe", version, lib)}, nil
}

// findLibsframe finds the static library, the directory of sframe-api.h
// and the version (the build's libsframe/config.h PACKAGE_VERSION, "" when
// it does not say) under dir.
func findLibsframe(dir string) (lib, include, version string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", "", err
	}
	if st, err := os.Stat(abs); err != nil {
		return "", "", "", err
	} else if !st.IsDir() {
		return "", "", "", fmt.Errorf("not a directory")
	}
	for _, p := range []string{"libsframe/.libs/libsframe.a", ".libs/libsframe.a", "lib/libsframe.a", "libsframe.a"} {
		if st, err := os.Stat(filepath.Join(abs, p)); err == nil && !st.IsDir() {
			lib = filepath.Join(abs, p)
			break
		}
	}
	if lib == "" {
		return "", "", "", fmt.Errorf("no libsframe.a there (looked for libsframe/.libs/libsframe.a, .libs/libsframe.a, lib/libsframe.a, libsframe.a): %w", toolchain.ErrNotProvisioned)
	}
	// The build directory of libsframe: its Makefile names the source
	// directory, whose ../include holds sframe-api.h.
	libDir := filepath.Dir(lib)
	if filepath.Base(libDir) == ".libs" {
		libDir = filepath.Dir(libDir)
	}
	candidates := []string{filepath.Join(abs, "include"), filepath.Join(libDir, "include")}
	if src := makeVar(filepath.Join(libDir, "Makefile"), "srcdir"); src != "" {
		if !filepath.IsAbs(src) {
			src = filepath.Join(libDir, src)
		}
		candidates = append(candidates, filepath.Join(src, "..", "include"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(c, "sframe-api.h")); err == nil {
			include = c
			break
		}
	}
	if include == "" {
		return "", "", "", fmt.Errorf("%s found, but no sframe-api.h (looked in %s)", lib, strings.Join(candidates, ", "))
	}
	version = configVersion(filepath.Join(libDir, "config.h"))
	if version == "" {
		version = "of " + lib
	}
	return lib, include, version, nil
}

// makeVar is the value of "name = value" in a Makefile, "" when absent.
func makeVar(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// configVersion is PACKAGE_VERSION of a config.h, "" when absent.
func configVersion(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "#define PACKAGE_VERSION "); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// compileLibsframe compiles consumer/libsframe (embedded) against lib and
// include, once per content of both, and returns the program's path.
func compileLibsframe(lib, include, version string) (string, error) {
	h := sha256.New()
	src, err := SourceHash("libsframe")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\n%s\n%s\n", src, include, version)
	f, err := os.Open(lib)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "sfconform", "libsframe-dir", fmt.Sprintf("%x", h.Sum(nil))[:16])
	bin := filepath.Join(out, "sfconform-libsframe")
	if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
		return bin, nil
	}
	staging, err := os.MkdirTemp(filepath.Dir(out), ".staging-") // parent made below
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return "", err
		}
		if staging, err = os.MkdirTemp(filepath.Dir(out), ".staging-"); err != nil {
			return "", err
		}
	}
	defer os.RemoveAll(staging)
	// The embedded sources, written out as they are in consumer/.
	err = fs.WalkDir(cSources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasPrefix(p, "libsframe/") && !strings.HasPrefix(p, "cprotocol/") {
			return nil
		}
		b, err := cSources.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(staging, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(staging, p), b, 0o644)
	})
	if err != nil {
		return "", err
	}
	cmd := exec.Command("gcc", "-O2", "-g", "-Wall", "-Wextra", "-std=gnu11",
		"-I", filepath.Join(staging, "libsframe", "include"), "-I", include,
		fmt.Sprintf("-DLIBSFRAME_VERSION=%q", version),
		filepath.Join(staging, "libsframe", "libsframe.c"), filepath.Join(staging, "cprotocol", "protocol.c"), lib,
		"-o", filepath.Join(staging, "sfconform-libsframe"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("compiling consumer/libsframe against %s: %s: %w\n%s", lib, toolchain.ShellJoin(cmd.Args), err, msg)
	}
	if err := os.RemoveAll(out); err != nil {
		return "", err
	}
	if err := os.Rename(staging, out); err != nil {
		return "", err
	}
	return bin, nil
}
