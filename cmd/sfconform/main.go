package main

import (
	"fmt"
	"os"
	"sort"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0 // clean
	exitFailure = 1 // conformance failures found
	exitSetup   = 2 // bad usage, bad input or a missing piece of setup
)

type subcommand struct {
	name    string
	summary string
	run     func(args []string) int
}

var subcommands = map[string]subcommand{}

// register adds a subcommand; each lives in its own file and registers
// itself from init.
func register(name, summary string, run func(args []string) int) {
	subcommands[name] = subcommand{name, summary, run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sfconform <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-11s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'sfconform <command> -h' for a command's flags.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(exitSetup)
		}
		return
	}
	sc, ok := subcommands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "sfconform: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(exitSetup)
	}
	os.Exit(sc.run(os.Args[2:]))
}
