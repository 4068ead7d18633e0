package pipelines

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// producer is one assembler of the mixed links: a gas series, or llvm-mc
// (which links with no ld of its own), with the objects it made.
type producer struct {
	name string
	ver  int               // SFrame version it writes
	obj  map[string]string // source ("excpt.cc") to object
	cmd  map[string]string // source to the commands that made the object
}

// mixedSources are the objects of the mixed links: excpt.o and excpt2.o
// (the program), and hello.c's functions as a third object (its main
// renamed, so that it links beside excpt's).
var mixedSources = []struct {
	src, obj string
	cxx      bool
	extra    []string
}{
	{"excpt.cc", "excpt.o", true, nil},
	{"excpt2.cc", "excpt2.o", true, nil},
	{"hello.c", "hello.o", false, []string{"-Dmain=hello_main"}},
}

// runMixed links objects from different assemblers with every series'
// ld: excpt.o from one and excpt2.o from another (gas series and llvm-mc,
// every ordered pair), and, with three gas series, excpt.o, excpt2.o and
// hello.o from three different series (each rotation).
func runMixed(cfg Config, tg target.Target, cc [2]string, tcs []toolchain.Toolchain) ([]Row, []string) {
	var rows []Row
	var vers []string
	builds := map[string]*build{}
	var prods []producer
	for _, tc := range tcs {
		b, err := newBuild(cfg, tg, cc, tc)
		if err != nil {
			return append(rows, Row{Scenario: Mixed, Case: "all", Toolchain: tc.Name, Target: tg.Name(), Status: NotPossible, Detail: err.Error()}), vers
		}
		vers = append(vers, b.versions()...)
		builds[tc.Name] = b
		p := producer{name: tc.Name, ver: tc.SFrameVersion, obj: map[string]string{}, cmd: map[string]string{}}
		for _, m := range mixedSources {
			o := b.out("mixed-" + m.obj)
			c, err := b.compile(m.cxx, o, append([]string{"-O2", "-fPIE", "-c"}, m.extra...), m.src)
			if err != nil {
				return append(rows, Row{Scenario: Mixed, Case: "all", Toolchain: tc.Name, Target: tg.Name(), Status: NotPossible,
					Detail: "build failed: " + oneLine(err.Error())}), vers
			}
			p.obj[m.src], p.cmd[m.src] = o, c
		}
		prods = append(prods, p)
	}
	if len(tcs) == 0 {
		return rows, vers
	}
	// llvm-mc's objects: gcc's assembly (by the first series' driver),
	// assembled by llvm-mc --gsframe.
	llvm, lerr := toolchain.LLVM()
	for _, tc := range llvm {
		if tc.Target != tg {
			continue
		}
		if tc.SFrameVersion == 0 {
			rows = append(rows, Row{Scenario: Mixed, Case: "objects from " + tc.Name, Toolchain: tc.Name, Target: tg.Name(), Status: NotPossible,
				Detail: fmt.Sprintf("%s writes no SFrame for %s: %s", tc.Name, tg.Name(), oneLine(tc.SFrameUnsupportedReason()))})
			continue
		}
		b := builds[tcs[0].Name]
		vers = append(vers, fmt.Sprintf("%s (%s): llvm-mc %s, Debian package %s", tc.Name, tg.Name(), tc.Version, orDash(tc.Package)))
		p := producer{name: tc.Name, ver: tc.SFrameVersion, obj: map[string]string{}, cmd: map[string]string{}}
		ok := true
		for _, m := range mixedSources[:2] {
			s := b.out("llvm-" + strings.TrimSuffix(m.obj, ".o") + ".s")
			o := b.out("llvm-" + m.obj)
			driver := b.cc
			if m.cxx {
				driver = b.cxx
			}
			c1, _, err := b.run(driver, "-O2", "-fPIE", "-S", "-o", s, b.src(m.src))
			if err == nil {
				var r toolchain.Run
				r, err = tc.Assemble(s, o, "--gsframe")
				p.cmd[m.src] = c1 + "\n" + b.shell(tc.AS, append(append([]string{}, tc.ASFlags...), "--gsframe", "-o", o, s))
				if err != nil {
					err = fmt.Errorf("%v: %s", err, oneLine(r.Output))
				}
			}
			if err != nil {
				rows = append(rows, Row{Scenario: Mixed, Case: "objects from " + tc.Name, Toolchain: tc.Name, Target: tg.Name(), Status: NotPossible,
					Detail: "build failed: " + oneLine(err.Error())})
				ok = false
				break
			}
			p.obj[m.src] = o
		}
		if ok {
			prods = append(prods, p)
		}
	}
	if lerr != nil && len(llvm) == 0 {
		rows = append(rows, Row{Scenario: Mixed, Case: "objects from llvm-mc", Toolchain: "llvm-mc", Target: tg.Name(), Status: NotPossible, Detail: oneLine(lerr.Error())})
	}
	if len(prods) < 2 {
		return append(rows, Row{Scenario: Mixed, Case: "all", Toolchain: prods[0].name, Target: tg.Name(), Status: NotPossible,
			Detail: fmt.Sprintf("only one assembler writes SFrame for %s", tg.Name())}), vers
	}
	controlled := false
	link := func(parts []producer, srcs []string) {
		var names []string
		for i, p := range parts {
			names = append(names, fmt.Sprintf("%s %s (v%d)", mixedObj(srcs[i]), p.name, p.ver))
		}
		cs := strings.Join(names, " + ")
		for _, l := range tcs {
			lb := builds[l.Name]
			var tags []string
			for _, p := range parts {
				tags = append(tags, p.name)
			}
			out := lb.out("mixed-" + strings.Join(tags, "+"))
			args := []string{"-B" + lb.bdir + "/", "-pie", "-o", out}
			var cmds []string
			var objs []string
			for i, p := range parts {
				args = append(args, p.obj[srcs[i]])
				objs = append(objs, p.obj[srcs[i]])
				cmds = append(cmds, strings.Split(p.cmd[srcs[i]], "\n")...)
			}
			rw, ok := lb.mixedLink(cs, args, cmds, objs, parts, srcs)
			if ok && !controlled {
				rw.Control, controlled = lb.control(out), true
			}
			rows = append(rows, rw)
		}
	}
	for _, a := range prods {
		for _, c := range prods {
			if a.name != c.name {
				link([]producer{a, c}, []string{"excpt.cc", "excpt2.cc"})
			}
		}
	}
	if len(tcs) >= 3 {
		g := prods[:3] // the gas series, oldest first
		for r := 0; r < 3; r++ {
			link([]producer{g[r], g[(r+1)%3], g[(r+2)%3]}, []string{"excpt.cc", "excpt2.cc", "hello.c"})
		}
	}
	return rows, vers
}

