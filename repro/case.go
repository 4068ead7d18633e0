package repro

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/minimize"
	"github.com/sfconform/sfconform/toolchain"
)

// Input is a failure to keep as a reproducer.
type Input struct {
	Img  *image.Image
	Prog *gen.Program // nil for an image no program of gen's made
	Seed int64
	Cons consumer.Consumer
	Res  *harness.Result
	// Failure is the failing step to record; nil: Res's first.
	Failure *harness.Failure
	// Min is the minimization that made Img and Prog (nil: none), and
	// Skipped why there was none.
	Min     *minimize.Result
	Skipped string
	// Checker, when set, takes the machine state at the failing step.
	Checker *harness.Checker
}

// NewCase makes the reproducer of a failure: harness.NewCase's fields and
// those of format version 2, the versions, the commands that build it
// alone, gen's coordinates, the minimization and the machine state at the
// failing step.
func NewCase(in Input) *corpus.Case {
	res := in.Res
	if in.Failure != nil {
		r := *res
		r.Failures = []harness.Failure{*in.Failure}
		res = &r
	}
	c := harness.NewCase(in.Img, in.Prog, in.Seed, in.Cons.Name(), res)
	c.ProducerVersion = ProducerVersion(in.Img)
	c.ConsumerVersion = ConsumerVersion(in.Cons)
	if in.Prog != nil {
		c.Build = BuildCommands(in.Img, in.Prog)
		c.Generator = GeneratorOf(in.Prog)
	}
	switch {
	case in.Min != nil:
		m := in.Min
		c.Minimization = &corpus.Minimization{Signature: m.Sig.String(), Original: sizeOf(m.Original), Minimized: sizeOf(m.Minimized),
			OriginalSteps: m.OriginalSteps, MinimizedSteps: m.MinimizedSteps, Attempts: m.Attempts,
			Seconds: m.Elapsed.Seconds(), Stopped: m.Stopped}
	case in.Skipped != "":
		c.Minimization = &corpus.Minimization{Skipped: in.Skipped}
		if in.Prog != nil {
			s := sizeOf(in.Prog.Size())
			c.Minimization.Original, c.Minimization.Minimized = s, s
		}
	}
	if in.Checker != nil && len(res.Failures) > 0 {
		f := res.Failures[0]
		if snap, err := in.Checker.SnapshotAt(in.Img, f.Path, f.Step); err == nil {
			c.Machine = corpus.MachineOf(snap)
		}
	}
	return c
}

func sizeOf(s gen.Size) corpus.Size {
	return corpus.Size{Functions: s.Functions, Instructions: s.Instructions, Bytes: s.Bytes, Paths: s.Paths}
}

// GeneratorOf is gen's coordinates of a program.
func GeneratorOf(p *gen.Program) *corpus.Generator {
	o := p.GenOptions()
	g := &corpus.Generator{Seed: p.Seed, Funcs: o.Funcs, MaxDepth: o.MaxDepth, Patterns: o.Patterns, SFrameVersion: o.SFrameVersion, Paths: o.Paths}
	for _, r := range p.Applied() {
		g.Reductions = append(g.Reductions, corpus.Reduction{Op: r.Op, Func: r.Func, Callee: r.Callee, N: r.N})
	}
	return g
}

// Regenerate makes a case's program again from its coordinates, laid
// out where campaign.Produce lays programs out. A case without them (a
// version 1 case) is regenerated from its seed with the options its
// producer gets by default.
func Regenerate(c *corpus.Case) (*gen.Program, error) {
	t, err := c.TargetOf()
	if err != nil {
		return nil, err
	}
	g := c.Generator
	if g == nil {
		return nil, fmt.Errorf("%s: the case has no generator coordinates (format %s): regenerate it with 'sfconform run --seed %d'", c.Target, c.Format, c.Seed)
	}
	opt := gen.Options{Funcs: g.Funcs, MaxDepth: g.MaxDepth, Patterns: g.Patterns, SFrameVersion: g.SFrameVersion, Paths: g.Paths}
	var rs []gen.Reduction
	for _, r := range g.Reductions {
		rs = append(rs, gen.Reduction{Op: r.Op, Func: r.Func, Callee: r.Callee, N: r.N})
	}
	p, err := gen.Regenerate(t, g.Seed, opt, rs)
	if err != nil {
		return nil, err
	}
	if err := p.Layout(harness.CodeBase); err != nil {
		return nil, err
	}
	return p, nil
}

// ProducerVersion names what made the image's section.
func ProducerVersion(img *image.Image) string {
	if img.Record != nil {
		return img.Record.Versions()
	}
	return fmt.Sprintf("sfconform %s, its own encoder (%s)", Version(), img.Producer)
}

// ConsumerVersion names what unwound.
func ConsumerVersion(c consumer.Consumer) string {
	switch d := c.(type) {
	case *consumer.Dumper:
		return d.Name() + " " + d.Version()
	}
	switch name := c.Name(); {
	case name == "builtin":
		return fmt.Sprintf("sfconform %s, its own unwinder (package sframe)", Version())
	case name == "libsframe" || name == "glibc" || name == "glibc:strict":
		dir, _, _ := strings.Cut(name, ":")
		if conf, err := builtConf(dir); err == nil {
			return fmt.Sprintf("%s %s (Debian %s %s), through sfconform's consumer/%s", dir, conf["version"], conf["suite"], conf["package"], dir)
		}
		return name
	default:
		return name
	}
}

// builtConf reads consumer.conf of a built C consumer.
func builtConf(dir string) (map[string]string, error) {
	h, err := consumer.SourceHash(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(toolchain.CacheDir(), "consumers", dir+"-"+h, "consumer.conf"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out, sc.Err()
}

// Version is sfconform's module version and revision.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
