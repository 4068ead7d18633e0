package pipelines

import (
	"bytes"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/check"
)

func (b *build) scenario(sc string) []Row {
	switch sc {
	case PostLink:
		return b.postLink()
	case GCSections:
		return b.gcSections()
	case LDR:
		return b.ldR()
	case COMDAT:
		return b.comdat()
	case LTO:
		return b.lto()
	case FarCode:
		return b.farCode()
	case LLD:
		return b.lld()
	case BOLT:
		return b.bolt()
	case Generated:
		return b.generated()
	}
	return []Row{{Scenario: sc, Case: "all", Toolchain: b.tc.Name, Target: b.tg.Name(), Status: NotPossible, Detail: "unknown scenario"}}
}

func (b *build) fail(sc, cs string, cmds []string, err error) Row {
	return Row{Scenario: sc, Case: cs, Toolchain: b.tc.Name, Target: b.tg.Name(), Status: NotPossible,
		Detail: "build failed: " + oneLine(err.Error()), Commands: cmds}
}

func (b *build) out(name string) string { return filepath.Join(b.dir, name) }

// sframeOf returns the .sframe section's type and contents.
func sframeOf(path string) (string, []byte) {
	f, err := elf.Open(path)
	if err != nil {
		return "unreadable: " + err.Error(), nil
	}
	defer f.Close()
	s := f.Section(".sframe")
	if s == nil {
		return "absent", nil
	}
	if s.Type == elf.SHT_NOBITS {
		return "NOBITS", nil
	}
	d, err := s.Data()
	if err != nil {
		return "unreadable: " + err.Error(), nil
	}
	return fmt.Sprintf("%d bytes", len(d)), d
}

