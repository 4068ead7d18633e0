package realcode

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sfconform/sfconform/target"
)

// Options select a slice of the matrix code base x target x optimisation
// x assembler x link kind. An empty list means all.
type Options struct {
	Bases      []string
	Targets    []target.Target
	Opts       []string
	Assemblers []string // gas-2.40, gas-2.44, gas-2.47, llvm-mc-23
	Links      []string // obj, r, static, pie
	// Dir is where the files are made (kept for a look afterwards);
	// "" makes a temporary directory that is removed at the end.
	Dir     string
	Checker Checker // nil: a StaticChecker with every dumper
	// Progress, when not nil, gets a line per built cell.
	Progress io.Writer
}

// Output is one checked file of the matrix, or one that could not be made.
type Output struct {
	Base, Opt, Assembler, Link string
	Target                     target.Target
	Path                       string
	BuildErr                   error   // compiling, assembling or linking failed
	CheckErr                   error   // the checker could not use the file
	Report                     *Report // nil when BuildErr or CheckErr
	Commands                   []string
	CheckTime                  time.Duration
}

// Name is the output's coordinates: zlib/x86-64/O2/gas-2.47/pie.
func (o *Output) Name() string {
	return strings.Join([]string{o.Base, o.Target.Name(), o.Opt, o.Assembler, o.Link}, "/")
}

// Result is a campaign's outputs and what it skipped.
type Result struct {
	Outputs   []*Output
	Skipped   []string // cells not built, with the reason
	BuildTime time.Duration
	CheckTime time.Duration
	Sources   []Source
}

// Run builds and checks the selected slice of the matrix. An error means
// the campaign could not start (a code base or toolchain missing); a cell
// that fails to build is an Output with BuildErr.
func Run(opt Options) (*Result, error) {
	bases := Bases
	if len(opt.Bases) > 0 {
		bases = nil
		for _, n := range opt.Bases {
			b, err := FindBase(n)
			if err != nil {
				return nil, err
			}
			bases = append(bases, b)
		}
	}
	opts := Opts
	if len(opt.Opts) > 0 {
		opts = nil
		for _, n := range opt.Opts {
			o, err := FindOpt(n)
			if err != nil {
				return nil, err
			}
			opts = append(opts, o)
		}
	}
	targets := opt.Targets
	if len(targets) == 0 {
		targets = target.All
	}
	links := opt.Links
	if len(links) == 0 {
		links = Links
	}
	for _, l := range links {
		if !slices.Contains(Links, l) {
			return nil, fmt.Errorf("no link kind %q (have %s)", l, strings.Join(Links, ", "))
		}
	}
	checker := opt.Checker
	if checker == nil {
		checker = &StaticChecker{}
	}
	dir := opt.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "sfconform-realcode-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	res := &Result{}
	for _, b := range bases {
		src, err := Locate(b)
		if err != nil {
			return nil, err
		}
		res.Sources = append(res.Sources, src)
		for _, tg := range targets {
			cc, err := FindCompiler(tg)
			if err != nil {
				return nil, err
			}
			asms, skipped, err := Assemblers(tg)
			if err != nil {
				return nil, err
			}
			for _, s := range skipped {
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s: %s", b.Name, tg.Name(), s))
			}
			if len(opt.Assemblers) > 0 {
				asms = slices.DeleteFunc(asms, func(a Assembler) bool { return !slices.Contains(opt.Assemblers, a.Name) })
			}
			for _, o := range opts {
				runCell(res, checker, cc, src, o, asms, linksFor(tg, links), filepath.Join(dir, b.Name, tg.Name(), o.Name), opt.Progress)
			}
			if tg == target.AArch64BE && (slices.Contains(links, LinkStatic) || slices.Contains(links, LinkPIE)) {
				res.Skipped = append(res.Skipped, fmt.Sprintf("%s/%s: no -static or -pie link: Debian has no big-endian AArch64 C library", b.Name, tg.Name()))
			}
		}
	}
	return res, nil
}

