package check

import (
	"errors"
	"fmt"
	"sort"
)

// Options select the checks File runs.
type Options struct {
	// Static compares every SFrame row with the file's DWARF CFI at every
	// instruction boundary. Structure checks always run.
	Static bool
	// Dynamic emulates every function from its entry (Variants runs each,
	// at most Budget instructions a run) and judges the unwind at every
	// executed instruction.
	Dynamic  bool
	Variants int // runs per function with different arguments and memory; 0 means 6
	Budget   int // instructions per run; 0 means 20000
	// FailuresPerRun is how many failing steps of one dynamic run are
	// kept and grouped into findings (the rest are counted, and a WRONG
	// or ERROR among them is still an error); 0 means 256.
	FailuresPerRun int
	// MaxFindings bounds the findings kept per kind (the counts go on);
	// 0 means 1000.
	MaxFindings int
	// Strict makes coverage gaps (code without SFrame from inputs that
	// carried none, linker stubs, code without CFI) errors too.
	Strict bool
	// SaveDir, when set, receives a reproducer for every function the
	// dynamic check finds failing (the corpus format).
	SaveDir string
}

// DefaultOptions are what `sfconform check` runs without flags.
func DefaultOptions() Options { return Options{Static: true, Dynamic: true} }

func (o Options) withDefaults() Options {
	if o.Variants <= 0 {
		o.Variants = 6
	}
	if o.Budget <= 0 {
		o.Budget = 20000
	}
	if o.FailuresPerRun <= 0 {
		o.FailuresPerRun = 256
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = 1000
	}
	return o
}

// Severity ranks a finding. Only errors make a file fail.
type Severity string

const (
	SevError   Severity = "error"   // the section is wrong or refused
	SevWarning Severity = "warning" // a shape real consumers accept, or code left without an FDE
	SevNote    Severity = "note"    // not a defect: something the check could not judge, and why
)

// Kinds of findings.
const (
	KindDecode       = "decode"       // the section does not decode
	KindInvalid      = "invalid"      // a rule strict consumers apply (validate)
	KindConcatenated = "concatenated" // several SFrame headers in one section
	KindOutside      = "outside"      // an FDE covering bytes outside every executable segment
	KindOverlap      = "overlap"      // two FDEs whose ranges overlap
	KindDuplicate    = "duplicate"    // two FDEs with one start
	KindUncovered    = "uncovered"    // a function's bytes that no FDE covers
	KindStatic       = "static"       // an SFrame row differs from the CFI row
	// KindMissing: CFI the version can express describes a PC the section
	// does not (an error: a dropped FDE, as ld 2.47 drops v2 input), or the
	// section has rows where the CFI has no FDE (a warning).
	KindMissing       = "missing"
	KindInexpressible = "inexpressible" // CFI the section's version cannot express
	KindNotCompared   = "not-compared"  // CFI this check does not evaluate (an expression)
	KindDynamic       = "dynamic"       // a wrong unwind at an executed instruction
)

// Finding is one thing the check says about a file.
type Finding struct {
	Kind     string   `json:"kind"`
	Severity Severity `json:"severity"`
	Func     string   `json:"func,omitempty"`
	PC       string   `json:"pc,omitempty"` // "0x…"
	// Offset is the byte offset in the .sframe section the finding is
	// about (-1: none), FileOffset the same byte in the file.
	Offset     int    `json:"offset"`
	FileOffset int64  `json:"file_offset"`
	Message    string `json:"message"`
	// SFrame and CFI are the two rules of a static difference, as
	// "cfa=sp+16 ra=c-8 fp=u".
	SFrame string `json:"sframe,omitempty"`
	CFI    string `json:"cfi,omitempty"`
	// Reproducer is the file a dynamic failure was saved to.
	Reproducer string `json:"reproducer,omitempty"`
	// Count is how many occurrences the finding stands for (grouped
	// dynamic failures: the steps of every run with the same verdict,
	// field and row); 0 means one. Message describes the first.
	Count int `json:"count,omitempty"`
	// Cause is, for code without SFrame, why it has none (gaps.go).
	Cause string `json:"cause,omitempty"`
}

