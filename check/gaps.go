package check

import (
	"debug/elf"
	"fmt"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/cfi"
)

// Causes of code without SFrame. Only CauseLost and CauseDropped are
// defects of the section (errors); the others are coverage: counted and
// named, notes unless Options.Strict.
const (
	// CauseNoCFI: neither the SFrame section nor the CFI describes the
	// code (hand-written assembly without CFI directives, the crt files'
	// _init and _fini): no producer was told how to unwind it. Certain.
	CauseNoCFI = "no CFI"
	// CauseStub: code the linker wrote (.plt, .plt.sec, .plt.got, .iplt,
	// veneers). Certain from the section or symbol name.
	CauseStub = "linker stub"
	// CauseNoSFrameInput: the code has CFI but its input object carried
	// no SFrame (crt files, libc.a and libgcc.a members, objects
	// assembled without --gsframe). Inferred: see lost.
	CauseNoSFrameInput = "input without SFrame"
	// CauseInexpressible: the function's CFI is one the section's version
	// cannot express; producers leave such functions out. Certain.
	CauseInexpressible = "inexpressible CFI"
	// CauseLost: the function's input object carried SFrame (its
	// neighbours in .eh_frame's link order, or the functions its STT_FILE
	// symbol names, have FDEs) but the function's FDE is gone: a producer
	// dropped it. An error. Inferred.
	CauseLost = "lost"
	// CauseDropped: the section holds only linker stubs' FDEs while the
	// inputs' code has CFI: the linker dropped every input's SFrame (ld
	// 2.47 drops version 2 input). An error.
	CauseDropped = "dropped by the linker"
)

// Gap totals the functions left without SFrame for one cause.
type Gap struct {
	Cause     string `json:"cause"`
	Error     bool   `json:"error"` // counted as errors (a defect, or --strict)
	Functions int    `json:"functions"`
	Bytes     uint64 `json:"bytes"`
	// Names are the first functions (at most maxGapNames); Inputs the
	// input files their STT_FILE symbols name, where known.
	Names  []string `json:"names"`
	Inputs []string `json:"inputs,omitempty"`
}

const maxGapNames = 12

// stubSections are the sections ld fills with code of its own.
var stubSections = map[string]bool{".plt": true, ".plt.sec": true, ".plt.got": true, ".iplt": true, ".plt.bnd": true}

// isStub reports whether pc lies in code the linker wrote.
func (c *checker) isStub(pc uint64, name string) bool {
	if strings.HasSuffix(name, "_veneer") || strings.HasPrefix(name, ".plt") {
		return true
	}
	if c.l.Relocated {
		return false
	}
	s := c.l.sectionAt(pc)
	return s != "" && (stubSections[s] || strings.HasSuffix(s, ".stub"))
}

// gapEvidence is what tells an input without SFrame from a lost FDE,
// computed once per file.
type gapEvidence struct {
	// order: the CFI's FDEs in .eh_frame order (the link order of the
	// inputs), and whether an SFrame FDE starts at each.
	order []*cfi.FDE
	has   []bool
	index map[*cfi.FDE]int
	// fileHas: per STT_FILE name, whether one of its local functions
	// has an SFrame FDE.
	fileHas map[string]bool
	// onlyStubs: the section has FDEs only for linker stubs (or none).
	onlyStubs bool
}

func (c *checker) evidence() *gapEvidence {
	e := &gapEvidence{fileHas: map[string]bool{}, index: map[*cfi.FDE]int{}, onlyStubs: true}
	for _, f := range c.fdes {
		if !c.isStub(f.Start, "") {
			e.onlyStubs = false
			break
		}
	}
	if c.cfi != nil {
		for _, f := range c.cfi.FDEs {
			if _, ok := c.l.regionOf(f.Start); ok && !c.isStub(f.Start, "") {
				e.order = append(e.order, f)
			}
		}
		sort.SliceStable(e.order, func(i, j int) bool { return e.order[i].Offset < e.order[j].Offset })
		e.has = make([]bool, len(e.order))
		for k, f := range e.order {
			_, err := c.t.FindFDE(f.Start)
			e.has[k] = err == nil
			e.index[f] = k
		}
	}
	for _, f := range c.funcs {
		if f.File == "" {
			continue
		}
		_, err := c.t.FindFDE(f.Addr)
		e.fileHas[f.File] = e.fileHas[f.File] || err == nil
	}
	return e
}

// causeAt classifies the missing SFrame at pc, in function name (of the
// file's STT_FILE input file, "" when unknown).
func (c *checker) causeAt(pc uint64, name, file string) string {
	if c.isStub(pc, name) {
		return CauseStub
	}
	if c.cfi == nil {
		return CauseNoCFI
	}
	fde := c.cfi.Find(pc)
	if fde == nil {
		return CauseNoCFI
	}
	e := c.gaps
	if e.onlyStubs {
		if c.l.Kind == "REL" {
			return CauseLost // an object's own section: no linker was involved
		}
		return CauseDropped
	}
	if file != "" {
		if e.fileHas[file] {
			return CauseLost
		}
		return CauseNoSFrameInput
	}
	k, ok := e.index[fde]
	if !ok {
		return CauseNoSFrameInput
	}
	// Inputs are linked whole: an FDE without SFrame between two FDEs
	// with it, in link order, belongs to an input that carried SFrame.
	prev, next := k > 0 && e.has[k-1], k+1 < len(e.order) && e.has[k+1]
	if prev && next {
		return CauseLost
	}
	return CauseNoSFrameInput
}

