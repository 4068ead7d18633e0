package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/sframe"
)

func init() {
	register("dump", "print an SFrame section as GNU objdump --sframe does (or as JSON)", runDump)
}

const dumpUsage = `usage: sfconform dump [--json] FILE
       sfconform dump --raw --base ADDR [--json] FILE
       sfconform dump --raw --base ADDR --elf OUT FILE

FILE "-" reads standard input.

Prints the .sframe section of the ELF file FILE in the layout of GNU
objdump --sframe (of the binutils release that produces the section's
version), from the line "Contents of the SFrame section" on.

With --raw, FILE holds the bare section bytes (as objcopy -O binary
--only-section=.sframe writes them) whose first byte is at address ADDR;
the target comes from the section header.

With --elf, the bare section is not printed but written to OUT wrapped in
the minimal ELF file the dumper consumers hand to objdump, readelf and
llvm-readobj (an executable of the header's ABI, in that ABI's byte order,
with .sframe at ADDR), to run a dumper on it by hand:
objdump --sframe=.sframe OUT. The section need not decode.
`

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("dump", dumpUsage, stderr)
	raw := fs.Bool("raw", false, "FILE is a bare .sframe section, not an ELF file")
	baseText := fs.String("base", "", "with --raw: the address of the section's first byte (decimal or 0x hex)")
	asJSON := fs.Bool("json", false, "print JSON (fields documented in the sframe package's DumpJSON)")
	elfOut := fs.String("elf", "", "with --raw: write the section wrapped in a minimal ELF file to this path instead")
	files, err := parseArgs(fs, args, 1, 1, stdout)
	if err != nil {
		return parseExit(err)
	}
	path := files[0]
	if *baseText != "" && !*raw {
		fmt.Fprintln(stderr, "sfconform dump: --base needs --raw (an ELF file gives the section address)")
		return exitSetup
	}
	if *elfOut != "" && (!*raw || *asJSON) {
		fmt.Fprintln(stderr, "sfconform dump: --elf needs --raw and prints nothing (no --json)")
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
		buf, err := readInput(path)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform dump: %v\n", err)
			return exitSetup
		}
		if *elfOut != "" {
			return writeELF(*elfOut, path, buf, base, stderr)
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
		t, err = readELF(path)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform dump: %v\n", err)
			return exitSetup
		}
	}

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

// writeELF wraps a bare section in the dumper consumers' ELF file.
func writeELF(out, path string, section []byte, base uint64, stderr io.Writer) int {
	if len(section) < 5 {
		fmt.Fprintf(stderr, "sfconform dump: %s: %d bytes, no SFrame header to take the ABI from\n", path, len(section))
		return exitSetup
	}
	abi := sframe.ABI(section[4])
	file, err := dumper.ELF(abi, abi.ByteOrder(), section, base)
	if err != nil {
		fmt.Fprintf(stderr, "sfconform dump: %s: %v\n", path, err)
		return exitSetup
	}
	if err := os.WriteFile(out, file, 0o644); err != nil {
		fmt.Fprintf(stderr, "sfconform dump: %v\n", err)
		return exitSetup
	}
	return exitOK
}

// readInput reads a file, or standard input for "-".
func readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

// readELF reads the SFrame section of an ELF file; "-" is standard input,
// copied to a temporary file first (the ELF reader needs random access).
func readELF(path string) (*sframe.Table, error) {
	if path != "-" {
		return sframe.ReadELF(path)
	}
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	f, err := os.CreateTemp("", "sfconform-dump-*.elf")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	t, err := sframe.ReadELF(f.Name())
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	return t, nil
}
