// Package image is what a producer hands to the rest of the pipeline: the
// machine code of a program and where it lives, its entry and exit, its
// function symbols (and the stacks it switches to), further code segments
// placed apart, the initial argument registers, the signal each run
// receives, and the SFrame section under test as bytes at an address, or,
// for a process image of several loaded objects (an executable and shared
// objects), each Module's code range and own section. A toolchain
// producer adds its Record: the tools' exact versions, the
// commands it ran and the tools' warnings.
//
// It is leaf vocabulary. The oracle reads only the code's symbols (to see
// function entries); consumers read only the sections (Sections); the emulator runs
// the code. Nothing here interprets the section's bytes.
package image
