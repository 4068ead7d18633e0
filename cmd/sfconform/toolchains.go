package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	register("toolchains", "list the provisioned GNU toolchains and llvm-mc, and the SFrame version each emits", cmdToolchains)
}

// toolchainJSON is one row of "toolchains --json".
type toolchainJSON struct {
	Name          string   `json:"name"`
	Version       string   `json:"version"`
	Suite         string   `json:"suite"`
	Package       string   `json:"package,omitempty"`
	Target        string   `json:"target"`
	Triple        string   `json:"triple"`
	SFrameVersion int      `json:"sframe_version"`
	NoSFrameWhy   string   `json:"no_sframe_reason,omitempty"`
	AS            string   `json:"as"`
	LD            string   `json:"ld"`
	Objdump       string   `json:"objdump"`
	Readelf       string   `json:"readelf"`
	ASFlags       []string `json:"as_flags,omitempty"`
	LDFlags       []string `json:"ld_flags,omitempty"`
}

func cmdToolchains(args []string, stdout, stderr io.Writer) int {
	head := fmt.Sprintf("usage: sfconform toolchains [--json]\n\n"+
		"Lists the GNU toolchains 'make setup' provisioned under %s ($%s)\n"+
		"(and gas-src, binutils built from source by 'make binutils-src'),\n"+
		"one line per toolchain and target, with the SFrame version its assembler emits\n"+
		"(0: it cannot emit SFrame for that target).\n", toolchain.CacheDir(), toolchain.CacheEnv)
	fs := newFlagSet("toolchains", head, stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if _, err := parseArgs(fs, args, 0, 0, stdout); err != nil {
		return parseExit(err)
	}
	all, err := toolchain.All()
	if llvm, lerr := toolchain.LLVM(); len(llvm) > 0 {
		all = append(all, llvm...)
	} else if len(all) > 0 && lerr != nil && !errors.Is(lerr, toolchain.ErrNotProvisioned) {
		err = errors.Join(err, lerr)
	}
	// The source build ('make binutils-src'), when there: gas-src.
	if b, serr := toolchain.FindSourceBuild(); serr == nil {
		tcs, perr := b.Probed()
		all = append(all, tcs...)
		err = errors.Join(err, perr)
	}
	if len(all) == 0 {
		fmt.Fprintf(stderr, "sfconform toolchains: %v\n", err)
		return exitSetup
	}
	if err != nil {
		// Some are usable: list those, and say what is broken.
		fmt.Fprintf(stderr, "sfconform toolchains: warning: %v\n", err)
	}
	if *asJSON {
		return printToolchainsJSON(stdout, stderr, all)
	}
	printToolchainsTable(stdout, all)
	return exitOK
}

func printToolchainsJSON(w, stderr io.Writer, all []toolchain.Toolchain) int {
	rows := make([]toolchainJSON, 0, len(all))
	for _, t := range all {
		rows = append(rows, toolchainJSON{
			Name: t.Name, Version: t.Version, Suite: t.Suite, Package: t.Package, Target: t.Target.Name(), Triple: t.Triple,
			SFrameVersion: t.SFrameVersion, NoSFrameWhy: t.SFrameUnsupportedReason(),
			AS: t.AS, LD: t.LD, Objdump: t.Objdump, Readelf: t.Readelf,
			ASFlags: t.ASFlags, LDFlags: t.LDFlags,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		fmt.Fprintf(stderr, "sfconform toolchains: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func printToolchainsTable(w io.Writer, all []toolchain.Toolchain) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPACKAGE\tSUITE\tTARGET\tSFRAME\tAS\tLD\tOBJDUMP")
	for _, t := range all {
		sf := fmt.Sprintf("v%d", t.SFrameVersion)
		if t.SFrameVersion == 0 {
			sf = "-"
		}
		as, ld := t.AS, t.LD
		for _, f := range t.ASFlags {
			as += " " + f
		}
		for _, f := range t.LDFlags {
			ld += " " + f
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Version, dash(t.Package), t.Suite, t.Target.Name(), sf, as, dash(ld), dash(t.Objdump))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
