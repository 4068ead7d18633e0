package packages

import (
	"fmt"
	"slices"
	"strings"
)

// Build systems a Recipe runs.
const (
	Configure = "configure" // ./configure (autoconf's or the package's own), then make
	CMake     = "cmake"     // cmake -DCMAKE_BUILD_TYPE=None, then make
	Make      = "make"      // the package's own Makefile, variables on the command line
)

// Recipe is how one Debian source package is built with its upstream
// build system: what a distribution's packaging would run, without
// dpkg-buildpackage.
type Recipe struct {
	Package string // the Debian source package (ci/packages.sh fetches it)
	CXX     bool   // C++: the package compiles C++ (with g++)
	// Exceptions says the C++ code throws and catches (and instantiates
	// templates): what the campaign counts as "C++ with exceptions".
	Exceptions bool
	System     string
	Dir        string // the directory the build system runs in, relative to the source tree ("": its top)
	// Args are configure's or cmake's arguments (after the ones every
	// build gets), or for Make the make targets and variable assignments;
	// %[1]s in them is replaced by the compiler flags (CFLAGS), %[2]s by
	// CPPFLAGS, %[3]s by LDFLAGS, %[4]s by the cc wrapper.
	Args []string
	// Env are variables the packaging exports (same substitutions as
	// Args), after the flags.
	Env []string
	// Autoreconf: run autoreconf -fi before configure (the source has
	// only configure.ac), as dh_autoreconf does.
	Autoreconf bool
	// Opt replaces Debian's -O2 when the package's packaging builds at
	// another level ("" keeps -O2).
	Opt string
	// Quick are the make targets of the quick build (the package test):
	// one library, in seconds.
	Quick []string
	// NoCross says why the package does not cross-build ("": it does).
	NoCross string
	Note    string // what of the package is built, when not everything
}

