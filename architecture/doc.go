// Package architecture holds the test of the project's dependency rules
// (DESIGN.md, "The judge depends on nothing it judges"):
//
//   - the oracle imports only the leaf vocabulary packages (target,
//     machine, image, frame, verdict), so it never sees the decoder, the
//     generator, a producer or a consumer;
//   - consumers never depend on the oracle, nor on producers or the
//     generator;
//   - the leaf packages import only each other;
//   - sframe imports nothing of the project (a third party can vendor it),
//     and dumper (readers of GNU's and LLVM's dumper text) only sframe;
//   - reproducers (corpus) read without the generator, producers, the
//     oracle or the emulator;
//   - only emu imports Unicorn.
//
// Its extending test keeps docs/extending.md true: every file the page
// names exists, and every registered producer and consumer names a setup
// step ci/setup.sh lists (or none), a summary and its exact version.
//
// The package has no code of its own; the rules live in its tests.
package architecture