// postLink: strip, strip --strip-debug and the debug-link pair on the
// linked programs (PIE, -O2 -g), and strip --strip-debug on an object.
func (b *build) postLink() []Row {
	var rows []Row
	if b.toolErrs != "" {
		return []Row{{Scenario: PostLink, Case: "all", Toolchain: b.tc.Name, Target: b.tg.Name(), Status: NotPossible, Detail: b.toolErrs}}
	}
	for _, p := range programs {
		base := b.out(p.name + "-pie")
		c, err := b.compile(p.cxx, base, []string{"-O2", "-g", "-pie", "-fPIE"}, p.srcs...)
		if err != nil {
			rows = append(rows, b.fail(PostLink, p.name, []string{c}, err))
			continue
		}
		_, orig := sframeOf(base)
		r, err := b.judge(base)
		rw := row(PostLink, p.name+": as linked (-O2 -g, PIE)", b.tc, b.tg, r, err)
		rw.Commands = []string{c}
		if rw.Status == Clean {
			rw.Detail = fmt.Sprintf(".sframe %d bytes", len(orig))
		}
		rows = append(rows, rw)

		type step struct {
			cs    string
			cmds  [][]string
			out   string
			extra func() string
		}
		dbg := b.out(p.name + ".debug")
		steps := []step{
			{"strip", [][]string{{b.strip, "-o", b.out(p.name + "-strip"), base}}, b.out(p.name + "-strip"), nil},
			{"strip --strip-debug", [][]string{{b.strip, "--strip-debug", "-o", b.out(p.name + "-strip-debug"), base}}, b.out(p.name + "-strip-debug"), nil},
			{"objcopy --only-keep-debug + --add-gnu-debuglink", [][]string{
				{b.objcopy, "--only-keep-debug", base, dbg},
				{b.strip, "--strip-debug", "-o", b.out(p.name + "-nodebug"), base},
				{b.objcopy, "--add-gnu-debuglink=" + dbg, b.out(p.name + "-nodebug"), b.out(p.name + "-debuglink")},
			}, b.out(p.name + "-debuglink"), func() string {
				k, _ := sframeOf(dbg)
				return "; .sframe in the --only-keep-debug file: " + k
			}},
		}
		// elfutils' strip and dwz (the host suite's), on the same input.
		edbg := b.out(p.name + ".eu-debug")
		steps = append(steps,
			step{"eu-strip", [][]string{{b.cfg.tools.euStrip, "-o", b.out(p.name + "-eu-strip"), base}}, b.out(p.name + "-eu-strip"), nil},
			step{"eu-strip -g", [][]string{{b.cfg.tools.euStrip, "-g", "-o", b.out(p.name + "-eu-strip-g"), base}}, b.out(p.name + "-eu-strip-g"), nil},
			step{"eu-strip -f (separate debug file)", [][]string{{b.cfg.tools.euStrip, "-f", edbg, "-o", b.out(p.name + "-eu-strip-f"), base}}, b.out(p.name + "-eu-strip-f"), func() string {
				k, _ := sframeOf(edbg)
				return "; .sframe in the -f debug file: " + k
			}},
			step{"dwz", [][]string{{b.cfg.tools.dwz, "-o", b.out(p.name + "-dwz"), base}}, b.out(p.name + "-dwz"), nil},
		)
		for i, st := range steps {
			var cmds []string
			var ferr error
			for _, a := range st.cmds {
				c, _, err := b.run(a[0], a[1:]...)
				cmds = append(cmds, c)
				if err != nil {
					ferr = err
					break
				}
			}
			if ferr != nil {
				rows = append(rows, b.fail(PostLink, p.name+": "+st.cs, cmds, ferr))
				continue
			}
			kind, got := sframeOf(st.out)
			r, err := b.judge(st.out)
			rw := row(PostLink, p.name+": "+st.cs, b.tc, b.tg, r, err)
			rw.Commands = append([]string{c}, cmds...)
			keep := ".sframe kept, byte-identical"
			switch {
			case got == nil:
				keep = ".sframe dropped (" + kind + ")"
				rw.Status = Finding
			case !bytes.Equal(got, orig):
				keep = ".sframe kept but changed (" + kind + ")"
			}
			if r != nil && err == nil {
				keep += ", functions from " + r.FuncSource
			}
			rw.Detail = strings.TrimPrefix(rw.Detail+"; "+keep, "; ")
			if st.extra != nil {
				rw.Detail += st.extra()
			}
			if i == 0 || st.cs == "eu-strip" {
				rw.Control = b.control(st.out)
			}
			rows = append(rows, rw)
		}
	}
	// An object through strip --strip-debug: .sframe and its relocations
	// must survive the rewrite of the symbol table.
	obj := b.out("excpt.o")
	c, err := b.compile(true, obj, []string{"-O2", "-g", "-c"}, "excpt.cc")
	if err != nil {
		return append(rows, b.fail(PostLink, "excpt.o: strip --strip-debug", []string{c}, err))
	}
	_, orig := sframeOf(obj)
	so := b.out("excpt-strip-debug.o")
	c2, _, err := b.run(b.strip, "--strip-debug", "-o", so, obj)
	if err != nil {
		return append(rows, b.fail(PostLink, "excpt.o: strip --strip-debug", []string{c, c2}, err))
	}
	kind, got := sframeOf(so)
	r, err := b.judge(so)
	rw := row(PostLink, "excpt.o: strip --strip-debug", b.tc, b.tg, r, err)
	rw.Commands = []string{c, c2}
	keep := ".sframe kept, byte-identical"
	switch {
	case got == nil:
		keep, rw.Status = ".sframe dropped ("+kind+")", Finding
	case !bytes.Equal(got, orig):
		keep = ".sframe kept but changed (" + kind + ")"
	}
	rw.Detail = strings.TrimPrefix(rw.Detail+"; "+keep+", relocatable object (static check only)", "; ")
	return append(rows, rw)
}

// funcSyms are the names of the defined function symbols of an ELF file.
func funcSyms(path string) (map[string]elf.SymBind, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	out := map[string]elf.SymBind{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Name != "" {
			out[s.Name] = elf.ST_BIND(s.Info)
		}
	}
	return out, nil
}