// Recipes are the packages of the campaign, C first, smallest first in
// each language. ci/packages.sh's DEFAULT_SOURCES lists the same packages.
var Recipes = []Recipe{
	{Package: "zlib", System: Configure, Quick: []string{"libz.a"}},
	{Package: "bzip2", System: Make, Args: []string{"CC=%[4]s", "CFLAGS=%[1]s -D_FILE_OFFSET_BITS=64 -Wall -Winline", "CPPFLAGS=%[2]s", "LDFLAGS=%[3]s",
		"libbz2.a", "bzip2", "bzip2recover"}, Quick: []string{"libbz2.a"},
		Note: "the static library and the programs (Makefile); Debian's shared library comes from Makefile-libbz2_so, not built"},
	{Package: "cjson", System: CMake, Args: []string{"-DENABLE_CJSON_TEST=OFF", "-DENABLE_CJSON_UTILS=ON", "-DBUILD_SHARED_AND_STATIC_LIBS=ON",
		"-DENABLE_CUSTOM_COMPILER_FLAGS=OFF"}},
	// Debian's rules export CFLAGS, CPPFLAGS and LDFLAGS (the Makefiles
	// add to them) and give CC on the command line.
	{Package: "lz4", System: Make, Args: []string{"CC=%[4]s", "lib", "lz4"}, Env: []string{"CPPFLAGS=%[2]s -DLZ4F_PUBLISH_STATIC_FUNCTIONS"}},
	{Package: "lmdb", System: Make, Dir: "libraries/liblmdb", Args: []string{"CC=%[4]s", "OPT=%[1]s", "XCFLAGS=%[2]s", "LDFLAGS=%[3]s",
		"liblmdb.a", "liblmdb.so", "mdb_stat", "mdb_copy", "mdb_dump", "mdb_load"}, Note: "the library and the four tools, not the mtest programs"},
	// No generated configure in these: autoreconf first, as debhelper does.
	{Package: "libyaml", System: Configure, Autoreconf: true},
	{Package: "jansson", System: Configure, Autoreconf: true},
	// Debian's patch for CVE-2024-8176 tests XML_DTD == 1, which
	// configure defines and expat's CMake build leaves empty: configure.
	{Package: "expat", System: Configure, Autoreconf: true, Dir: "expat", Args: []string{"--without-docbook"}},
	{Package: "pcre2", System: Configure, Note: "8-bit library only (configure's default), without JIT"},
	{Package: "libzstd", System: CMake, Dir: "build/cmake", Args: []string{"-DZSTD_BUILD_STATIC=OFF", "-DZSTD_BUILD_SHARED=ON", "-DZSTD_BUILD_PROGRAMS=OFF", "-DZSTD_BUILD_TESTS=OFF"},
		Note: "the shared library only (CPU): Debian's packaging builds the static one and the programs too"},

	{Package: "tinyxml2", CXX: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-Dtinyxml2_BUILD_TESTING=OFF"}, Quick: []string{"tinyxml2"}},
	{Package: "double-conversion", CXX: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-DBUILD_TESTING=OFF"}},
	{Package: "snappy", CXX: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-DSNAPPY_BUILD_TESTS=OFF", "-DSNAPPY_BUILD_BENCHMARKS=OFF"},
		Note: "built with -fno-exceptions -fno-rtti (its CMakeLists.txt)"},
	{Package: "pugixml", CXX: true, Exceptions: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-DPUGIXML_BUILD_TESTS=OFF"}},
	{Package: "gflags", CXX: true, Exceptions: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-DBUILD_STATIC_LIBS=ON", "-DBUILD_TESTING=OFF"}},
	{Package: "libjsoncpp", CXX: true, Exceptions: true, System: CMake, Args: []string{"-DJSONCPP_WITH_TESTS=OFF", "-DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF",
		"-DBUILD_OBJECT_LIBS=OFF"}},
	{Package: "fmtlib", CXX: true, Exceptions: true, System: CMake, Args: []string{"-DBUILD_SHARED_LIBS=ON", "-DFMT_TEST=OFF", "-DFMT_DOC=OFF"}},
	{Package: "yaml-cpp", CXX: true, Exceptions: true, System: CMake, Args: []string{"-DYAML_BUILD_SHARED_LIBS=ON", "-DYAML_CPP_BUILD_TESTS=OFF",
		"-DYAML_CPP_BUILD_TOOLS=ON"}},
}

// FindRecipe returns the recipe of the Debian source package pkg.
func FindRecipe(pkg string) (Recipe, error) {
	var names []string
	for _, r := range Recipes {
		if r.Package == pkg {
			return r, nil
		}
		names = append(names, r.Package)
	}
	return Recipe{}, fmt.Errorf("no recipe for package %q (have %s)", pkg, strings.Join(names, ", "))
}

// Lang is "C" or "C++" (with "exceptions" when the code throws).
func (r Recipe) Lang() string {
	switch {
	case r.Exceptions:
		return "C++ (exceptions)"
	case r.CXX:
		return "C++"
	}
	return "C"
}

// ShardGroup is a set of recipes that one CI job builds for one target:
// the campaign's shards are the groups x the targets.
type ShardGroup struct {
	Name     string
	Packages []string
}

// ShardGroups split the recipes into groups of about the same build CPU
// (docs/packages.md's Build CPU table at -O2: some 80 s, 120 s and 130 s
// per series); every recipe is in exactly one.
var ShardGroups = []ShardGroup{
	{"c-small", []string{"zlib", "bzip2", "cjson", "lz4", "lmdb", "libyaml", "jansson"}},
	{"c-large", []string{"expat", "pcre2", "libzstd"}},
	{"c++", []string{"tinyxml2", "double-conversion", "snappy", "pugixml", "gflags", "libjsoncpp", "fmtlib", "yaml-cpp"}},
}

// FindShardGroup returns the packages of the shard group name.
func FindShardGroup(name string) ([]string, error) {
	var names []string
	for _, g := range ShardGroups {
		if g.Name == name {
			return g.Packages, nil
		}
		names = append(names, g.Name)
	}
	return nil, fmt.Errorf("no package group %q (have %s)", name, strings.Join(names, ", "))
}

// groupOf is the shard group of a package ("" when none has it).
func groupOf(pkg string) string {
	for _, g := range ShardGroups {
		if slices.Contains(g.Packages, pkg) {
			return g.Name
		}
	}
	return ""
}
