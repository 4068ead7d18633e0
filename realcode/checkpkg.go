package realcode

import (
	"debug/elf"
	"fmt"
	"strings"
	"time"

	"github.com/sfconform/sfconform/check"
)

// WithCheck is a Checker that runs sfconform check (package check) on
// every file besides the StaticChecker: the static differential against
// the file's DWARF CFI at every instruction boundary, and with
// Options.Dynamic the emulation of every function from its entry. Its
// errors and warnings become findings of kind "check/<kind>"; its notes
// (what it could not judge) are Skipped. CheckTime is what it took.
type WithCheck struct {
	Static  *StaticChecker
	Options check.Options
}

func (c *WithCheck) Name() string { return "static+check" }

func (c *WithCheck) Check(f File) (*Report, error) {
	static := c.Static
	if static == nil {
		static = &StaticChecker{}
	}
	r, err := static.Check(f)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	cr, err := check.File(f.Path, c.Options)
	r.CheckTime = time.Since(t0)
	if err != nil {
		r.Skipped = append(r.Skipped, fmt.Sprintf("sfconform check: %v", err))
		return r, nil
	}
	r.Check = &cr.Summary
	// The code base's own functions, by address: glibc has static
	// functions of the same names as some of lua's.
	type span struct{ lo, hi uint64 }
	var own []span
	ownName := map[string]bool{}
	if ef, err := elf.Open(f.Path); err == nil {
		if syms, err := ef.Symbols(); err == nil {
			for _, s := range ownSymbols(syms, f) {
				own = append(own, span{s.Value, s.Value + max(s.Size, 1)})
				ownName[s.Name] = true
			}
		}
		ef.Close()
	}
	mine := func(fd check.Finding) bool {
		if len(f.Functions) == 0 || fd.Func == "" {
			return true
		}
		var pc uint64
		if _, err := fmt.Sscanf(fd.PC, "0x%x", &pc); err == nil {
			for _, sp := range own {
				if pc >= sp.lo && pc < sp.hi {
					return true
				}
			}
			return false
		}
		return ownName[fd.Func]
	}
	foreign := 0
	for _, fd := range cr.Findings {
		if fd.Severity == check.SevNote {
			continue
		}
		if !mine(fd) {
			// The C library and crt objects linked in: Debian builds
			// them without SFrame, so their CFI has no rows to match.
			foreign++
			continue
		}
		detail := fd.Message
		if fd.SFrame != "" || fd.CFI != "" {
			detail += fmt.Sprintf(" (SFrame %s, CFI %s)", fd.SFrame, fd.CFI)
		}
		addr := uint64(0)
		fmt.Sscanf(fd.PC, "0x%x", &addr)
		kind := "check/" + fd.Kind
		if fd.Kind == check.KindDynamic && strings.Contains(fd.Func, ".cold") {
			// Its own group: the dynamic check enters a cold part
			// from its first byte as if it were called (known.go).
			kind += "-cold"
		}
		r.Findings = append(r.Findings, Finding{Kind: kind, Tool: string(fd.Severity), Function: fd.Func, Addr: addr, Detail: detail})
	}
	if foreign > 0 {
		r.Skipped = append(r.Skipped, fmt.Sprintf("sfconform check: %d findings in functions not of the code base (the C library's and crt's, built without SFrame)", foreign))
	}
	return r, nil
}
