// Package packages builds Debian source packages as a distribution that
// turns SFrame on would: each package's upstream build system (configure,
// cmake, its own Makefile; not dpkg-buildpackage) run with dpkg-buildflags'
// CFLAGS, CXXFLAGS, CPPFLAGS and LDFLAGS for the target's Debian
// architecture plus -Wa,--gsframe, and with the assembler and linker of
// one GNU binutils series (compiler drivers that pass -B to a directory
// holding that series' as and ld). Every ELF file the build makes
// (executables, shared libraries, objects, static archives' members) goes
// through sfconform check (package check), and the sizes of .sframe,
// .eh_frame and .eh_frame_hdr are recorded.
//
// The packages are Recipes; ci/packages.sh fetches their sources
// (apt-get source from Debian bookworm, through setup's private deb-src
// state). A build is one package for one target, binutils series and
// optimisation level (Debian's -O2, or one of OptLevels in its place). Its
// result (result.json) and log (build.log) stay in the campaign directory,
// which makes the campaign resumable per build; Markdown renders every
// stored result (docs/packages.md), with the sizes per target, series,
// level and package, and what the dynamic check ran of the builds checked
// with it.
//
// A campaign too large for one machine runs as shards (ShardGroups x
// targets in CI): each run's results are a Shard (JSON), and Merge joins
// the shards into the results one run over all of them gives, refusing a
// build two shards hold.
//
// The SFrame format: https://sourceware.org/binutils/docs/sframe-spec.html;
// dpkg-buildflags(1) for the flags.
package packages