// gcSections: hello.c linked with excpt2.cc, whose fa() and the
// template and inline instances only it uses are never called: with
// -ffunction-sections -Wl,--gc-sections they are collected, and their
// FDEs must go with them.
func (b *build) gcSections() []Row {
	const cs = "hello.c + unused excpt2.cc, -ffunction-sections, PIE"
	ho, xo := b.out("gc-hello.o"), b.out("gc-excpt2.o")
	var cmds []string
	for _, c := range []struct {
		cxx      bool
		out, src string
	}{{false, ho, "hello.c"}, {true, xo, "excpt2.cc"}} {
		cmd, err := b.compile(c.cxx, c.out, []string{"-O2", "-ffunction-sections", "-fPIE", "-c"}, c.src)
		cmds = append(cmds, cmd)
		if err != nil {
			return []Row{b.fail(GCSections, cs, cmds, err)}
		}
	}
	nogc, gc := b.out("nogc"), b.out("gc")
	c1, err := b.compile(true, nogc, []string{"-pie"}, ho, xo)
	if err != nil {
		return []Row{b.fail(GCSections, cs, append(cmds, c1), err)}
	}
	c2, err := b.compile(true, gc, []string{"-pie", "-Wl,--gc-sections"}, ho, xo)
	cmds = append(cmds, c2)
	if err != nil {
		return []Row{b.fail(GCSections, cs, cmds, err)}
	}
	rn, err := b.judge(nogc)
	if err != nil {
		return []Row{b.fail(GCSections, cs+" (without --gc-sections)", append(cmds, c1), err)}
	}
	r, err := b.judge(gc)
	rw := row(GCSections, cs, b.tc, b.tg, r, err)
	rw.Commands = cmds
	if err != nil {
		return []Row{rw}
	}
	before, err1 := funcSyms(nogc)
	after, err2 := funcSyms(gc)
	if err1 != nil || err2 != nil {
		rw.Status, rw.Detail = Finding, fmt.Sprintf("symbols: %v %v", err1, err2)
		return []Row{rw}
	}
	hadFDE := map[string]bool{}
	for _, f := range rn.Functions {
		hadFDE[f.Name] = f.HasFDE
	}
	var collected, lost []string
	withFDE := 0
	for n := range before {
		if _, ok := after[n]; !ok {
			collected = append(collected, n)
			if hadFDE[n] {
				withFDE++
			}
		}
	}
	// Code that stays (functions and the linker's stubs, as check names
	// them) must keep the FDE it had without --gc-sections.
	for _, f := range r.Functions {
		if hadFDE[f.Name] && !f.HasFDE {
			lost = append(lost, f.Name)
		}
	}
	sort.Strings(collected)
	sort.Strings(lost)
	want := rn.Summary.FDEs - withFDE
	var notes []string
	if len(collected) == 0 {
		rw.Status = NotPossible
		notes = append(notes, "ld collected no function: nothing to judge")
	}
	if len(lost) > 0 {
		rw.Status = Finding
		notes = append(notes, fmt.Sprintf("%d kept functions or stubs lost their FDE: %s", len(lost), strings.Join(firstN(lost, 4), " ")))
	}
	if r.Summary.FDEs != want {
		rw.Status = Finding
		notes = append(notes, fmt.Sprintf("%d FDEs, want %d (%d without --gc-sections, less %d collected functions that had one)", r.Summary.FDEs, want, rn.Summary.FDEs, withFDE))
	}
	notes = append(notes, fmt.Sprintf("%d functions collected (%d with an FDE: %s); FDEs %d -> %d", len(collected), withFDE, strings.Join(firstN(collected, 3), " "), rn.Summary.FDEs, r.Summary.FDEs))
	rw.Detail = strings.TrimPrefix(rw.Detail+"; "+strings.Join(notes, "; "), "; ")
	rw.Control = b.control(gc)
	return []Row{rw}
}

// ldR: ld -r twice, then a final link with the driver, for each program.
func (b *build) ldR() []Row {
	var rows []Row
	for _, p := range programs {
		var cmds, objs []string
		ok := true
		for _, s := range p.srcs {
			o := b.out("r-" + strings.TrimSuffix(s, filepath.Ext(s)) + ".o")
			c, err := b.compile(p.cxx, o, []string{"-O2", "-fPIE", "-c"}, s)
			cmds = append(cmds, c)
			if err != nil {
				rows, ok = append(rows, b.fail(LDR, p.name, cmds, err)), false
				break
			}
			objs = append(objs, o)
		}
		if !ok {
			continue
		}
		r1, r2, final := b.out(p.name+"-r1.o"), b.out(p.name+"-r2.o"), b.out(p.name+"-r-final")
		steps := []struct {
			cs   string
			args []string
			out  string
		}{
			{"ld -r " + filepath.Base(objs[0]), append(append([]string{}, b.tc.LDFlags...), "-r", "-o", r1, objs[0]), r1},
			{"ld -r (the first) " + strings.Join(baseAll(objs[1:]), " "), append(append(append([]string{}, b.tc.LDFlags...), "-r", "-o", r2, r1), objs[1:]...), r2},
		}
		if len(objs) == 1 {
			steps[1].cs = "ld -r (the first) again"
		}
		for _, st := range steps {
			c, _, err := b.run(b.tc.LD, st.args...)
			cmds = append(cmds, c)
			if err != nil {
				rows, ok = append(rows, b.fail(LDR, p.name+": "+st.cs, cmds, err)), false
				break
			}
			r, err := b.judge(st.out)
			rw := row(LDR, p.name+": "+st.cs, b.tc, b.tg, r, err)
			rw.Commands = append([]string(nil), cmds...)
			rw.Detail = strings.TrimPrefix(rw.Detail+"; relocatable (static check only)", "; ")
			rows = append(rows, rw)
		}
		if !ok {
			continue
		}
		c, err := b.compile(p.cxx, final, []string{"-pie"}, r2)
		cmds = append(cmds, c)
		if err != nil {
			// ld refusing its own -r output is a result, not a build problem.
			rw := b.fail(LDR, p.name+": final link of the ld -r output (PIE)", cmds, err)
			rw.Status, rw.Detail = Finding, strings.Replace(rw.Detail, "build failed", "the final link failed", 1)
			rows = append(rows, rw)
			continue
		}
		r, err := b.judge(final)
		rw := row(LDR, p.name+": final link of the ld -r output (PIE)", b.tc, b.tg, r, err)
		rw.Commands = cmds
		rw.Control = b.control(final)
		rows = append(rows, rw)
	}
	return rows
}

