package pipelines

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// notForCheck are the generator's patterns whose code check cannot judge
// by running each function from its own entry, as it does any file: a
// signal trampoline (entered by a signal, not a call), a switch to a
// fresh stack (outermost from there on, by the program's own account),
// and far code (its CFI is in .debug_frame, which strip --strip-debug
// removes, leaving check nothing to compare). `sfconform run` judges
// them against the generator's own rules.
var notForCheck = map[string]bool{"signal": true, "signal-empty-fde": true, "new-stack": true, "far-code": true}

// checkable are the target's patterns check can judge and SFrame version
// v expresses (none for version 1: the generator writes v2 and v3).
func checkable(tg target.Target, v int) []string {
	var out []string
	for _, info := range gen.Catalog() {
		if notForCheck[info.Name] || !slices.Contains(info.Targets, tg) || !slices.Contains(info.Versions, v) {
			continue
		}
		out = append(out, info.Name)
	}
	return out
}

// generatedSeeds are the seeds of the generated programs the scenario
// builds (each with the patterns the series' SFrame version expresses).
var generatedSeeds = []int64{1, 2, 3}

// generated: programs of package gen (the ones `sfconform run` makes:
// every prologue and epilogue pattern of the target, far code, PLT-like
// stubs, hot and cold parts) as GNU as source, assembled with --gsframe
// and linked at gen's addresses as the gas producer links them, then
// through a pipeline step: ld -r twice before the final link, and
// strip --strip-debug after it. Each output is judged by check, by
// emulation when the run is dynamic (the programs have no C library, so
// check runs every function of theirs from its entry).
func (b *build) generated() []Row {
	var rows []Row
	pats := checkable(b.tg, b.tc.SFrameVersion)
	if len(pats) == 0 {
		return []Row{{Scenario: Generated, Case: "all", Toolchain: b.tc.Name, Target: b.tg.Name(), Status: NotPossible,
			Detail: fmt.Sprintf("the generator's patterns are SFrame v2 and v3 ones; gas %s writes v%d", b.tc.Version, b.tc.SFrameVersion)}}
	}
	seeds := b.cfg.Seeds
	if seeds == nil {
		seeds = generatedSeeds
	}
	for i, seed := range seeds {
		p, err := gen.Generate(b.tg, seed, gen.Options{SFrameVersion: b.tc.SFrameVersion, Patterns: pats})
		if err != nil {
			rows = append(rows, b.fail(Generated, fmt.Sprintf("seed %d", seed), nil, err))
			continue
		}
		name := fmt.Sprintf("gen%d", seed)
		src, obj := b.out(name+".s"), b.out(name+".o")
		if err := os.WriteFile(src, []byte(p.Assembly()+p.NoExecStack()), 0o644); err != nil {
			return append(rows, b.fail(Generated, name, nil, err))
		}
		r, err := b.tc.Assemble(src, obj, "--gsframe")
		cmds := []string{b.clean(r.String())}
		if err != nil {
			rows = append(rows, b.fail(Generated, fmt.Sprintf("seed %d", seed), cmds, err))
			continue
		}
		link := func(out string, objs ...string) (string, error) {
			l := toolchain.Link{Output: out, Objects: objs, Text: p.Base, Entry: p.Entry}
			if len(p.FarCode) > 0 {
				l.Sections = map[string]uint64{gen.FarSection: p.FarBase}
			}
			r, err := b.tc.Link(l)
			return b.clean(r.String()), err
		}
		what := fmt.Sprintf("seed %d (%d functions, SFrame v%d patterns)", seed, len(p.Funcs), b.tc.SFrameVersion)
		// As linked, then strip --strip-debug of the linked file.
		linked := b.out(name)
		c, err := link(linked, obj)
		if err != nil {
			rows = append(rows, b.fail(Generated, what+": as linked", append(cmds, c), err))
			continue
		}
		rw := b.generatedRow(what+": as linked", linked, append(cmds, c))
		if i == 0 {
			rw.Control = b.control(linked)
		}
		rows = append(rows, rw)
		if b.strip != "" {
			stripped := b.out(name + "-strip-debug")
			c2, _, err := b.run(b.strip, "--strip-debug", "-o", stripped, linked)
			if err != nil {
				rows = append(rows, b.fail(Generated, what+": strip --strip-debug", append(cmds, c, c2), err))
			} else {
				rows = append(rows, b.generatedRow(what+": strip --strip-debug", stripped, append(cmds, c, c2)))
			}
		}
		// ld -r twice, then the final link.
		r1, r2, final := b.out(name+"-r1.o"), b.out(name+"-r2.o"), b.out(name+"-r")
		rcmds := append([]string(nil), cmds...)
		var rerr error
		for _, st := range [][2]string{{obj, r1}, {r1, r2}} {
			args := append(append([]string{}, b.tc.LDFlags...), "-r", "-o", st[1], st[0])
			c, _, err := b.run(b.tc.LD, args...)
			rcmds = append(rcmds, c)
			if err != nil {
				rerr = err
				break
			}
		}
		if rerr == nil {
			var c3 string
			c3, rerr = link(final, r2)
			rcmds = append(rcmds, c3)
		}
		if rerr != nil {
			rw := b.fail(Generated, what+": ld -r twice, then linked", rcmds, rerr)
			rw.Status, rw.Detail = Finding, strings.Replace(rw.Detail, "build failed", "the link failed", 1)
			rows = append(rows, rw)
			continue
		}
		rows = append(rows, b.generatedRow(what+": ld -r twice, then linked", final, rcmds))
	}
	return rows
}

func (b *build) generatedRow(cs, out string, cmds []string) Row {
	r, err := b.judge(out)
	rw := row(Generated, cs, b.tc, b.tg, r, err)
	rw.Commands = cmds
	return rw
}
