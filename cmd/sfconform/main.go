package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0 // clean
	exitFailure = 1 // conformance failures found
	exitSetup   = 2 // bad usage, bad input or a missing piece of setup
)

// subcommand is one verb of the command line. Each lives in its own file
// and registers itself from init.
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var subcommands = map[string]subcommand{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	subcommands[name] = subcommand{name, summary, run}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sfconform <command> [flags] [arguments]\n\ncommands:")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, subcommands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'sfconform help <command>' or 'sfconform <command> -h' for a command's flags;")
	fmt.Fprintln(w, "'sfconform --version' for the version. Exit status: 0 clean, 1 failures found,")
	fmt.Fprintln(w, "2 bad usage, bad input or missing setup.")
}

// version is the module version and the VCS revision the binary was built
// from, as the Go toolchain recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "sfconform (no build information)"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	out := "sfconform " + v
	if rev != "" {
		out += " (" + rev + modified + ")"
	}
	return out + " " + bi.GoVersion
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitSetup
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version())
		return exitOK
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		sc, ok := subcommands[args[1]]
		if !ok || len(args) > 2 {
			fmt.Fprintf(stderr, "sfconform help: unknown command %q\n", strings.Join(args[1:], " "))
			usage(stderr)
			return exitSetup
		}
		return sc.run([]string{"-h"}, stdout, stderr)
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sfconform: unknown command %q\n", args[0])
		usage(stderr)
		return exitSetup
	}
	return sc.run(args[1:], stdout, stderr)
}

// newFlagSet makes a subcommand's flag set. head is printed above the
// flags by -h.
func newFlagSet(name, head string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), head)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// errHelp says the user asked for help, which parseArgs has printed.
var errHelp = errors.New("help shown")

// parseArgs parses args with fs, allowing flags after positional
// arguments (as in "dump FILE --json"); "--" ends the flags. -h prints the
// usage on stdout and returns errHelp. Between minArgs and maxArgs
// positional arguments are accepted (maxArgs < 0: any number); anything
// else is an error naming the stray argument, after the usage on stderr.
func parseArgs(fs *flag.FlagSet, args []string, minArgs, maxArgs int, stdout io.Writer) ([]string, error) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, errHelp
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err // the flag package printed it, with the usage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	switch {
	case maxArgs >= 0 && len(pos) > maxArgs:
		err := fmt.Errorf("unexpected argument %q", pos[maxArgs])
		fmt.Fprintf(fs.Output(), "sfconform %s: %v\n", fs.Name(), err)
		fs.Usage()
		return nil, err
	case len(pos) < minArgs:
		err := fmt.Errorf("want at least %d argument(s)", minArgs)
		if minArgs == maxArgs {
			err = fmt.Errorf("want exactly %d argument(s), got %d", minArgs, len(pos))
		}
		fmt.Fprintf(fs.Output(), "sfconform %s: %v\n", fs.Name(), err)
		fs.Usage()
		return nil, err
	}
	return pos, nil
}

// parseExit is the exit status for a parseArgs error.
func parseExit(err error) int {
	if errors.Is(err, errHelp) {
		return exitOK
	}
	return exitSetup
}

// aliasFlag is a second name for a flag (its former spelling): setting
// either sets the same value.
type aliasFlag struct{ f *flag.Flag }

// String is empty so that -h shows the default once, on the flag itself.
func (a aliasFlag) String() string { return "" }

func (a aliasFlag) Set(s string) error { return a.f.Value.Set(s) }
