package realcode

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sfconform/sfconform/toolchain"
)

// Base is one C code base: a Debian source package and the files of it
// that compile one by one, without running its configure or build system.
type Base struct {
	Name    string // what the campaign calls it: zlib, lua, bzip2
	Package string // the Debian source package ci/setup.sh fetches
	// Library are the .c files (relative to the source tree) of the code
	// itself; Main those that add a main function, for the executables
	// (-static, -pie). A relocatable link (-r) takes both.
	Library []string
	Main    []string
	Include []string // -I directories relative to the source tree
	Defines []string // -D flags, without the -D
	Libs    []string // libraries an executable needs (-lm)
	// Headers are headers the build system would generate, by name, with
	// their text; %s in the text is the target's GNU triple. They go in
	// a directory of their own on the include path.
	Headers map[string]string
}

// Bases are the code bases the campaign knows, smallest first.
var Bases = []Base{
	{
		Name: "zlib", Package: "zlib",
		Library: []string{"adler32.c", "compress.c", "crc32.c", "deflate.c", "gzclose.c", "gzlib.c", "gzread.c",
			"gzwrite.c", "infback.c", "inffast.c", "inflate.c", "inftrees.c", "trees.c", "uncompr.c", "zutil.c"},
		Main:    []string{"test/example.c"},
		Include: []string{"."},
		Defines: []string{"HAVE_HIDDEN"},
	},
	{
		Name: "bzip2", Package: "bzip2",
		Library: []string{"blocksort.c", "huffman.c", "crctable.c", "randtable.c", "compress.c", "decompress.c", "bzlib.c"},
		Main:    []string{"bzip2.c"},
		Include: []string{"."},
		Defines: []string{"_FILE_OFFSET_BITS=64"},
	},
	{
		Name: "lua", Package: "lua5.4",
		Library: []string{"src/lapi.c", "src/lcode.c", "src/lctype.c", "src/ldebug.c", "src/ldo.c", "src/ldump.c",
			"src/lfunc.c", "src/lgc.c", "src/llex.c", "src/lmem.c", "src/lobject.c", "src/lopcodes.c", "src/lparser.c",
			"src/lstate.c", "src/lstring.c", "src/ltable.c", "src/ltm.c", "src/lundump.c", "src/lvm.c", "src/lzio.c",
			"src/lauxlib.c", "src/lbaselib.c", "src/lcorolib.c", "src/ldblib.c", "src/liolib.c", "src/lmathlib.c",
			"src/loadlib.c", "src/loslib.c", "src/lstrlib.c", "src/ltablib.c", "src/lutf8lib.c", "src/linit.c"},
		Main:    []string{"src/lua.c"},
		Include: []string{"src"},
		Defines: []string{"LUA_USE_POSIX"},
		Libs:    []string{"-lm"},
		// Debian's luaconf.h takes the multiarch triple from a header its
		// build generates.
		Headers: map[string]string{"lua5.4-deb-multiarch.h": "#define DEB_HOST_MULTIARCH \"%s\"\n"},
	},
}

// FindBase returns the code base called name.
func FindBase(name string) (Base, error) {
	var names []string
	for _, b := range Bases {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Base{}, fmt.Errorf("no code base %q (have %s)", name, strings.Join(names, ", "))
}

// Source is a code base's unpacked source tree, as ci/setup.sh step 8
// records it in $SFCONFORM_CACHE/stamps/src-<package>.
type Source struct {
	Base    Base
	Dir     string
	Version string // the Debian source package's version
	Suite   string
}

// Locate finds the unpacked source of b; an error wrapping
// toolchain.ErrNotProvisioned when setup has not fetched it.
func Locate(b Base) (Source, error) {
	stamp := filepath.Join(toolchain.CacheDir(), "stamps", "src-"+b.Package)
	f, err := os.Open(stamp)
	if err != nil {
		return Source{}, toolchain.NotProvisioned(toolchain.SetupRealCode, "code base %s: source package %s not fetched (%v)",
			b.Name, b.Package, err)
	}
	defer f.Close()
	s := Source{Base: b}
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
	for _, file := range append(append([]string(nil), b.Library...), b.Main...) {
		if _, err := os.Stat(filepath.Join(s.Dir, file)); err != nil {
			return Source{}, fmt.Errorf("code base %s: %s %s (from %s) has no %s: %w", b.Name, b.Package, s.Version, stamp, file, err)
		}
	}
	return s, nil
}
