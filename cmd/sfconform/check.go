package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sfconform/sfconform/check"
)

func init() {
	register("check", "check the .sframe of ELF files: structure, against their DWARF CFI, and by emulation", runCheck)
}

const checkUsage = `usage: sfconform check [--json] [--all] [--strict] [--static-only | --no-static] [--budget N]
                       [--variants N] [--failures-per-run N] [--save DIR] [--max-findings N] FILE...

Checks the SFrame section of each ELF file (executable, shared object or
relocatable object of x86-64, aarch64, aarch64_be or s390x):

  structure  decode, the strict rules (libsframe, the Linux unwinder),
             FDEs outside the executable segments (sections of a
             relocatable object), overlapping and duplicate FDEs,
             concatenated sections, function bytes no FDE covers;
  static     at every instruction boundary of every function, the CFA, RA
             and FP rules of the SFrame row against the file's DWARF CFI
             (.eh_frame, else .debug_frame); CFI the section's version
             cannot express is reported as such, not as a difference;
  dynamic    every function emulated from its entry, the unwind judged at
             every executed instruction against the machine.

Function starts come from .symtab, else .dynsym, else the CFI's FDE starts
(never from .sframe); the report says which. A relocatable object is laid
out at a fixed address (text sections from 0x400000 on) and its relocations
applied first.

Code without SFrame is classified by cause: no CFI either (assembly
without CFI directives), a linker stub, an input that carried no SFrame
(crt files, libc.a members, objects assembled without --gsframe) are
coverage, listed and counted but not errors; an FDE lost from an input
that carried SFrame, or a section the linker left with only its stubs'
FDEs, is an error. Dynamic failures are grouped by function, SFrame row,
verdict and field, with counts and the first occurrence.

Exit status: 0 no errors (warnings and notes do not count), 1 an error in
some file (a row that is wrong, an FDE a producer dropped, a section that
breaks the rules; with --strict also every coverage gap), 2 a file
unusable (not an ELF file of an SFrame target, no .sframe, ...) or bad
usage.
`

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", checkUsage, stderr)
	asJSON := fs.Bool("json", false, "print the reports as JSON (one array, fields of the check package's Report)")
	staticOnly := fs.Bool("static-only", false, "skip the dynamic check (emulation)")
	noStatic := fs.Bool("no-static", false, "skip the static differential against the CFI")
	all := fs.Bool("all", false, "text output: list every function, not only those with findings")
	variants := fs.Int("variants", 0, "dynamic: runs per function, each with other argument and memory contents (default 6)")
	budget := fs.Int("budget", 0, "dynamic: instructions per run (default 20000)")
	maxFindings := fs.Int("max-findings", 0, "findings kept per kind and file (default 1000; the counts go on)")
	perRun := fs.Int("failures-per-run", 0, "dynamic: failing steps kept and grouped per run (default 256; the rest are counted)")
	strict := fs.Bool("strict", false, "coverage gaps (code without SFrame from inputs that carried none, linker stubs, code without CFI) are errors too")
	saveDir := fs.String("save", "failures", "dynamic: directory for reproducers of failing functions (\"\" saves none)")
	files, err := parseArgs(fs, args, 1, -1, stdout)
	if err != nil {
		return parseExit(err)
	}
	opts := check.Options{Static: !*noStatic, Dynamic: !*staticOnly, Variants: *variants, Budget: *budget,
		MaxFindings: *maxFindings, SaveDir: *saveDir, Strict: *strict, FailuresPerRun: *perRun}
	var reports []*check.Report
	for _, path := range files {
		r, err := check.File(path, opts)
		if err != nil {
			fmt.Fprintf(stderr, "sfconform check: %v\n", err)
		}
		reports = append(reports, r)
		if !*asJSON {
			printCheck(stdout, r, *all)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			fmt.Fprintf(stderr, "sfconform check: writing: %v\n", err)
			return exitSetup
		}
	}
	return check.ExitCode(reports)
}