func baseAll(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, filepath.Base(p))
	}
	return out
}

// comdat: excpt.cc and excpt2.cc compiled apart, so that the inline
// function, the template instances and libstdc++'s inline code they share
// are in both objects as COMDAT groups, linked into a PIE: one copy of
// each stays, with one FDE.
func (b *build) comdat() []Row {
	var rows []Row
	for _, opt := range []string{"-O2", "-O0"} {
		cs := "excpt.o + excpt2.o, " + opt + ", PIE"
		o1, o2 := b.out("comdat"+opt+"-excpt.o"), b.out("comdat"+opt+"-excpt2.o")
		var cmds []string
		c1, err := b.compile(true, o1, []string{opt, "-fPIE", "-c"}, "excpt.cc")
		cmds = append(cmds, c1)
		if err != nil {
			rows = append(rows, b.fail(COMDAT, cs, cmds, err))
			continue
		}
		c2, err := b.compile(true, o2, []string{opt, "-fPIE", "-c"}, "excpt2.cc")
		cmds = append(cmds, c2)
		if err != nil {
			rows = append(rows, b.fail(COMDAT, cs, cmds, err))
			continue
		}
		out := b.out("comdat" + opt)
		c3, err := b.compile(true, out, []string{"-pie"}, o1, o2)
		cmds = append(cmds, c3)
		if err != nil {
			rows = append(rows, b.fail(COMDAT, cs, cmds, err))
			continue
		}
		s1, err1 := funcSyms(o1)
		s2, err2 := funcSyms(o2)
		r, err := b.judge(out)
		rw := row(COMDAT, cs, b.tc, b.tg, r, err)
		rw.Commands = cmds
		if err != nil || err1 != nil || err2 != nil {
			if rw.Status == Clean {
				rw.Status, rw.Detail = Finding, fmt.Sprintf("symbols: %v %v", err1, err2)
			}
			rows = append(rows, rw)
			continue
		}
		var shared []string
		for n, bind := range s1 {
			if bind2, ok := s2[n]; ok && bind == elf.STB_WEAK && bind2 == elf.STB_WEAK {
				shared = append(shared, n)
			}
		}
		sort.Strings(shared)
		fns := map[string]check.FuncReport{}
		for _, f := range r.Functions {
			fns[f.Name] = f
		}
		var noFDE []string
		for _, n := range shared {
			if f, ok := fns[n]; ok && !f.HasFDE {
				noFDE = append(noFDE, n)
			}
		}
		var notes []string
		if len(shared) == 0 {
			rw.Status = NotPossible
			notes = append(notes, "no function in both objects: nothing deduplicated")
		}
		if len(noFDE) > 0 {
			rw.Status = Finding
			notes = append(notes, fmt.Sprintf("%d deduplicated functions without an FDE: %s", len(noFDE), strings.Join(firstN(noFDE, 3), " ")))
		}
		notes = append(notes, fmt.Sprintf("%d functions in both objects as COMDAT (weak), one copy kept; %d FDEs", len(shared), r.Summary.FDEs))
		rw.Detail = strings.TrimPrefix(rw.Detail+"; "+strings.Join(notes, "; "), "; ")
		rw.Control = b.control(out)
		rows = append(rows, rw)
	}
	return rows
}
