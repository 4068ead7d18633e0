// Package pipelines builds real C and C++ programs (check's committed
// test programs, check/testdata/programs) through the linker features and
// post-link tools a distribution's builds use, with every provisioned GNU
// as/ld series that writes SFrame for the target, and judges each output's
// .sframe with package check (statically against the file's DWARF CFI;
// dynamically by emulation for the linked programs). It is what
// `sfconform pipelines` runs and docs/pipelines.md shows.
//
// What is checked comes from the SFrame specification
// (https://sourceware.org/binutils/docs/sframe-spec.html: one FDE per
// function, its start an address of the file's code, FDEs sorted and not
// overlapping, the section found through PT_GNU_SFRAME) and from what GNU
// ld's manual says of the options used (--gc-sections: unused input
// sections are removed; -r: the output can be linked again), with the
// linker merging the inputs' .sframe sections into one and adding its own
// FDEs for the code it makes (PLT):
//
//   - post-link: strip, strip --strip-debug, the
//     objcopy --only-keep-debug / --add-gnu-debuglink pair, eu-strip
//     (plain, -g, -f) and dwz must keep the
//     allocated .sframe byte for byte, and the result must still be true
//     for its code (judged again; a file without .symtab statically only,
//     since check then takes function starts from .eh_frame, the PLT's
//     among them);
//   - gc-sections: with -ffunction-sections -Wl,--gc-sections the FDEs of
//     the collected functions must go (the output's FDE count drops by
//     exactly the collected functions that had one), and every function
//     or linker stub that stays keeps the FDE it had without the option;
//   - ld -r chains: ld -r twice, then a final link (as kernel modules are
//     made): each step's output is judged;
//   - C++ COMDAT: inline functions and template instances defined in
//     several objects are deduplicated by the linker; no FDE may survive
//     for a discarded copy or point at foreign code;
//   - mixed SFrame versions: objects from two assemblers (gas series and
//     llvm-mc) in one link, in both orders, and from three gas series
//     (each rotation), with each ld: what ld does (merges, converts, drops
//     with or without a word: each input's functions with an FDE are
//     counted, since check cannot tell an input that carried SFrame from
//     one that did not) and whether the result is right.
//   - LTO: -flto with -Wa,--gsframe in one command, in the compiles only
//     (gcc keeps the assembler options in its LTO objects for the
//     link-time assembler), and with one object compiled without it;
//   - large code model and far code: -mcmodel=large, .sframe placed 2 GiB
//     and 4 GiB above the code by ld's own default script, one object's
//     .text as .ltext (placed by ld, and 4 GiB away): SFrame v1 and v2
//     hold function starts as 32-bit offsets, v3 as 64-bit ones;
//   - lld (the host suite's and sid's) linking gas's objects: what it
//     writes (PT_GNU_SFRAME or not, one section or several) and whether
//     check (which reads the section as unwinders would) finds it right;
//   - BOLT (llvm-bolt, x86-64 and aarch64) rewriting a program linked with
//     -Wl,-q: every function with an FDE before keeps one, and the
//     .sframe is true for the code that runs; eu-strip (plain, -g, -f)
//     and dwz join the post-link tools.
//   - generated programs: package gen's programs (what `sfconform run`
//     checks, without the patterns check cannot run from a function's
//     entry: signal trampolines, stack switches, far code) assembled with
//     --gsframe, linked at gen's addresses, then stripped or put through
//     ld -r twice, each judged by check (statically and by emulation).
//
// Every scenario has a negative control: one of its linked outputs with
// one FDE's start moved onto the next function (an FDE pointing at
// foreign code, what a stale FDE of a discarded or moved function looks
// like) must be reported by check; a control that stays green makes the
// run fail, so a judgement that cannot fail is seen.
package pipelines
