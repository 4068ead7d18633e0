package check

import (
	"fmt"
	"sort"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/verdict"
)

// failGroup is one dynamic finding: every failing step with the same
// verdict, field, function and SFrame row of the frame that went wrong.
type failGroup struct {
	f     Finding
	fn    int // the function the finding is about
	count int
}

type groupKey struct {
	verdict, field, fn, row string
	sev                     Severity
}

// funcAt is the index of the function holding pc, -1 when none does.
func (c *checker) funcAt(pc uint64) int {
	i := sort.Search(len(c.funcs), func(i int) bool { return c.funcs[i].Addr > pc }) - 1
	if i >= 0 && pc < c.funcs[i].Addr+c.funcs[i].Size {
		return i
	}
	return -1
}

// cfiTextAt is the CFI row at pc in the SFrame notation of the section's
// version ("" when the CFI has none).
func (c *checker) cfiTextAt(pc uint64, version int) string {
	if c.cfi == nil {
		return ""
	}
	fde := c.cfi.Find(pc)
	if fde == nil {
		return "no CFI FDE"
	}
	row, ok := cfi.At(c.cfiRowsOf(fde), pc)
	if !ok {
		return "no CFI row"
	}
	return cfiText(c.l.Target, row, fde)
}

// group files a failing step of function run's variant v under its
// group, creating the group (and its finding, which describes this first
// occurrence) when it is new.
func (c *checker) group(fail harness.Failure, delta uint64, run, v int) *failGroup {
	j := fail.Judgement.Frame
	if j < 0 || j >= len(fail.Expected) {
		j = 0
	}
	// A frame's PC, SP and FP come from the row of the frame below it
	// (its callee); its CFA and whether it is outermost from its own.
	if f := fail.Judgement.Field; j > 0 && (f == "pc" || f == "sp" || f == "fp") {
		j--
	}
	var pc uint64
	inStubs := false
	if len(fail.Expected) > 0 {
		pc = fail.Expected[j].PC
		inStubs = pc < emu.CodeBase+imageBase
		pc -= delta
		if j > 0 {
			pc-- // a caller is looked up at its return address - 1
		}
	} else {
		pc = fail.PC - delta
	}
	fn, name, file := c.funcAt(pc), hex(pc), ""
	if inStubs {
		name = "<check's stubs>"
	} else if fn >= 0 {
		name, file = c.funcs[fn].Name, c.funcs[fn].File
	}
	version := 0
	if len(c.r.Sections) > 0 {
		version = c.r.Sections[0].Version
	}
	rowKey, sfText, off := "no FDE", "", -1
	if sf, err := c.t.FindFDE(pc); err == nil && !inStubs {
		version = int(sf.Section().Header.Version)
		off = sf.Offset
		rowKey = fmt.Sprintf("FDE 0x%x", sf.Start)
		if row, err := sf.FindRow(pc); err == nil {
			rowKey += fmt.Sprintf(" row +%d", row.Start)
			sfText = ruleText(c.l.Target, row)
		} else {
			sfText = "no row at this PC"
		}
	} else if !inStubs {
		sfText = "no FDE at this PC"
	}
	sev, why, gapCause := SevError, "", ""
	if fail.Judgement.Verdict == verdict.NoInfo && rowKey == "no FDE" && !inStubs {
		cause := ""
		if fn >= 0 {
			cause = c.cause[fn]
		}
		if cause == "" {
			cause = c.causeAt(pc, name, file)
		}
		sev, why = c.gapSeverity(cause), "code without SFrame reached ("+cause+"): "
		gapCause = cause
	}
	k := groupKey{fail.Judgement.Verdict.String(), fail.Judgement.Field, name, rowKey, sev}
	if g := c.groups[k]; g != nil {
		g.count++
		return g
	}
	at := fn
	if at < 0 || inStubs {
		at = run
	}
	msg := why + fmt.Sprintf("%s at frame %d (%s), row of %s, %s; first in %s variant %d, step %d (%s): %s; expected %s, got %s",
		fail.Judgement.Verdict, fail.Judgement.Frame, fail.Judgement.Field, name, rowKey,
		c.funcs[run].Name, v, fail.Step, fail.Insn, fail.Judgement.Detail,
		framesText(fail.Expected, delta), framesText(fail.Got, delta))
	if fail.Err != nil {
		msg += fmt.Sprintf(" (%v)", fail.Err)
	}
	o, fo := c.sframeOffset(off)
	g := &failGroup{fn: at, count: 1, f: Finding{Kind: KindDynamic, Severity: sev, PC: hex(pc), Offset: o, FileOffset: fo,
		Message: msg, SFrame: sfText, CFI: c.cfiTextAt(pc, version), Cause: gapCause}}
	if c.groups == nil {
		c.groups = map[groupKey]*failGroup{}
	}
	c.groups[k] = g
	c.groupOrder = append(c.groupOrder, g)
	return g
}

// flushGroups reports every group, in the order they were first seen.
func (c *checker) flushGroups() {
	for _, g := range c.groupOrder {
		g.f.Count = g.count
		if g.count > 1 {
			g.f.Message += fmt.Sprintf(" [%d failing steps in this group]", g.count)
		}
		c.add(g.fn, g.f)
	}
	c.r.Summary.Ungrouped = c.ungrouped
}
