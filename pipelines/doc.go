// Package pipelines builds real C and C++ programs (check's committed
// test programs, check/testdata/programs) through the linker features and
// post-link tools a distribution's builds use, with every provisioned GNU
// as/ld series that writes SFrame for the target, and judges each output's
// .sframe with package check (statically against the file's DWARF CFI;
// dynamically by emulation for the linked programs). It is what
// `sfconform pipelines` runs and docs/pipelines.md shows.
//
// What is checked comes from the SFrame specification (the format: one
// FDE per function, its start an address in the file's code, FDEs sorted
// and not overlapping, https://sourceware.org/binutils/docs/sframe-spec.html
// sections 2.2 and 2.3) and from what GNU ld is documented to do with
// .sframe input sections (ld's manual, "Options": --gc-sections,
// -r/--relocatable; the SFrame section of an output is the merge of the
// inputs' sections, "ld merges and sorts SFrame sections" in the
// specification's introduction):
//
//   - post-link: strip, strip --strip-debug and the
//     objcopy --only-keep-debug / --add-gnu-debuglink pair must keep the
//     allocated .sframe byte for byte, and the result must still be true
//     for its code (judged again, with function starts from .eh_frame
//     when the symbols are gone);
//   - gc-sections: with -ffunction-sections -Wl,--gc-sections the FDEs of
//     the collected functions must go (the output's FDE count drops by
//     exactly the collected functions that had one) and the rest must stay
//     right;
//   - ld -r chains: ld -r twice, then a final link (as kernel modules are
//     made): each step's output is judged;
//   - C++ COMDAT: inline functions and template instances defined in
//     several objects are deduplicated by the linker; no FDE may survive
//     for a discarded copy or point at foreign code;
//   - mixed SFrame versions: objects from two gas series in one link, in
//     both orders, with each ld: what ld does (merges, converts, drops
//     with or without a word) and whether the result is right.
//
// Every scenario has a negative control: one of its linked outputs with
// one FDE's start moved onto the next function (an FDE pointing at
// foreign code, what a stale FDE of a discarded or moved function looks
// like) must be reported by check; a control that stays green makes the
// run fail, so a judgement that cannot fail is seen.
//
// The issue this answers (real build pipelines, item 2) lists further
// scenarios (large code models, LTO, eu-strip, dwz, BOLT, lld) that this
// package does not build yet.
package pipelines
