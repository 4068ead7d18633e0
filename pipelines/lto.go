package pipelines

import (
	"fmt"
	"strings"
)

// lto: excpt.cc + excpt2.cc with -flto. gcc records the assembler options
// of each compile in its LTO objects (COLLECT_AS_OPTIONS) and passes them
// to the assembler of the link-time compile, so -Wa,--gsframe given to the
// compiles must reach the link's as even when the link command lacks it.
// Three cases: compile and link in one command; compiles with
// -Wa,--gsframe and a link without it; one object with the option and one
// without (lto-wrapper then drops every -Wa option it cannot reconcile,
// with a warning).
func (b *build) lto() []Row {
	var rows []Row
	const opt = "-O2"
	one := b.out("lto-one")
	c, err := b.compile(true, one, []string{opt, "-g", "-flto", "-pie"}, "excpt.cc", "excpt2.cc")
	if err != nil {
		rows = append(rows, b.fail(LTO, "excpt: -flto, compile and link in one command (PIE)", []string{c}, err))
	} else {
		rows = append(rows, b.ltoRow("excpt: -flto, compile and link in one command (PIE)", one, []string{c}, "", true))
	}
	o1, o2, o2n := b.out("lto-excpt.o"), b.out("lto-excpt2.o"), b.out("lto-excpt2-nosframe.o")
	c1, err1 := b.compile(true, o1, []string{opt, "-g", "-flto", "-fPIE", "-c"}, "excpt.cc")
	c2, err2 := b.compile(true, o2, []string{opt, "-g", "-flto", "-fPIE", "-c"}, "excpt2.cc")
	// The same compile without -Wa,--gsframe.
	c3, _, err3 := b.run(b.cxx, "-B"+b.bdir+"/", opt, "-g", "-flto", "-fPIE", "-c", "-o", o2n, b.src("excpt2.cc"))
	if err := firstErr(err1, err2, err3); err != nil {
		return append(rows, b.fail(LTO, "excpt: -flto -c", []string{c1, c2, c3}, err))
	}
	for _, cs := range []struct {
		name string
		objs []string
		cmds []string
	}{
		{"excpt: -flto -c with -Wa,--gsframe, linked without it (PIE)", []string{o1, o2}, []string{c1, c2}},
		{"excpt: -flto, excpt.o with -Wa,--gsframe + excpt2.o without (PIE)", []string{o1, o2n}, []string{c1, c3}},
	} {
		out := b.out("lto-link-" + fmt.Sprint(len(rows)))
		args := append([]string{"-B" + b.bdir + "/", opt, "-flto", "-pie", "-o", out}, cs.objs...)
		cl, stderr, err := b.run(b.cxx, args...)
		cmds := append(append([]string(nil), cs.cmds...), cl)
		if err != nil {
			rows = append(rows, b.fail(LTO, cs.name, cmds, err))
			continue
		}
		rows = append(rows, b.ltoRow(cs.name, out, cmds, stderr, false))
	}
	return rows
}

// ltoRow judges an LTO link: it must carry .sframe (the option reached the
// link-time assembler); stderr is the link's messages (lto-wrapper's
// warning when it drops the option).
func (b *build) ltoRow(cs, out string, cmds []string, stderr string, control bool) Row {
	kind, data := sframeOf(out)
	if data == nil {
		rw := Row{Scenario: LTO, Case: cs, Toolchain: b.tc.Name, Target: b.tg.Name(), Status: Finding, Commands: cmds,
			Detail: ".sframe " + kind + ": --gsframe did not reach the link-time assembler"}
		if w := strings.TrimSpace(stderr); w != "" {
			rw.Detail += "; the link said: " + oneLine(w)
		}
		return rw
	}
	r, err := b.judge(out)
	rw := row(LTO, cs, b.tc, b.tg, r, err)
	rw.Commands = cmds
	rw.Detail = strings.TrimPrefix(rw.Detail+"; .sframe "+kind+", --gsframe reached the link-time assembler", "; ")
	if control {
		rw.Control = b.control(out)
	}
	return rw
}

// src is a source of check/testdata/programs by name.
func (b *build) src(name string) string { return b.cfg.Sources + "/" + name }

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