// runCell compiles one code base for one target at one optimisation
// setting, then assembles, links and checks it with every assembler.
func runCell(res *Result, checker Checker, cc Compiler, src Source, o Opt, asms []Assembler, links []string, dir string, progress io.Writer) {
	start := time.Now()
	fail := func(asm, link string, err error, cmds []Command) {
		out := &Output{Base: src.Base.Name, Target: cc.Target, Opt: o.Name, Assembler: asm, Link: link, BuildErr: err}
		for _, c := range cmds {
			out.Commands = append(out.Commands, c.Line)
		}
		res.Outputs = append(res.Outputs, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail("", "", err, nil)
		return
	}
	sources, ccCmds, err := cc.Compile(src, o, dir)
	res.BuildTime += time.Since(start)
	if err != nil {
		fail("gcc", "", err, ccCmds)
		return
	}
	nLib := len(src.Base.Library)
	for _, a := range asms {
		t0 := time.Now()
		adir := filepath.Join(dir, a.Name)
		if err := os.MkdirAll(adir, 0o755); err != nil {
			fail(a.Name, "", err, nil)
			continue
		}
		objs, asCmds, err := a.Assemble(sources, adir)
		if err != nil {
			fail(a.Name, LinkObject, err, append(ccCmds, asCmds...))
			res.BuildTime += time.Since(t0)
			continue
		}
		own := ownFunctions(objs)
		var srcs []string
		for _, f := range append(append([]string(nil), src.Base.Library...), src.Base.Main...) {
			srcs = append(srcs, filepath.Base(f))
		}
		type built struct {
			link, path string
			cmds       []Command
		}
		var files []built
		for _, l := range links {
			switch l {
			case LinkObject:
				for i, obj := range objs {
					files = append(files, built{l, obj, []Command{ccCmds[i], asCmds[i]}})
				}
			case LinkR:
				out := filepath.Join(adir, src.Base.Name+"-r.o")
				cmd, err := a.LinkR(objs, out)
				if err != nil {
					fail(a.Name, l, err, []Command{cmd})
					continue
				}
				files = append(files, built{l, out, []Command{cmd}})
			case LinkStatic, LinkPIE:
				out := filepath.Join(adir, src.Base.Name+"-"+l)
				_ = nLib
				cmd, err := a.LinkExe(cc, l, objs, src.Base.Libs, out)
				if err != nil {
					fail(a.Name, l, err, []Command{cmd})
					continue
				}
				files = append(files, built{l, out, []Command{cmd}})
			}
		}
		res.BuildTime += time.Since(t0)
		for _, f := range files {
			out := &Output{Base: src.Base.Name, Target: cc.Target, Opt: o.Name, Assembler: a.Name, Link: f.link, Path: f.path}
			for _, c := range f.cmds {
				out.Commands = append(out.Commands, c.Line)
			}
			t1 := time.Now()
			out.Report, out.CheckErr = checker.Check(File{Path: f.path, Functions: own, Sources: srcs})
			out.CheckTime = time.Since(t1)
			res.CheckTime += out.CheckTime
			res.Outputs = append(res.Outputs, out)
		}
		if progress != nil {
			fmt.Fprintf(progress, "realcode: %s/%s/%s/%s: %d files checked\n", src.Base.Name, cc.Target.Name(), o.Name, a.Name, len(files))
		}
	}
}

// ownFunctions are the function symbols the objects define: the code
// base's own functions, which an executable's C library does not add to.
func ownFunctions(objs []string) []string {
	set := map[string]bool{}
	for _, p := range objs {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		syms, _ := f.Symbols()
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Name != "" {
				set[s.Name] = true
			}
		}
		f.Close()
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Findings are the outputs' findings grouped by signature (kind and
// tool) and coordinates other than the file, for triage: one line each,
// with how many outputs show it.
type Group struct {
	Signature string
	Target    target.Target
	Assembler string
	Link      string
	Outputs   int
	Example   string // one output's name
	Finding   Finding
}

// Groups groups the findings of res.
func (res *Result) Groups() []Group {
	idx := map[string]*Group{}
	var order []string
	for _, o := range res.Outputs {
		if o.Report == nil {
			continue
		}
		seen := map[string]bool{}
		for _, f := range o.Report.Findings {
			key := strings.Join([]string{f.Signature(), o.Target.Name(), o.Assembler, o.Link}, "|")
			if seen[key] {
				continue
			}
			seen[key] = true
			g := idx[key]
			if g == nil {
				g = &Group{Signature: f.Signature(), Target: o.Target, Assembler: o.Assembler, Link: o.Link, Example: o.Name(), Finding: f}
				idx[key] = g
				order = append(order, key)
			}
			g.Outputs++
		}
	}
	out := make([]Group, 0, len(order))
	for _, k := range order {
		out = append(out, *idx[k])
	}
	return out
}

// New are the groups of findings that no entry of KnownFindings explains.
func (res *Result) New() []Group {
	var out []Group
	for _, g := range res.Groups() {
		if Triage(g) == "" {
			out = append(out, g)
		}
	}
	return out
}

// Figure is one target's totals.
type Figure struct {
	Target       target.Target
	Files        int
	Functions    int
	Instructions int
	FDEs, Rows   int
	CheckTime    time.Duration
	Findings     int // outputs with findings
	BuildErrors  int
}

// Figures sums the outputs per target.
func (res *Result) Figures() []Figure {
	var out []Figure
	for _, tg := range target.All {
		fg := Figure{Target: tg}
		any := false
		for _, o := range res.Outputs {
			if o.Target != tg {
				continue
			}
			any = true
			if o.BuildErr != nil {
				fg.BuildErrors++
				continue
			}
			fg.CheckTime += o.CheckTime
			if o.Report == nil {
				continue
			}
			fg.Files++
			fg.Functions += o.Report.Functions
			fg.Instructions += o.Report.Instructions
			fg.FDEs += o.Report.FDEs
			fg.Rows += o.Report.Rows
			if len(o.Report.Findings) > 0 {
				fg.Findings++
			}
		}
		if any {
			out = append(out, fg)
		}
	}
	return out
}

// Summary prints the figures per target and the grouped findings.
func (res *Result) Summary(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tfiles\tbuild errors\tFDEs\trows\tfunctions\tinstructions\tcheck s\tfunctions/min\tinstructions/min\tfiles with findings\t")
	for _, f := range res.Figures() {
		sec := f.CheckTime.Seconds()
		perMin := func(n int) string {
			if sec == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", float64(n)*60/sec)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%d\t\n", f.Target.Name(), f.Files, f.BuildErrors, f.FDEs, f.Rows,
			f.Functions, f.Instructions, sec, perMin(f.Functions), perMin(f.Instructions), f.Findings)
	}
	tw.Flush()
	fmt.Fprintf(w, "build %.1f s, check %.1f s\n", res.BuildTime.Seconds(), res.CheckTime.Seconds())
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "skipped: %s\n", s)
	}
	for _, o := range res.Outputs {
		if o.BuildErr != nil {
			fmt.Fprintf(w, "build error: %s: %v\n", o.Name(), firstLines(o.BuildErr.Error(), 4))
		}
		if o.CheckErr != nil {
			fmt.Fprintf(w, "unusable: %s: %v\n", o.Name(), o.CheckErr)
		}
	}
	for _, g := range res.Groups() {
		label := "NEW"
		if why := Triage(g); why != "" {
			label = "known (" + why + ")"
		}
		fmt.Fprintf(w, "%s: %s on %s (%s, %s) in %d outputs, e.g. %s: %s\n", label, g.Signature, g.Target.Name(), g.Assembler, g.Link,
			g.Outputs, g.Example, firstLines(g.Finding.String(), 3))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n    ")
}