// isDefect reports whether a cause is an error without --strict.
func isDefect(cause string) bool { return cause == CauseLost || cause == CauseDropped }

// gapSeverity is the severity of code left without SFrame for cause.
func (c *checker) gapSeverity(cause string) Severity {
	if isDefect(cause) || c.opts.Strict {
		return SevError
	}
	return SevNote
}

// gapMessage explains a cause in a finding.
func gapMessage(cause, file string) string {
	var why string
	switch cause {
	case CauseNoCFI:
		why = "no CFI describes it either (assembly without CFI directives): coverage, not a defect of the section"
	case CauseStub:
		why = "code the linker wrote: coverage, not a defect of the section"
	case CauseNoSFrameInput:
		why = "its input carried CFI but no SFrame (crt files, libc.a or libgcc.a members, objects assembled without --gsframe; inferred from the link order): coverage"
	case CauseInexpressible:
		why = "its CFI is inexpressible in the section's version: producers leave it out"
	case CauseLost:
		why = "its input carried SFrame (inferred from its neighbours in .eh_frame's link order or its STT_FILE group) but this FDE is gone: a producer dropped it"
	case CauseDropped:
		why = "the section holds only the linker's stub FDEs while the inputs' code has CFI: the linker dropped the inputs' SFrame"
	}
	if file != "" {
		why += " [input " + file + "]"
	}
	return fmt.Sprintf("%s: %s", cause, why)
}

// noteGap counts function i under cause.
func (c *checker) noteGap(i int, cause string, bytes uint64) {
	if c.gapIdx == nil {
		c.gapIdx = map[string]int{}
	}
	k, ok := c.gapIdx[cause]
	if !ok {
		k = len(c.r.Gaps)
		c.gapIdx[cause] = k
		c.r.Gaps = append(c.r.Gaps, Gap{Cause: cause, Error: c.gapSeverity(cause) == SevError})
	}
	g := &c.r.Gaps[k]
	g.Functions++
	g.Bytes += bytes
	if len(g.Names) < maxGapNames {
		g.Names = append(g.Names, c.funcs[i].Name)
	}
	if f := c.funcs[i].File; f != "" && len(g.Inputs) < maxGapNames && !contains(g.Inputs, f) {
		g.Inputs = append(g.Inputs, f)
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// ByteClass is a share of the executable bytes (Report.Bytes): every
// byte of the executable segments (sections, for an object) is in one.
type ByteClass struct {
	Class string `json:"class"`
	Bytes uint64 `json:"bytes"`
	// Judged: the class's bytes are compared with the CFI (where it has
	// rows) and, where executed, by the dynamic check.
	Judged bool `json:"judged"`
}

// Classes of executable bytes besides the gap causes.
const (
	BytesInFDE       = "in an FDE, in a function"
	BytesFDENoSymbol = "in an FDE, outside every function symbol"
	BytesNoSymbol    = "no FDE, outside every function symbol (padding, alignment, code without a symbol)"
	BytesNotCode     = "not code: a non-executable section in an executable segment"
	BytesNoSection   = "in no section (headers, gaps between sections)"
)

// accountBytes sorts every executable byte into a class.
func (c *checker) accountBytes() {
	if c.t == nil {
		return
	}
	counts := map[string]uint64{}
	var order []string
	add := func(class string, n uint64) {
		if n == 0 {
			return
		}
		if _, ok := counts[class]; !ok {
			order = append(order, class)
		}
		counts[class] += n
	}
	// Function ranges with their gap cause ("" when an FDE covers them).
	fi := 0
	for _, reg := range c.l.Regions {
		for pc := reg.Addr; pc < reg.end(); {
			sec := c.l.allocSectionAt(pc)
			if sec == nil {
				next := c.l.nextSection(pc, reg.end())
				add(BytesNoSection, next-pc)
				pc = next
				continue
			}
			end := min(sec.Addr+sec.Size, reg.end())
			if sec.Flags&elf.SHF_EXECINSTR == 0 {
				add(BytesNotCode, end-pc)
				pc = end
				continue
			}
			for pc < end {
				for fi < len(c.funcs) && c.funcs[fi].Addr+c.funcs[fi].Size <= pc {
					fi++
				}
				if fi < len(c.funcs) && c.funcs[fi].Addr <= pc {
					f := c.funcs[fi]
					hi := min(f.Addr+f.Size, end)
					cov := c.covered(pc, hi, false)
					add(BytesInFDE, cov)
					if cause := c.cause[fi]; cause != "" {
						add(cause, hi-pc-cov)
					} else {
						add(BytesNoSymbol, hi-pc-cov)
					}
					pc = hi
					continue
				}
				hi := end
				if fi < len(c.funcs) && c.funcs[fi].Addr < hi {
					hi = c.funcs[fi].Addr
				}
				cov := c.covered(pc, hi, false)
				add(BytesFDENoSymbol, cov)
				add(BytesNoSymbol, hi-pc-cov)
				pc = hi
			}
		}
	}
	for _, class := range order {
		c.r.Bytes = append(c.r.Bytes, ByteClass{Class: class, Bytes: counts[class],
			Judged: class == BytesInFDE || class == BytesFDENoSymbol})
	}
}
