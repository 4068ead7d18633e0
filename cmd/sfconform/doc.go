// Command sfconform checks SFrame producers and consumers against an
// emulated machine.
//
//	sfconform run [--programs N] [--targets LIST] [--versions 2,3] [--seed S] [--out DIR]
//	sfconform run --replay FILE
//	sfconform dump [--raw --base ADDR] [--json] FILE
//	sfconform toolchains [--json]
//
// Exit status: 0 clean, 1 conformance failures, 2 bad usage, bad input or
// missing setup. Run "sfconform help" for the list of subcommands.
package main
