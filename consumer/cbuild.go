package consumer

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// The C consumers' sources: ci/setup.sh compiles them into the cache
// directory, under a name derived from their content, so that a binary
// built from other sources (another branch sharing the cache) is never
// taken for this one.
//
//go:embed cprotocol libsframe glibc
var cSources embed.FS

// ErrNotBuilt is wrapped by the error of a C consumer whose binary setup
// has not built (NotBuiltError says which setup step builds it).
var ErrNotBuilt = errors.New("consumer not built")

// NotBuiltError says that a C consumer's binary is missing.
type NotBuiltError struct {
	Consumer string
	Path     string
	Step     int // the ci/setup.sh step that builds it
}

func (e *NotBuiltError) Error() string {
	return fmt.Sprintf("consumer %s is not built (no %s): run 'make setup' (ci/setup.sh step %d builds it)", e.Consumer, e.Path, e.Step)
}

func (e *NotBuiltError) Unwrap() error { return ErrNotBuilt }

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
// $SFCONFORM_CACHE/consumers/DIR-HASH.
func builtDir(dir string) (string, error) {
	h, err := SourceHash(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(toolchain.CacheDir(), "consumers", dir+"-"+h), nil
}

// builtBinary returns the path of a C consumer's binary, or a
// *NotBuiltError.
func builtBinary(consumer, dir, binary string, step int) (string, error) {
	d, err := builtDir(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(d, binary)
	if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
		return "", &NotBuiltError{Consumer: consumer, Path: p, Step: step}
	}
	return p, nil
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
