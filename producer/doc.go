// Package producer turns a generated Program into an Image: machine code,
// symbols and an SFrame section, ready for the emulator, the oracle and a
// consumer.
//
// Producers live in a registry of names, one file each (docs/extending.md),
// each entry (About) saying which ci/setup.sh step provides it; a
// producer names its exact version (ExactVersion), and declares per
// target the SFrame version it emits (or why it emits none):
//
//	builtin-v2, builtin-v3   the generator's own rows encoded by the sframe
//	                         package, in the target's byte order
//	gas-2.40, gas-2.44,      GNU as --gsframe and ld of each provisioned
//	gas-2.47                 binutils series (Debian bookworm, trixie, sid)
//	gas:<dir>                the same with the as and ld (or as-new and
//	                         ld-new) in a directory of one's own
//	llvm-mc-23               llvm-mc --gsframe, linked with a GNU ld
//
// Producers that run real toolchains assemble the Program's assembly text
// instead (gen.Program.Assembly: .cfi_* directives, nothing of gen's rows
// reaches the tools otherwise), link it with GNU ld at the addresses gen
// laid it out at, and load the executable: code and symbols (checked
// against gen's layout: a difference is an error, never an image), and
// .sframe as a loader finds it through the PT_GNU_SFRAME segment. Only the
// toolchain decides their table.
//
// They are BatchProducers: many programs, laid out at disjoint addresses,
// go through one assembler run (one source file, each program's names
// prefixed, each placed with .org) and one link; each image is then that
// program's code and symbols with the batch's whole linked .sframe, as the
// toolchain wrote it. A tool that fails on a batch is tried on its halves
// until the failure lands on the program that causes it.
//
// Calls to gen's PLT-like stubs go through a PLT the linker makes, where
// it describes that PLT in .sframe (plt.go): the batch is rendered with
// gen.AsmOptions.PLT and linked as a shared object (-shared -z now), its
// first segment, .plt among it, 2 MiB below the code; the loader binds the
// GOT slots of the R_*_JUMP_SLOT relocations (and refuses any other
// dynamic relocation), and the image gets the .plt and the GOT as
// segments and a symbol per PLT entry. So ld's own PLT0 and PCMASK FDEs
// are judged. Where ld writes no FDE for its .plt (AArch64), or the link
// loses the program's FDEs (llvm-mc's objects with GNU ld 2.44), a probe
// measured once per toolchain and target says so and the calls reach
// gen's stubs, as before.
//
// The programs the modules layout picks (1 in 8 by seed, cut as the
// builtin producer cuts them, at function starts no 2-byte x86-64 branch
// crosses) are built one ELF per module when the cell's consumers read
// modules (toolmodules.go): each module assembled from its own source
// file and linked on its own, an executable and -shared objects, each
// image.Module carrying the .sframe its ELF's PT_GNU_SFRAME finds. Where
// the linker describes its .plt in .sframe (the PLT probe, as above),
// calls between the near modules go through the PLT ld makes (bind.go):
// the executable is linked dynamically against the shared objects (-z
// now), a loader of the modules binds every R_*_JUMP_SLOT (and GLOB_DAT)
// in load order and refuses any other relocation, naming the file and
// offset, and each .plt is a module mapping of its own, NAME:plt, that
// its object's section describes, each entry a symbol the oracle sees
// entered and left. Other references between modules stay direct, at
// gen's addresses (--defsym, -Bsymbolic).
//
// Each image carries an image.Record: the tools' --version and Debian
// package versions, the commands run, and the tools' warnings, attributed
// to the function (and the line of the program's own assembly text) they
// are about. From it, commands.go gives the plain commands that build an
// image alone (for reproducers and reports) and ImageVersion the exact
// version of what made its section.
package producer