func printCheck(w io.Writer, r *check.Report, all bool) {
	if r.Unusable != "" {
		fmt.Fprintf(w, "%s: UNUSABLE: %s\n\n", r.Path, r.Unusable)
		return
	}
	s := r.Summary
	status := "OK"
	if r.Failed() {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s: %s (%s %s", r.Path, status, r.Target, r.Type)
	if r.Relocated {
		fmt.Fprint(w, ", relocated at 0x400000")
	}
	fmt.Fprintln(w, ")")
	for _, sec := range r.Sections {
		fmt.Fprintf(w, "  .sframe at %s+%d: version %d %v, %d FDEs, %d FREs, %d bytes\n",
			r.SFrameAddr, sec.Offset, sec.Version, sec.Flags, sec.NumFDEs, sec.NumFREs, sec.Size)
	}
	cfi := r.CFISource
	if cfi == "" {
		cfi = "none (no static differential)"
	}
	fmt.Fprintf(w, "  functions: %d from %s, %d with an FDE; CFI: %s\n", s.Functions, orNone(r.FuncSource), s.WithFDE, cfi)
	fmt.Fprintf(w, "  coverage: %d of %d executable bytes in an FDE (%d FDEs)\n", s.CoveredBytes, s.ExecBytes, s.FDEs)
	if len(r.Bytes) > 0 {
		var parts []string
		for _, b := range r.Bytes {
			mark := "not judged"
			if b.Judged {
				mark = "judged"
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s)", b.Bytes, b.Class, mark))
		}
		fmt.Fprintf(w, "  bytes: %s\n", strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "  static: %d instructions, %d rows compared, %d differ, %d inexpressible, %d not compared\n",
		s.Instructions, s.Compared, s.Differ, s.Inexpressible, s.NotCompared)
	if s.Steps > 0 || s.Executed > 0 {
		fmt.Fprintf(w, "  dynamic: %d of %d instructions executed (%.0f%%), %d steps judged %v", s.Executed, s.Instructions,
			100*float64(s.Executed)/float64(max(s.Instructions, 1)), s.Steps, s.Verdicts)
		if len(s.Aside) > 0 {
			fmt.Fprintf(w, ", set aside %v", s.Aside)
		}
		fmt.Fprintln(w)
	}
	if s.Clobbered > 0 {
		fmt.Fprintf(w, "  dynamic: %d runs left out from the step the program overwrote a register it had saved (synthetic input)\n", s.Clobbered)
	}
	if p := r.Pads; p != nil {
		fmt.Fprintf(w, "  landing pads: %d of %d entered and judged", p.Entered, p.Pads)
		if len(p.NotEntered) > 0 {
			fmt.Fprintf(w, " (not entered: %v)", p.NotEntered)
		}
		fmt.Fprintf(w, "; distinct instructions executed: %d without them, %d with\n", p.Executed, p.WithPads)
	}
	if s.Ungrouped > 0 {
		fmt.Fprintf(w, "  dynamic: %d more failing steps beyond the ones kept per run (--failures-per-run), counted in the verdicts but not grouped\n", s.Ungrouped)
	}
	for _, g := range r.Gaps {
		sev := "coverage"
		if g.Error {
			sev = "ERROR"
		}
		fmt.Fprintf(w, "  without SFrame (%s): %s: %d functions, %d bytes: %s", sev, g.Cause, g.Functions, g.Bytes, strings.Join(g.Names, " "))
		if more := g.Functions - len(g.Names); more > 0 {
			fmt.Fprintf(w, " (%d more)", more)
		}
		if len(g.Inputs) > 0 {
			fmt.Fprintf(w, "; inputs %s", strings.Join(g.Inputs, " "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  findings: %d errors, %d warnings, %d notes %v\n", s.Errors, s.Warnings, s.Notes, s.ByKind)
	for _, f := range r.Functions {
		if f.Findings == 0 && !all {
			continue
		}
		fmt.Fprintf(w, "  func %s %s size %d fde=%v instr %d compared %d differ %d inexpr %d executed %d steps %d %v findings %d\n",
			f.Start, f.Name, f.Size, f.HasFDE, f.Instructions, f.Compared, f.Differ, f.Inexpressible, f.Executed, f.Steps, f.Verdicts, f.Findings)
	}
	for _, f := range r.Findings {
		if f.Cause != "" && f.Severity == check.SevNote && !all {
			continue // coverage: the gap lines above count and name them
		}
		fmt.Fprintf(w, "  %s %s", f.Severity, f.Kind)
		if f.Count > 1 {
			fmt.Fprintf(w, " x%d", f.Count)
		}
		if f.Func != "" {
			fmt.Fprintf(w, " %s", f.Func)
		}
		if f.PC != "" {
			fmt.Fprintf(w, " pc %s", f.PC)
		}
		if f.Offset >= 0 {
			fmt.Fprintf(w, " .sframe+%d (file offset %d)", f.Offset, f.FileOffset)
		}
		fmt.Fprintf(w, ": %s", f.Message)
		if f.SFrame != "" || f.CFI != "" {
			fmt.Fprintf(w, "\n      sframe: %s\n      cfi:    %s", orDash(f.SFrame), orDash(f.CFI))
		}
		if f.Reproducer != "" {
			fmt.Fprintf(w, " (reproducer %s)", f.Reproducer)
		}
		fmt.Fprintln(w)
	}
	for _, k := range sortedKeys(s.LeftOut) {
		fmt.Fprintf(w, "  ... %d more %s findings not shown (--max-findings)\n", s.LeftOut[k], k)
	}
	fmt.Fprintln(w)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "nowhere"
	}
	return s
}
