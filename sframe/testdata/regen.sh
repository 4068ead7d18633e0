#!/bin/sh
# regen.sh rebuilds the golden SFrame fixtures under gas-<tc>/ from the
# assembly sources in src/, with every GNU binutils it can find:
#
#   - each $SFCONFORM_TOOLCHAINS/binutils-<version>/bin/<triple>-{as,ld,objdump,readelf}
#     (default $SFCONFORM_CACHE/toolchains, else /var/cache/sfconform/toolchains,
#     as ci/setup.sh provisions them), and <triple>-objcopy if there; the
#     output directory is gas-<tc> after toolchain.conf's name=gas-<tc>
#   - the host's cross binutils (/usr/bin/<triple>-as etc.), unless a
#     toolchain directory already has the same version
#
# For every toolchain, target and source it writes
#
#   <name>.o.sframe       raw .sframe bytes of the relocatable object:
#                         relocations NOT applied, so (RELA targets) every
#                         function start field is 0 (see README.md)
#   <name>.o.objdump.txt  objdump --sframe of the object (or .err: objdump
#                         refused it, with its message)
#   <name>.sframe         raw .sframe bytes of the linked executable
#   <name>.sframe.addr    virtual address of that section, hex
#   <name>.objdump.txt    objdump --sframe of the executable
#   <name>.as.txt         assembler diagnostics, when there were any
#
# and per toolchain a VERSION file and a SUMMARY file (functions in the
# source vs FDEs gas emitted, per target and source). Only the part of the
# objdump output from "Contents of the SFrame section" on is kept, so no
# temporary path leaks into the files; running the script twice gives the
# same bytes.
#
# With the toolchain named gas-2.47.50 it also writes the benchmark section
# (bench/) and objdump's reading of the hand-written sections (handmade/,
# needs xxd).
#
# Usage: sh regen.sh            (from anywhere)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
toolchains=${SFCONFORM_TOOLCHAINS:-${SFCONFORM_CACHE:-/var/cache/sfconform}/toolchains}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

LC_ALL=C
export LC_ALL

# triple_of TARGET prints the GNU triple whose tools handle TARGET.
triple_of() {
	case $1 in
	x86-64) echo x86_64-linux-gnu ;;
	aarch64 | aarch64_be) echo aarch64-linux-gnu ;;
	s390x) echo s390x-linux-gnu ;;
	esac
}

# srcdir_of TARGET: both AArch64 byte orders assemble the same sources.
srcdir_of() {
	case $1 in
	aarch64_be) echo aarch64 ;;
	*) echo "$1" ;;
	esac
}

# endian_flag TARGET prints the flag as and ld need for the byte order.
endian_flag() {
	case $1 in
	aarch64_be) echo -EB ;;
	*) echo "" ;;
	esac
}

# sframe_field FILE FIELD prints the address, file offset or size (FIELD
# 2, 3 or 4 after the type) of .sframe in FILE, in hex with 0x, or
# nothing when FILE has no .sframe. Uses $readelf.
sframe_field() {
	"$readelf" -SW "$1" | awk -v k="$2" '{
		for (i = 1; i < NF; i++)
			if ($i == ".sframe") { print "0x" $(i + k); exit }
	}'
}

# extract FILE OUT copies the raw .sframe bytes of FILE to OUT: with the
# toolchain's objcopy when it has one, else by offset and size from
# readelf. Neither applies relocations.
extract() {
	if [ -x "$objcopy" ]; then
		"$objcopy" -O binary --only-section=.sframe "$1" "$2"
	else
		off=$(sframe_field "$1" 3)
		size=$(sframe_field "$1" 4)
		dd if="$1" of="$2" bs=1 skip=$((off)) count=$((size)) status=none
	fi
	chmod 644 "$2"
}

# sframe_dump OBJDUMP FILE OUT writes objdump --sframe from the section
# header on into OUT. When objdump fails (2.40 and 2.44 abort on an FRE
# that starts at the function's end) it writes objdump's message into
# OUT.err instead, so that the fixture records that the tool refused it.
sframe_dump() {
	rm -f "$3" "$3.err"
	if "$1" --sframe "$2" >"$work/objdump.out" 2>"$work/objdump.err"; then
		sed -n '/^Contents of the SFrame section/,$p' "$work/objdump.out" >"$3"
	else
		cp "$work/objdump.err" "$3.err"
	fi
}

