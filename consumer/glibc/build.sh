# shellcheck shell=bash
# Sourced by ci/setup.sh (step 7) and ci/verify-fixes.sh (glibc patches):
# the one place that says how the glibc consumer is compiled from glibc's
# files, so that the consumer a patch is verified on is built exactly as
# the one setup provisions. It lives beside the consumer's C so that its
# source hash (consumer.SourceHash, setup's consumer_hash) covers it: a
# change to these lines rebuilds the consumer.

# AArch64's <sys/ucontext.h> as glibc's AArch64 uw-sigframe.h reads it:
# the cross toolchain's (package libc6-dev-arm64-cross, setup step 1).
AARCH64_UCONTEXT=/usr/aarch64-linux-gnu/include/sys/ucontext.h

# glibc_consumer_compile REPO SRC VER OUT [HOST]: compile the glibc
# consumer (REPO/consumer/glibc/glibc.c, its shim and cprotocol) with
# glibc's files in SRC (sysdeps/...), version string VER, into
# OUT/sfconform-glibc; the compilers' messages go to OUT/build.log, the
# objects are removed. HOST, when given, is searched for headers after the
# shim and before glibc's (a finding's stand-in for an arch header the
# host cannot compile). GLIBC_CONSUMER_NICE, when set, runs the compilers
# at that niceness. Exit status: the failing compiler's.
#
# glibc's files unmodified; our shim headers come first, x86-64's
# uw-sigframe.h before the generic one. sframe.c a second time with
# AArch64's uw-sigframe.h, its walk renamed, for AArch64 sections: the
# code it checks is little-endian AArch64's, and its <sys/ucontext.h>
# the AArch64 C library's (consumer/glibc/shim/aarch64).
glibc_consumer_compile() {
	local c="$1/consumer" src=$2 ver=$3 out=$4 host=${5:-} run=()
	[[ -n ${GLIBC_CONSUMER_NICE:-} ]] && run=(nice -n "$GLIBC_CONSUMER_NICE")
	local cflags=(-O2 -g -Wall -std=gnu11 -include "$c/glibc/shim/prelude.h" -I "$c/glibc/shim"
		${host:+-I "$host"} -I "$src/sysdeps/unix/sysv/linux/x86_64" -I "$src/sysdeps/generic")
	local a64flags=(-O2 -g -Wall -std=gnu11 -include "$c/glibc/shim/prelude.h" -I "$c/glibc/shim/aarch64"
		-I "$c/glibc/shim" ${host:+-I "$host"} -I "$src/sysdeps/unix/sysv/linux/aarch64" -I "$src/sysdeps/generic"
		-D__AARCH64EL__ -DSFCONFORM_AARCH64_UCONTEXT_H="\"$AARCH64_UCONTEXT\""
		-D__stacktrace_sframe=__stacktrace_sframe_aarch64 -D__getPC=__getPC_aarch64 -D__getSP=__getSP_aarch64)
	mkdir -p "$out"
	{
		"${run[@]}" gcc "${cflags[@]}" -c "$src/sysdeps/generic/sframe-read.c" -o "$out/sframe-read.o" &&
			"${run[@]}" gcc "${cflags[@]}" -c "$src/sysdeps/generic/sframe.c" -o "$out/sframe.o" &&
			"${run[@]}" gcc "${a64flags[@]}" -c "$src/sysdeps/generic/sframe.c" -o "$out/sframe-aarch64.o" &&
			"${run[@]}" gcc "${cflags[@]}" -DGLIBC_VERSION="\"$ver\"" -c "$c/glibc/glibc.c" -o "$out/glibc.o" &&
			"${run[@]}" gcc -O2 -g -Wall -std=gnu11 -c "$c/cprotocol/protocol.c" -o "$out/protocol.o" &&
			gcc "$out"/*.o -o "$out/sfconform-glibc"
	} 2>"$out/build.log"
	local rc=$?
	rm -f "$out"/*.o
	return "$rc"
}