// SectionInfo describes one SFrame header of the section.
type SectionInfo struct {
	Offset  int      `json:"offset"`
	Version int      `json:"version"`
	Flags   []string `json:"flags"`
	ABI     string   `json:"abi"`
	NumFDEs int      `json:"num_fdes"`
	NumFREs int      `json:"num_fres"`
	Size    int      `json:"size"`
}

// FuncReport is what the checks found in one function.
type FuncReport struct {
	Name  string `json:"name"`
	Start string `json:"start"`
	Size  uint64 `json:"size"`
	// HasFDE: an SFrame FDE covers the function start.
	HasFDE bool `json:"has_fde"`
	// Instructions: instruction boundaries from the start to the end, as
	// the disassembler finds them (reachable by straight-line decoding).
	Instructions int `json:"instructions"`
	// Static: boundaries whose SFrame row was compared with CFI, and how
	// many differ, cannot be expressed, or were not compared.
	Compared      int `json:"compared"`
	Differ        int `json:"differ"`
	Inexpressible int `json:"inexpressible"`
	NotCompared   int `json:"not_compared"`
	// Dynamic: distinct instructions executed over all runs, judged steps
	// and their verdicts (OK, WRONG, NOINFO, ERROR), and why runs ended.
	Executed int            `json:"executed"`
	Steps    int            `json:"steps"`
	Verdicts map[string]int `json:"verdicts,omitempty"`
	// Aside: judged steps kept out of Verdicts, by why: "sp off stack"
	// (an argument of the variant moved the SP out of the emulator's
	// stack: no real run's state), "beyond depth limit" (the backtrace is
	// deeper than the consumer's frame limit and every frame it returned
	// is right; a wrong one among them stays WRONG).
	Aside map[string]int `json:"aside,omitempty"`
	Ends  map[string]int `json:"ends,omitempty"`
	// Clobbered counts the runs left out from the step at which the
	// function overwrote a register it had saved (clobber.go).
	Clobbered int `json:"clobbered,omitempty"`
	// Served: what the lenient emulation served over all runs ("external
	// calls" returned from at once, "system calls" skipped, "pages"
	// mapped on demand).
	Served map[string]int `json:"served,omitempty"`
	// FirstEnd is why the first run that ended early ended (a fault's
	// address and instruction, the budget), with emulator addresses.
	FirstEnd string `json:"first_end,omitempty"`
	Findings int    `json:"findings"`
}

// Summary totals a report.
type Summary struct {
	Errors        int            `json:"errors"`
	Warnings      int            `json:"warnings"`
	Notes         int            `json:"notes"`
	Functions     int            `json:"functions"`
	WithFDE       int            `json:"with_fde"`
	FDEs          int            `json:"fdes"`
	ExecBytes     uint64         `json:"exec_bytes"`
	CoveredBytes  uint64         `json:"covered_bytes"`
	Instructions  int            `json:"instructions"`
	Compared      int            `json:"compared"`
	Differ        int            `json:"differ"`
	Inexpressible int            `json:"inexpressible"`
	NotCompared   int            `json:"not_compared"`
	Executed      int            `json:"executed"`
	Steps         int            `json:"steps"`
	Verdicts      map[string]int `json:"verdicts,omitempty"`
	Aside         map[string]int `json:"aside,omitempty"`
	// Clobbered counts the dynamic runs left out from a step at which the
	// program overwrote a register it had saved (synthetic inputs).
	Clobbered int `json:"clobbered,omitempty"`
	// ByKind counts every finding by kind, also those beyond MaxFindings.
	ByKind map[string]int `json:"by_kind"`
	// LeftOut counts, by kind, the findings beyond MaxFindings that
	// Report.Findings does not list.
	LeftOut map[string]int `json:"left_out,omitempty"`
	// Ungrouped counts the failing dynamic steps beyond the ones kept per
	// run and grouped into findings (they are in Verdicts).
	Ungrouped int `json:"ungrouped,omitempty"`
}