# first_function SOURCE prints the first global symbol, the entry point.
first_function() {
	awk '$1 == ".globl" { print $2; exit }' "$1"
}

# build PREFIX OUT TARGET: assemble and link every source of TARGET with the
# tools PREFIXas, PREFIXld, ... and write the fixtures into OUT.
build() {
	prefix=$1 out=$2 target=$3
	as=${prefix}as ld=${prefix}ld objcopy=${prefix}objcopy objdump=${prefix}objdump readelf=${prefix}readelf
	flag=$(endian_flag "$target")
	src=$here/src/$(srcdir_of "$target")
	rm -rf "$out/$target"
	mkdir -p "$out/$target"
	for s in "$src"/*.s; do
		name=$(basename "$s" .s)
		case $name in
		pltlib) continue ;;
		esac
		d=$work/$target/$name
		rm -rf "$d"
		mkdir -p "$d"
		cp "$s" "$d/$name.s"
		functions=$(grep -c '^[[:space:]]*\.cfi_startproc' "$s" || true)
		# Assemble inside $d so diagnostics name the bare source file.
		if (cd "$d" && $as $flag --gsframe -o "$name.o" "$name.s" >as.txt 2>&1); then
			status=ok
		else
			status=rejected
		fi
		if [ -s "$d/as.txt" ]; then
			cp "$d/as.txt" "$out/$target/$name.as.txt"
		fi
		if [ $status = rejected ]; then
			printf '%s %s functions=%s fdes=- as=rejected\n' "$target" "$name" "$functions" >>"$out/SUMMARY"
			continue
		fi
		if [ -z "$(sframe_field "$d/$name.o" 2)" ]; then
			printf '%s %s functions=%s fdes=0 as=no-section\n' "$target" "$name" "$functions" >>"$out/SUMMARY"
			continue
		fi
		extract "$d/$name.o" "$out/$target/$name.o.sframe"
		sframe_dump "$objdump" "$d/$name.o" "$out/$target/$name.o.objdump.txt"
		fdes=$(awk '/Num FDEs:/ { print $3; exit }' "$out/$target/$name.o.objdump.txt" 2>/dev/null || echo "?")
		printf '%s %s functions=%s fdes=%s as=ok\n' "$target" "$name" "$functions" "$fdes" >>"$out/SUMMARY"

		# Link. Fixed addresses keep the fixtures stable.
		entry=$(first_function "$s")
		links="$name"
		if [ "$name" = plt ]; then
			(cd "$d" && cp "$src/pltlib.s" . &&
				$as $flag --gsframe -o pltlib.o pltlib.s &&
				"$ld" $flag -shared --no-warn-rwx-segments -o libplt.so pltlib.o)
			if [ "$target" = x86-64 ]; then
				links="plt plt_ibt"
			fi
		fi
		for link in $links; do
			extra=""
			case $link in
			plt) extra="-Ttext-segment=0x400000 libplt.so" ;;
			plt_ibt) extra="-Ttext-segment=0x400000 -z ibtplt libplt.so" ;;
			*) extra="-Ttext=0x401000" ;;
			esac
			# A subshell, so that the shell's report of a crashed ld
			# (2.40 and 2.44 abort on an FRE at a function's end) lands
			# in ld.txt too.
			if ! (cd "$d" && sh -c "\"\$@\" >ld.txt 2>&1" sh "$ld" $flag -e "$entry" --no-warn-rwx-segments -o "$link.exe" "$name.o" $extra >>ld.txt 2>&1); then
				printf '%s %s link failed:\n' "$target" "$link" >>"$out/SUMMARY"
				sed 's/^/  /' "$d/ld.txt" >>"$out/SUMMARY"
				continue
			fi
			addr=$(sframe_field "$d/$link.exe" 2)
			if [ -z "$addr" ]; then
				printf '%s %s linked without .sframe\n' "$target" "$link" >>"$out/SUMMARY"
				continue
			fi
			if [ $(($(sframe_field "$d/$link.exe" 4))) -eq 0 ]; then
				# ld drops the header of a section without FDEs.
				printf '%s %s linked .sframe is empty\n' "$target" "$link" >>"$out/SUMMARY"
				continue
			fi
			extract "$d/$link.exe" "$out/$target/$link.sframe"
			echo "$addr" >"$out/$target/$link.sframe.addr"
			sframe_dump "$objdump" "$d/$link.exe" "$out/$target/$link.objdump.txt"
		done
	done
}

# toolchain BINDIR VERSION runs every target with the tools in BINDIR
# (<triple>-as etc.) and writes gas-VERSION/.
toolchain() {
	bindir=$1 version=$2
	out=$here/gas-$version
	mkdir -p "$out"
	: >"$out/SUMMARY"
	{
		"$bindir/x86_64-linux-gnu-as" --version | head -n 1
		"$bindir/x86_64-linux-gnu-ld" --version | head -n 1
	} >"$out/VERSION"
	for target in x86-64 aarch64 aarch64_be s390x; do
		triple=$(triple_of "$target")
		if [ ! -x "$bindir/$triple-as" ]; then
			echo "$target no $triple-as in $bindir" >>"$out/SUMMARY"
			continue
		fi
		build "$bindir/$triple-" "$out" "$target"
	done
	echo "regenerated $out" >&2
}

# version_of AS prints the binutils version of an assembler, e.g. 2.40.
version_of() {
	"$1" --version | head -n 1 | awk '{ print $NF }'
}

# bench BINDIR writes bench/x86-64-20k.sframe.gz (gzip -n, so the bytes do
# not depend on the time) and its address: the benchmark section, 20000
# functions from bench/gen.awk assembled and linked by one toolchain.
bench() {
	bindir=$1
	d=$work/bench
	mkdir -p "$d"
	awk -v N=20000 -f "$here/bench/gen.awk" >"$d/bench.s"
	"$bindir/x86_64-linux-gnu-as" --gsframe -o "$d/bench.o" "$d/bench.s"
	"$bindir/x86_64-linux-gnu-ld" -e f0 -Ttext=0x401000 --no-warn-rwx-segments -o "$d/bench.exe" "$d/bench.o"
	readelf=$bindir/x86_64-linux-gnu-readelf objcopy=$bindir/x86_64-linux-gnu-objcopy
	extract "$d/bench.exe" "$d/bench.sframe"
	gzip -n -9 <"$d/bench.sframe" >"$here/bench/x86-64-20k.sframe.gz"
	sframe_field "$d/bench.exe" 2 >"$here/bench/x86-64-20k.sframe.addr"
	echo "regenerated $here/bench/x86-64-20k.sframe.gz" >&2
}

# handmade BINDIR writes handmade/NAME.objdump.txt for every
# handmade/NAME.hex (hex digits, '#' comments): objdump --sframe of an
# object whose .sframe section holds those bytes, at address 0. This is
# objdump's reading of sections no assembler writes, to check ours by.
handmade() {
	bindir=$1
	for hex in "$here"/handmade/*.hex; do
		name=$(basename "$hex" .hex)
		sed 's/#.*//' "$hex" | xxd -r -p >"$work/$name.bin"
		printf '\t.section .sframe,"a",@progbits\n\t.incbin "%s"\n' "$work/$name.bin" >"$work/$name.s"
		"$bindir/x86_64-linux-gnu-as" -o "$work/$name.o" "$work/$name.s"
		sframe_dump "$bindir/x86_64-linux-gnu-objdump" "$work/$name.o" "$here/handmade/$name.objdump.txt"
	done
	echo "regenerated $here/handmade/*.objdump.txt" >&2
}

done_versions=" "
for dir in "$toolchains"/binutils-*/bin; do
	[ -x "$dir/x86_64-linux-gnu-as" ] || continue
	# The fixtures directory takes the toolchain's name from its
	# toolchain.conf (name=gas-2.47.50), as producers and test labels
	# call it; else the directory's version (binutils-2.44 -> gas-2.44).
	conf=$(dirname "$dir")/toolchain.conf
	v=$(sed -n 's/^name=gas-//p' "$conf" 2>/dev/null | head -n 1)
	if [ -z "$v" ]; then
		v=$(basename "$(dirname "$dir")")
		v=${v#binutils-}
	fi
	toolchain "$dir" "$v"
	done_versions="$done_versions$v "
	# The benchmark section is made by GNU as 2.47.50 (SFrame version 3).
	if [ "$v" = 2.47.50 ]; then
		bench "$dir"
		handmade "$dir"
	fi
done
if [ -x /usr/bin/x86_64-linux-gnu-as ]; then
	v=$(version_of /usr/bin/x86_64-linux-gnu-as)
	case $done_versions in
	*" $v "*) ;;
	*) toolchain /usr/bin "$v" ;;
	esac
fi
