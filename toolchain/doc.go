// Package toolchain finds the GNU toolchains that ci/setup.sh provisioned
// and says which SFrame version each one's assembler emits.
//
// ci/setup.sh (run by "make setup") installs GNU binutils for the triples
// x86_64-linux-gnu, aarch64-linux-gnu and s390x-linux-gnu in three versions:
// the host's own (Debian bookworm, 2.40), Debian trixie's (2.44) and Debian
// sid's (a 2.4x.50 snapshot). Every version gets the same layout under the
// cache directory (CacheDir, default /var/cache/sfconform, or
// $SFCONFORM_CACHE):
//
//	toolchains/binutils-<version>/toolchain.conf     name, version, suite, triples
//	toolchains/binutils-<version>/bin/<triple>-as    and -ld, -objdump, -readelf
//
// The newer versions need a newer C library than the host's, so their
// wrappers run the real programs through the loader of a private root
// holding that suite's packages (roots/<suite>). Sid's llvm-mc, when
// provisioned, sits in toolchains/llvm-<major>/bin/llvm-mc with llvm.conf
// beside it; LLVM lists it, as one Toolchain per target whose AS is llvm-mc.
//
// A Toolchain is one binutils version for one target (target.Target). AArch64
// big-endian uses the aarch64 triple with -EB for both as and ld. Its Name
// is "gas-" and the release series ("gas-2.47" for sid's 2.47.50.20261021
// snapshot): sid moves, and a name that carried the snapshot date would
// change with every setup. Package is the exact Debian package version,
// which results record. FromDir finds the same tools in a directory of
// one's own (a binutils build tree with as-new and ld-new), named
// "gas:<dir>".
//
// Assemble and Link run the tools the way producers and tests need them:
// one object per source file, linked at fixed addresses, each run returned
// with its command line and whatever the tool printed.
//
// SFrameVersion is measured, not assumed: the assembler is run with
// --gsframe on a one-function file and the version byte of the resulting
// .sframe section is read (SFrame spec, section "SFrame Preamble": magic
// 0xdee2 in the section's byte order, then the version byte;
// https://sourceware.org/binutils/docs/sframe-spec.html). The answer is cached next to the toolchain in
// sframe-probe.<target>, so only the first call after setup pays for it.
// GNU as emits version 1 (2.40), 2 (2.41 to 2.45) and 3 (2.46 and later);
// before version 3 it refuses --gsframe for s390x, which shows as
// SFrameVersion 0.
//
// # Security
//
// The package runs the programs named in the cache directory: only trust a
// cache directory that root (or you) wrote.
package toolchain
