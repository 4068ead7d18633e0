package consumer

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// sourceBuild is the build of 'make binutils-src', or the test ends as
// testenv says (a skip naming make binutils-src; a failure with
// SFCONFORM_REQUIRE_BINUTILS_SRC=1).
func sourceBuild(t *testing.T) toolchain.SourceBuild {
	t.Helper()
	b, err := toolchain.FindSourceBuild()
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The source build's consumers, by registry name and in the build-tree
// forms a binutils developer uses on their own tree, read what the
// builtin consumer reads: libsframe's walk unwinds the differential
// tables alike (its known PC-distance truncation declared), and the
// dumpers' rows are the section's at every byte of every function.
func TestSourceBuildConsumers(t *testing.T) {
	t.Parallel()
	b := sourceBuild(t)
	native := filepath.Join(b.Dir, "build", "x86_64-linux-gnu")
	names := Names()
	for _, n := range sourceBuildKinds {
		if !slices.Contains(names, n) {
			t.Errorf("consumer %s is not listed although %s is built", n, b.Dir)
		}
	}
	seed := testSeed(t)
	for _, name := range []string{"libsframe-src", "libsframe:" + native} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := builtC(t, func() (Consumer, error) { return New(name) })
			if v := Version(c); !strings.Contains(v, "libsframe") || v == name {
				t.Errorf("exact version %q", v)
			}
			for _, tg := range target.All {
				rnd := rand.New(rand.NewSource(seed + int64(tg)))
				same, total := 0, 0
				for table := 0; table < 5; table++ {
					img, fdes := diffTable(t, tg, 3, rnd)
					steps := diffSteps(tg, fdes, 100, rnd)
					s, _ := compareWithBuiltin(t, c, img, steps, farPC(img))
					same, total = same+s, total+len(steps)
				}
				if same == 0 {
					t.Errorf("%v: no state unwound alike (of %d)", tg, total)
				}
			}
		})
	}
	sections := testSections(t)
	for _, name := range []string{"objdump-src", "readelf-src", "objdump:" + native, "readelf:" + native, "objdump:" + filepath.Join(b.Dir, "bin")} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := New(name)
			if err != nil {
				t.Fatal(err)
			}
			d := c.(*Dumper)
			if v := Version(d); !strings.Contains(v, b.Version) {
				t.Errorf("exact version %q does not say %s", v, b.Version)
			}
			read := 0
			for _, s := range sections {
				if _, ok := d.paths[s.img.Target]; !ok || d.Supports(s.img.Target, s.version) != nil {
					continue
				}
				if err := d.Load(s.img); err != nil {
					t.Errorf("%s: %v", s.name, err)
					continue
				}
				if diffs := lookupsDiffer(t, d, s, nil); len(diffs) > 0 {
					t.Errorf("%s: rows differ from the section's:\n%s", s.name, strings.Join(diffs, "\n"))
				}
				read++
			}
			if read == 0 {
				t.Errorf("%s read no section", name)
			}
		})
	}
}

// The build-tree forms find their tools without a source build: scripts
// stand in for objdump and readelf.
func TestDumperFromDir(t *testing.T) {
	t.Parallel()
	script := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tree := t.TempDir()
	version := "echo 'GNU objdump (GNU Binutils) 2.47.50.20261128'\n"
	script(filepath.Join(tree, "binutils", "objdump"), `case $1 in --help) echo "objdump: supported targets: elf64-x86-64 elf32-i386 elf64-s390 pei-x86-64" ;; *) `+version+` ;; esac`+"\n")
	script(filepath.Join(tree, "binutils", "readelf"), version)
	d, err := DumperFromDir("objdump", tree)
	if err != nil {
		t.Fatal(err)
	}
	got := mapKeys(d.paths)
	slices.Sort(got)
	if !slices.Equal(got, []target.Target{target.X86_64, target.S390X}) {
		t.Errorf("objdump:DIR serves %v, want x86-64 and s390x (its supported targets)", got)
	}
	if d.version != "2.47.50.20261128" || d.series != "2.47" || d.Name() != "objdump:"+tree {
		t.Errorf("objdump:DIR: version %q series %q name %q", d.version, d.series, d.Name())
	}
	if d, err := DumperFromDir("readelf", tree); err != nil || len(d.paths) != len(target.All) {
		t.Errorf("readelf:DIR: %v, serves %d targets; want every target (readelf reads any ELF file)", err, len(d.paths))
	}
	installed := t.TempDir()
	script(filepath.Join(installed, "aarch64-linux-gnu-objdump"), version)
	if d, err := DumperFromDir("objdump", installed); err != nil || d.paths[target.AArch64BE] == "" || d.paths[target.X86_64] != "" {
		t.Errorf("objdump:DIR of <triple>-objdump: %v, %v", err, d)
	}
	if _, err := DumperFromDir("readelf", t.TempDir()); !errors.Is(err, toolchain.ErrNotProvisioned) || !strings.Contains(err.Error(), "binutils/readelf") {
		t.Errorf("readelf:<empty dir>: %v, want a not-provisioned error naming where it looked", err)
	}
	if _, err := New("objdump"); err == nil || !strings.Contains(err.Error(), "objdump:<dir>") {
		t.Errorf("objdump without a directory: %v", err)
	}
}

func mapKeys[K comparable, V any](m map[K]V) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	return out
}

// libsframe:DIR finds the library of a build tree and the headers of the
// source tree its Makefile names, and says what it did not find.
func TestFindLibsframe(t *testing.T) {
	t.Parallel()
	src, build := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := findLibsframe(build); !errors.Is(err, toolchain.ErrNotProvisioned) {
		t.Errorf("empty build tree: %v", err)
	}
	write(filepath.Join(build, "libsframe", ".libs", "libsframe.a"), "!<arch>\n")
	if _, _, _, err := findLibsframe(build); err == nil || !strings.Contains(err.Error(), "sframe-api.h") {
		t.Errorf("no headers: %v", err)
	}
	write(filepath.Join(src, "include", "sframe-api.h"), "")
	write(filepath.Join(build, "libsframe", "Makefile"), "VPATH = x\nsrcdir = "+filepath.Join(src, "libsframe")+"\n")
	write(filepath.Join(build, "libsframe", "config.h"), "#define PACKAGE_VERSION \"2.47.50\"\n")
	lib, inc, v, err := findLibsframe(build)
	if err != nil || lib != filepath.Join(build, "libsframe", ".libs", "libsframe.a") || filepath.Clean(inc) != filepath.Join(src, "include") || v != "2.47.50" {
		t.Errorf("findLibsframe = %q, %q, %q, %v", lib, inc, v, err)
	}
}

var _ = sframe.Version(0)
