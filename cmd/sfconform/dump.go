package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sfconform/sfconform/sframe"
)

func init() {
	register("dump", "print an SFrame section as GNU objdump --sframe does (or as JSON)", runDump)
}

const dumpUsage = `usage: sfconform dump [--json] FILE
       sfconform dump --raw --base ADDR [--json] FILE

Prints the .sframe section of the ELF file FILE in the layout of GNU
objdump --sframe (of the binutils release that produces the section's
version), from the line "Contents of the SFrame section" on.

With --raw, FILE holds the bare section bytes (as objcopy -O binary
--only-section=.sframe writes them) whose first byte is at address ADDR;
the target comes from the section header.

Flags:
`

func runDump(args []string) int {
	return dumpMain(args, os.Stdout, os.Stderr)
}

func dumpMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	raw := fs.Bool("raw", false, "FILE is a bare .sframe section, not an ELF file")
	baseText := fs.String("base", "", "with --raw: the address of the section's first byte (decimal or 0x hex)")
	asJSON := fs.Bool("json", false, "print JSON (fields documented in the sframe package's DumpJSON)")
	fs.Usage = func() {
		fmt.Fprint(stderr, dumpUsage)
		fs.PrintDefaults()
	}
	// Flags may come before or after FILE.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitSetup
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "sfconform dump: want exactly one FILE")
		fs.Usage()
		return exitSetup
	}
	path := files[0]
	if *baseText != "" && !*raw {
		fmt.Fprintln(stderr, "sfconform dump: --base needs --raw (an ELF file gives the section address)")
		return exitSetup
	}

	var t *sframe.Table
	if *raw {
		if *baseText == "" {
			fmt.Fprintln(stderr, "sfconform dump: --raw needs --base ADDR, the address of the section's first byte")
			return exitSetup
		}
		base, err := strconv.ParseUint(*baseText, 0, 64)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform dump: --base %q: not an address\n", *baseText)
			return exitSetup
		}
		buf, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform dump: %v\n", err)
			return exitSetup
		}
		t, err = sframe.Decode(buf, base)
		if err != nil {
			// A FormatError names the byte offset, which here is the file
			// offset too.
			fmt.Fprintf(stderr, "sfconform dump: %s: %v\n", path, err)
			return exitSetup
		}
	} else {
		var err error
		t, err = sframe.ReadELF(path)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform dump: %v\n", err)
			return exitSetup
		}
	}

	var err error
	if *asJSON {
		err = sframe.DumpJSON(stdout, t)
	} else {
		err = sframe.Dump(stdout, t, sframe.SectionName)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sfconform dump: writing: %v\n", err)
		return exitSetup
	}
	return exitOK
}
