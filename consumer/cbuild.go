package consumer

import (
	"crypto/sha256"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// The C consumers' sources, every folder of this one (cprotocol and one
// per C consumer: a new consumer's folder is embedded without a line
// here): ci/setup.sh compiles them into the cache directory, under a name
// derived from their content, so that a binary built from other sources
// (another branch sharing the cache) is never taken for this one.
// The glibc consumer's compile lines (glibc/build.sh) are part of its
// sources: a change to how it is compiled gives it a new name too.
// TestSourceHashIsSetups holds the patterns to every file on disk.
//
//go:embed */*.c */*.h */*/*.h */*/*/*/*.h glibc/build.sh
var cSources embed.FS

// SourceHash is the content hash of the C sources a consumer is built
// from: its own folder and cprotocol. ci/setup.sh computes the same value
// as
//
//	cd consumer && find cprotocol DIR -type f | LC_ALL=C sort | xargs sha256sum | sha256sum
//
// and keeps the first 16 hex digits.
func SourceHash(dir string) (string, error) {
	var paths []string
	for _, root := range []string{"cprotocol", dir} {
		err := fs.WalkDir(cSources, root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			return "", err
		}
	}
	sort.Strings(paths)
	var list strings.Builder
	for _, p := range paths {
		b, err := cSources.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&list, "%x  %s\n", sha256.Sum256(b), p)
	}
	return fmt.Sprintf("%x", sha256.Sum256([]byte(list.String())))[:16], nil
}

// builtDir is where setup puts the consumer built from dir's sources:
// $SFCONFORM_CACHE/consumers/PREFIX-HASH, PREFIX being dir for the
// consumers setup builds (libsframe-src for the one ci/binutils-src.sh
// builds from the same sources).
func builtDir(dir, prefix string) (string, error) {
	h, err := SourceHash(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(toolchain.CacheDir(), "consumers", prefix+"-"+h), nil
}

// built is a C consumer setup has built: its binary and what
// consumer.conf, written next to it by ci/setup.sh, says it was built
// against (suite=, package=, version=).
type built struct {
	bin  string
	conf map[string]string
}

// builtBinary finds the binary of the C consumer built from dir's sources
// and reads its consumer.conf (the only place that file is read), or
// returns a *toolchain.NotProvisionedError naming step.
func builtBinary(consumer, dir, binary string, step int) (built, error) {
	return builtBinaryAt(consumer, dir, dir, binary, step)
}

// builtBinaryAt is builtBinary for a consumer built from dir's sources
// into consumers/PREFIX-HASH.
func builtBinaryAt(consumer, dir, prefix, binary string, step int) (built, error) {
	d, err := builtDir(dir, prefix)
	if err != nil {
		return built{}, err
	}
	p := filepath.Join(d, binary)
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		return built{}, toolchain.NotProvisioned(step, "consumer %s is not built (no %s)", consumer, p)
	}
	conf, err := toolchain.ReadConf(filepath.Join(d, "consumer.conf"))
	if err != nil {
		return built{}, toolchain.NotProvisioned(step, "consumer %s: %v", consumer, err)
	}
	return built{bin: p, conf: conf}, nil
}

// version is the exact version of a C consumer wrapping library, built
// from consumer/DIR: the library's version and Debian package.
func (b built) version(library, dir string) string {
	return fmt.Sprintf("%s %s (Debian %s %s), through sfconform's consumer/%s",
		library, b.conf["version"], b.conf["suite"], b.conf["package"], dir)
}