// Report is the result of checking one file.
type Report struct {
	Path   string `json:"path"`
	Target string `json:"target,omitempty"`
	Type   string `json:"type,omitempty"` // EXEC, DYN, REL
	// Unusable is set when the file could not be checked at all (not an
	// ELF file of an SFrame target, no .sframe, ...): the reason.
	Unusable string `json:"unusable,omitempty"`
	// Relocated says a relocatable object was checked at a fixed layout
	// with its relocations applied (text sections from 0x400000 on).
	Relocated  bool          `json:"relocated,omitempty"`
	SFrameAddr string        `json:"sframe_addr,omitempty"`
	Sections   []SectionInfo `json:"sections,omitempty"`
	// FuncSource names where the function starts came from: ".symtab",
	// ".dynsym" or ".eh_frame" (FDE starts of a stripped file), never
	// ".sframe".
	FuncSource string `json:"func_source,omitempty"`
	// CFISource is the CFI the static check compared with: ".eh_frame",
	// ".debug_frame" or "" (none: no static differential).
	CFISource string  `json:"cfi_source,omitempty"`
	Summary   Summary `json:"summary"`
	// Gaps total the functions without SFrame by cause (gaps.go): only
	// a lost FDE or a section the linker emptied is an error, unless
	// Options.Strict.
	Gaps []Gap `json:"gaps,omitempty"`
	// Bytes sorts every executable byte into a class: judged (in an
	// FDE), a gap cause, or not code (gaps.go, ByteClass).
	Bytes []ByteClass `json:"bytes,omitempty"`
	// Pads says how many C++ landing pads the dynamic check entered and
	// how much code it ran with and without them (landing.go); nil when
	// the file has none.
	Pads      *PadReport   `json:"pads,omitempty"`
	Functions []FuncReport `json:"functions,omitempty"`
	Findings  []Finding    `json:"findings,omitempty"`

	opts Options
	kept map[string]int
}

// Failed reports whether the file has an error-severity finding.
func (r *Report) Failed() bool { return r.Summary.Errors > 0 }

// ExitCode is the exit status `sfconform check` uses for a set of reports:
// 2 when a file is unusable, else 1 when one has an error, else 0.
func ExitCode(rs []*Report) int {
	code := 0
	for _, r := range rs {
		switch {
		case r.Unusable != "":
			return 2
		case r.Failed():
			code = 1
		}
	}
	return code
}

func (r *Report) add(f Finding) {
	if r.Summary.ByKind == nil {
		r.Summary.ByKind = map[string]int{}
	}
	if r.kept == nil {
		r.kept = map[string]int{}
	}
	r.Summary.ByKind[f.Kind]++
	switch f.Severity {
	case SevError:
		r.Summary.Errors++
	case SevWarning:
		r.Summary.Warnings++
	default:
		r.Summary.Notes++
	}
	if r.kept[f.Kind] >= r.opts.MaxFindings {
		if r.Summary.LeftOut == nil {
			r.Summary.LeftOut = map[string]int{}
		}
		r.Summary.LeftOut[f.Kind]++
		return
	}
	r.kept[f.Kind]++
	r.Findings = append(r.Findings, f)
}

// ErrUnusable wraps the reason File could not check a file.
var ErrUnusable = errors.New("unusable input")

// File checks the SFrame section of the ELF file at path. The error is
// non-nil only when the file is unusable; the report says why too
// (Report.Unusable), so that a caller checking many files can keep it.
func File(path string, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	r := &Report{Path: path, opts: opts}
	l, err := load(path)
	if err != nil {
		r.Unusable = err.Error()
		return r, fmt.Errorf("%w: %s: %v", ErrUnusable, path, err)
	}
	defer l.Close()
	r.Target, r.Type, r.Relocated = l.Target.Name(), l.Kind, l.Relocated
	r.SFrameAddr = hex(l.SFrameAddr)
	r.CFISource = l.CFIName

	c := &checker{l: l, r: r, opts: opts}
	if err := c.structure(); err != nil {
		r.Unusable = err.Error()
		return r, fmt.Errorf("%w: %s: %v", ErrUnusable, path, err)
	}
	c.functions()
	c.static() // without opts.Static it only walks the boundaries
	if opts.Dynamic {
		c.dynamic()
	}
	c.totals()
	c.accountBytes()
	sort.SliceStable(r.Findings, func(i, j int) bool { return sevRank(r.Findings[i].Severity) < sevRank(r.Findings[j].Severity) })
	return r, nil
}

func sevRank(s Severity) int {
	switch s {
	case SevError:
		return 0
	case SevWarning:
		return 1
	}
	return 2
}

func hex(v uint64) string { return fmt.Sprintf("0x%x", v) }
