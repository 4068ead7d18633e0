package pipelines

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// bolt: excpt linked with GNU ld keeping its relocations (-Wl,-q, which
// BOLT needs to move functions), then rewritten by llvm-bolt, once with
// its defaults and once reordering blocks and splitting functions. BOLT
// moves the functions into a new .text and keeps the original code as
// .bolt.org.text; it rewrites .eh_frame for the new code. The .sframe of
// the result must still be true for the code that runs: every function
// that had an FDE before keeps one, and check finds no error.
func (b *build) bolt() []Row {
	var rows []Row
	base := b.out("bolt-in")
	c, err := b.compile(true, base, []string{"-O2", "-g", "-no-pie", "-Wl,-q"}, "excpt.cc", "excpt2.cc")
	if err != nil {
		return []Row{b.fail(BOLT, "excpt: linked with -Wl,-q", []string{c}, err)}
	}
	r0, err := b.judge(base)
	if err != nil {
		return []Row{b.fail(BOLT, "excpt: linked with -Wl,-q", []string{c}, err)}
	}
	_, orig := sframeOf(base)
	had := map[string]bool{}
	for _, f := range r0.Functions {
		if f.HasFDE {
			had[f.Name] = true
		}
	}
	for i, opts := range [][]string{nil, {"-reorder-blocks=ext-tsp", "-split-functions", "-split-all-cold"}} {
		cs := "excpt: llvm-bolt"
		if len(opts) > 0 {
			cs += " " + strings.Join(opts, " ")
		}
		out := b.out(fmt.Sprintf("bolt-out%d", i))
		args := append([]string{base, "-o", out}, opts...)
		cb, _, err := b.run(b.cfg.tools.bolt, args...)
		cmds := []string{c, cb}
		if err != nil {
			rows = append(rows, b.fail(BOLT, cs, cmds, err))
			continue
		}
		r, err := b.judge(out)
		rw := row(BOLT, cs, b.tc, b.tg, r, err)
		rw.Commands = cmds
		var notes []string
		kind, got := sframeOf(out)
		switch {
		case got == nil:
			notes = append(notes, ".sframe dropped ("+kind+")")
			rw.Status = Finding
		case bytes.Equal(got, orig):
			notes = append(notes, ".sframe byte-identical to the input's")
		default:
			notes = append(notes, ".sframe rewritten ("+kind+")")
		}
		if err == nil {
			var lost []string
			for _, f := range r.Functions {
				if had[f.Name] && !f.HasFDE {
					lost = append(lost, f.Name)
				}
			}
			sort.Strings(lost)
			if len(lost) > 0 {
				rw.Status = Finding
				notes = append(notes, fmt.Sprintf("%d functions moved by BOLT lost their FDE: %s", len(lost), strings.Join(firstN(lost, 4), " ")))
			}
		}
		rw.Detail = strings.TrimPrefix(rw.Detail+"; "+strings.Join(notes, "; "), "; ")
		if i == 0 {
			rw.Control = b.control(out)
		}
		rows = append(rows, rw)
	}
	return rows
}
