// Command sfconform checks SFrame producers and consumers against an
// emulated machine.
//
//	sfconform run [--producer LIST] [--consumer LIST] [--targets LIST] [--programs N] [--seed S] [--json]
//	sfconform run --list
//	sfconform run --replay FILE
//	sfconform dump [--raw --base ADDR] [--json] FILE|-
//	sfconform toolchains [--json]
//	sfconform help [COMMAND]
//	sfconform --version
//
// Exit status: 0 clean, 1 conformance failures, 2 bad usage, bad input or
// missing setup. Every subcommand answers -h.
package main