func mixedObj(src string) string {
	for _, m := range mixedSources {
		if m.src == src {
			return m.obj
		}
	}
	return filepath.Base(src)
}

// mixedLink links one mixed set with this build's ld and judges it: what
// ld said, the output's sections, and for each input how many of its
// functions kept an FDE (every input carried SFrame, so all must). ok
// says whether there is an output with .sframe contents to control.
func (lb *build) mixedLink(cs string, args, cmds, objs []string, parts []producer, srcs []string) (Row, bool) {
	name := "ld " + lb.tc.Name
	cl, stderr, err := lb.run(lb.cxx, args...)
	cmds = append(cmds, cl)
	out := args[3]
	if err != nil {
		r := lb.fail(Mixed, cs, cmds, err)
		r.Toolchain, r.Status = name, Finding
		r.Detail = "ld refused the link: " + errorLine(stderr)
		return r, false
	}
	r, err := lb.judge(out)
	rw := row(Mixed, cs, lb.tc, lb.tg, r, err)
	rw.Toolchain, rw.Commands = name, cmds
	what := "output"
	if err == nil {
		var vs []string
		for _, s := range r.Sections {
			vs = append(vs, fmt.Sprintf("v%d (%d FDEs)", s.Version, s.NumFDEs))
		}
		what += " " + strings.Join(vs, " + ")
		if len(vs) == 0 {
			what += " without SFrame"
		}
		has := map[string]bool{}
		for _, f := range r.Functions {
			has[f.Name] = f.HasFDE
		}
		var kept []string
		for i, o := range objs {
			syms, serr := funcSyms(o)
			if serr != nil {
				continue
			}
			n, k := 0, 0
			for fn := range syms {
				if with, ok := has[fn]; ok {
					n++
					if with {
						k++
					}
				}
			}
			kept = append(kept, fmt.Sprintf("%s (v%d): %d of %d functions with an FDE", mixedObj(srcs[i]), parts[i].ver, k, n))
			if k < n {
				rw.Status = Finding
			}
		}
		what += "; " + strings.Join(kept, ", ")
	}
	if w := strings.TrimSpace(stderr); w != "" {
		what += "; ld said: " + oneLine(w)
	} else {
		what += "; ld said nothing"
	}
	rw.Detail = strings.TrimPrefix(rw.Detail+"; "+what, "; ")
	_, data := sframeOf(out)
	return rw, len(data) > 0
}
