package realcode

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
	"github.com/sfconform/sfconform/verdict"
)

// CsmithInclude is where Debian's libcsmith-dev puts csmith.h.
const CsmithInclude = "/usr/include/csmith"

// csmithText is where a Csmith program's code and data go: one writable
// segment (ld -N) at the start of the emulator's code region, which is
// the only memory besides the stack.
const csmithText = emu.CodeBase + 0x1000

// CsmithFlags are the csmith options: small programs without argv (the
// runtime passes none), so that most finish within the budget.
var CsmithFlags = []string{"--no-argc", "--max-funcs", "6", "--max-block-depth", "3", "--quiet"}

// Generate writes Csmith's program for seed to dir/prog.c.
func Generate(seed uint64, dir string) (string, error) {
	cs, err := exec.LookPath("csmith")
	if err != nil {
		return "", toolchain.NotProvisioned(toolchain.SetupRealCode, "csmith: %v", err)
	}
	out := filepath.Join(dir, "prog.c")
	args := append([]string{cs, "--seed", strconv.FormatUint(seed, 10)}, CsmithFlags...)
	if _, err := runTool(dir, append(args, "-o", out)...); err != nil {
		return "", err
	}
	return out, nil
}

// csmithCFlags are the flags a Csmith program and the runtime compile
// with: no stack protector (its guard is read through the thread
// pointer, which nothing sets up) and absolute code at a fixed address;
// gnu17, so a newer gcc (C23 by default) takes the same C.
var csmithCFlags = []string{"-std=gnu17", "-fno-stack-protector", "-fno-pic", "-fno-pie", "-fno-builtin", "-w",
	"-fasynchronous-unwind-tables", "-g0"}

// BuildProgram compiles the C program src with cc at opt, assembles it and
// the runtime with a, and links them at a fixed address into dir/prog.
// It returns the executable's path and the commands run.
func BuildProgram(cc Compiler, opt Opt, a Assembler, src, dir string) (string, []Command, error) {
	var cmds []Command
	rt := filepath.Join(dir, "sfconform-rt.c")
	if err := os.WriteFile(rt, []byte(runtimeC), 0o644); err != nil {
		return "", nil, err
	}
	start, err := startAsm(cc.Target)
	if err != nil {
		return "", nil, err
	}
	startS := filepath.Join(dir, "sfconform-start.s")
	if err := os.WriteFile(startS, []byte(start), 0o644); err != nil {
		return "", nil, err
	}
	var sources []string
	for _, c := range []string{src, rt} {
		// In the build's own directory: the program's C is shared by
		// every build of its seed.
		s := filepath.Join(dir, strings.TrimSuffix(filepath.Base(c), ".c")+".s")
		args := append([]string{cc.CC}, cc.Flags...)
		args = append(append(args, opt.Flags...), csmithCFlags...)
		args = append(args, "-I", CsmithInclude, "-S", "-o", s, c)
		cmd, err := runTool(dir, args...)
		cmds = append(cmds, cmd)
		if err != nil {
			return "", cmds, err
		}
		sources = append(sources, s)
	}
	sources = append([]string{startS}, sources...)
	objs, asCmds, err := a.Assemble(sources, dir)
	cmds = append(cmds, asCmds...)
	if err != nil {
		return "", cmds, err
	}
	out := filepath.Join(dir, "prog")
	args := append([]string{a.Linker.LD}, a.Linker.LDFlags...)
	args = append(args, "-N", "-static", fmt.Sprintf("-Ttext=%#x", csmithText), "-e", "_start", "-o", out)
	cmd, err := runTool(dir, append(args, objs...)...)
	cmds = append(cmds, cmd)
	if err != nil {
		return "", cmds, err
	}
	return out, cmds, nil
}

// LoadProgram reads an executable linked by BuildProgram as an image:
// every loadable segment as one block of memory (.bss zeroed), the
// function symbols (a gcc cold part, NAME.cold, is part of NAME), _start
// as the entry and sfconform_exit as the exit, and the .sframe section.
// It also returns the number of instructions in the functions, for
// coverage.
func LoadProgram(path string, producer string) (*image.Image, int, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	tg, err := TargetOf(f)
	if err != nil {
		return nil, 0, err
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 {
			lo, hi = min(lo, p.Vaddr), max(hi, p.Vaddr+p.Memsz)
		}
	}
	if lo < emu.CodeBase || hi > emu.CodeBase+emu.CodeSize || lo >= hi {
		return nil, 0, fmt.Errorf("%s: loadable segments [%#x, %#x) are not inside the emulator's code region [%#x, %#x)", path, lo, hi, emu.CodeBase, emu.CodeBase+emu.CodeSize)
	}
	mem := make([]byte, hi-lo)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			if _, err := p.ReadAt(mem[p.Vaddr-lo:p.Vaddr-lo+p.Filesz], 0); err != nil {
				return nil, 0, fmt.Errorf("%s: segment at %#x: %w", path, p.Vaddr, err)
			}
		}
	}
	img := &image.Image{Target: tg, Producer: producer, Code: mem, CodeAddr: lo}
	syms, err := f.Symbols()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	insns := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
			continue
		}
		sym := image.Symbol{Name: s.Name, Addr: s.Value, Size: uint32(s.Size)}
		if i := strings.Index(s.Name, ".cold"); i > 0 {
			sym.PartOf = s.Name[:i]
		}
		switch s.Name {
		case "_start":
			img.Entry = s.Value
		case "sfconform_exit":
			img.Exit = s.Value
		}
		img.Symbols = append(img.Symbols, sym)
		code := mem[s.Value-lo : s.Value-lo+s.Size]
		for off := 0; off < len(code); {
			_, n, err := disasm.Instruction(tg, code[off:], s.Value+uint64(off))
			if err != nil || n == 0 {
				break
			}
			insns++
			off += n
		}
	}
	if img.Entry == 0 || img.Exit == 0 {
		return nil, 0, fmt.Errorf("%s: no _start or sfconform_exit symbol", path)
	}
	img.SortSymbols()
	sec := f.Section(sframe.SectionName)
	if sec == nil {
		return nil, 0, fmt.Errorf("%s: no .sframe section", path)
	}
	if img.SFrame, err = sec.Data(); err != nil {
		return nil, 0, fmt.Errorf("%s: .sframe: %w", path, err)
	}
	img.SFrameAddr = sec.Addr
	if len(img.SFrame) > 2 {
		img.SFrameVersion = int(img.SFrame[2])
	}
	if tab, err := sframe.Decode(img.SFrame, img.SFrameAddr); err == nil {
		img.RuleRegs = ruleRegs(tg, tab)
	}
	return img, insns, nil
}

// ruleRegs are the registers beyond SP, FP and RA that the table's rules
// read (s390x keeps a saved FP or RA in a floating-point register in leaf
// functions): the emulator reads them at every step, for the consumer.
func ruleRegs(tg target.Target, t *sframe.Table) []int {
	var regs []int
	for _, s := range t.Sections {
		for i := 0; i < int(s.Header.NumFDEs); i++ {
			if rows, err := s.Func(i).Rows(); err == nil {
				regs = sframe.RuleRegs(sframe.ABI(tg), rows, regs)
			}
		}
	}
	return regs
}

// CsmithOptions select a Csmith campaign.
type CsmithOptions struct {
	Seeds      []uint64
	Targets    []target.Target
	Opts       []string
	Assemblers []string
	Consumers  []string // default: builtin
	Budget     int      // instructions per program; 0: 2,000,000
	Dir        string   // keep the programs here; "" removes them
	// CFile, when set, is the program for every seed instead of Csmith's
	// (a reducer's candidate: the seed only names it).
	CFile    string
	Progress func(string) // called from one goroutine at a time
	// Workers run seeds in parallel, each with its own emulators
	// (campaign.Each); 0: one.
	Workers int
}

// Program is one Csmith program built one way and run.
type Program struct {
	Seed                     uint64
	Target                   target.Target
	Opt, Assembler, Consumer string
	Path                     string
	BuildErr                 error
	Static                   *Report
	Steps                    int
	Counts                   [verdict.Count]int
	Failures                 []harness.Failure
	RunErr, LoadErr          error
	Completed                bool // reached sfconform_exit within the budget
	// AtOutermost counts, per verdict, the failing steps whose frames
	// are all right up to the outermost one (harness.Result.AtOutermost):
	// a table that does not mark the entry stub outermost.
	AtOutermost [verdict.Count]int
	// SPInFPR: the function of the first failure past the outermost
	// frame keeps the SP in a floating-point register (s390x ldgr
	// %fN,%r15), the shape of finding 034.
	SPInFPR                bool
	Instructions, Executed int // instructions in its functions; distinct ones executed
	RunTime                time.Duration
	Commands               []string
}

// Name is the program's coordinates.
func (p *Program) Name() string {
	return fmt.Sprintf("seed%d/%s/%s/%s/%s", p.Seed, p.Target.Name(), p.Opt, p.Assembler, p.Consumer)
}

// Signature is what a reduction keeps: the first failure's verdict and
// the field that differed, or the run error's kind.
func (p *Program) Signature() string {
	switch {
	case p.BuildErr != nil:
		return "build"
	case p.LoadErr != nil:
		return "load"
	case p.Inner() > 0:
		for _, f := range p.Failures {
			if f.Judgement.Field != "outermost" {
				return f.Judgement.Verdict.String() + "/" + f.Judgement.Field
			}
		}
		return "inner"
	case len(p.Failures) > 0:
		return "outermost-only"
	case p.RunErr != nil && !p.budgetOut():
		return "run"
	}
	return ""
}

// Inner counts the failing steps that go wrong before the outermost
// frame: what is left once a table's missing outermost mark (finding
// 008: gas 2.40 and 2.44 ignore .cfi_undefined of the RA) is set aside.
func (p *Program) Inner() int {
	n := 0
	for v := 0; v < verdict.Count; v++ {
		if v != int(verdict.OK) {
			n += p.Counts[v] - p.AtOutermost[v]
		}
	}
	return n
}

func (p *Program) budgetOut() bool { return p.RunErr != nil && errors.Is(p.RunErr, emu.ErrBudget) }

// RunCsmith generates, builds and runs Csmith programs, every executed
// instruction judged by each consumer.
func RunCsmith(opt CsmithOptions) ([]*Program, error) {
	targets := opt.Targets
	if len(targets) == 0 {
		targets = target.All
	}
	opts := opt.Opts
	if len(opts) == 0 {
		opts = []string{"O0", "O2"}
	}
	conss := opt.Consumers
	if len(conss) == 0 {
		conss = []string{"builtin"}
	}
	budget := opt.Budget
	if budget == 0 {
		budget = 2_000_000
	}
	dir := opt.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "sfconform-csmith-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	type seedRun struct {
		out []*Program
		err error
	}
	runs := make([]seedRun, len(opt.Seeds))
	var mu sync.Mutex
	var progress func(string)
	if opt.Progress != nil {
		progress = func(line string) {
			mu.Lock()
			defer mu.Unlock()
			opt.Progress(line)
		}
	}
	jobs := make([]int, len(opt.Seeds))
	for i := range jobs {
		jobs[i] = i
	}
	// Enough failures kept to find the first one past the outermost
	// frame, which a table without the outermost mark fails at first.
	campaign.Each(opt.Workers, func() harness.Options { return harness.Options{Budget: budget, MaxFailures: 64} }, jobs,
		func(w *campaign.Worker, i int) {
			runs[i].out, runs[i].err = csmithSeed(w, opt.Seeds[i], opt, dir, targets, opts, conss, progress)
		})
	var out []*Program
	for _, r := range runs {
		out = append(out, r.out...)
		if r.err != nil {
			return out, r.err
		}
	}
	return out, nil
}

// csmithSeed generates (or copies), builds and runs one seed's program for
// every target, optimisation and assembler, on w's emulators.
func csmithSeed(w *campaign.Worker, seed uint64, opt CsmithOptions, dir string, targets []target.Target, opts, conss []string, progress func(string)) ([]*Program, error) {
	var out []*Program
	sdir := filepath.Join(dir, fmt.Sprintf("seed%d", seed))
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return out, err
	}
	src := opt.CFile
	if src == "" {
		var err error
		if src, err = Generate(seed, sdir); err != nil {
			return out, err
		}
	} else {
		data, err := os.ReadFile(src)
		if err != nil {
			return out, err
		}
		src = filepath.Join(sdir, "prog.c")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			return out, err
		}
	}
	for _, tg := range targets {
		cc, err := FindCompiler(tg)
		if err != nil {
			return out, err
		}
		asms, _, err := Assemblers(tg)
		if err != nil {
			return out, err
		}
		chk, err := w.Checker(tg)
		if err != nil {
			return out, err
		}
		// A compiled program's symbols need not name every function with
		// unwind information (crt's, the libc's): no probes.
		chk.SetProbes(false)
		defer chk.SetProbes(true)
		for _, on := range opts {
			o, err := FindOpt(on)
			if err != nil {
				return out, err
			}
			for _, a := range asms {
				if len(opt.Assemblers) > 0 && !contains(opt.Assemblers, a.Name) {
					continue
				}
				if a.AS.LD == "" {
					// llvm-mc: no provisioned ld links its SFrame
					// (finding 020); realcode's -r/-static/-pie
					// outputs show that, a program would have no
					// table to judge.
					continue
				}
				bdir := filepath.Join(sdir, tg.Name(), o.Name, a.Name)
				if err := os.MkdirAll(bdir, 0o755); err != nil {
					return out, err
				}
				base := Program{Seed: seed, Target: tg, Opt: o.Name, Assembler: a.Name}
				path, cmds, err := BuildProgram(cc, o, a, src, bdir)
				for _, c := range cmds {
					base.Commands = append(base.Commands, c.Line)
				}
				base.Path = path
				if err == nil {
					var img *image.Image
					var insns int
					if img, insns, err = LoadProgram(path, a.Name); err == nil {
						out, err = runProgram(out, base, img, insns, conss, chk, progress)
						if err != nil {
							return out, err
						}
						continue
					}
				}
				p := base
				p.BuildErr = err
				out = append(out, &p)
				if progress != nil {
					progress(p.Line())
				}
			}
		}
	}

	return out, nil
}

// runProgram runs one built program with each consumer.
func runProgram(out []*Program, base Program, img *image.Image, insns int, conss []string, chk *harness.Checker, progress func(string)) ([]*Program, error) {
	static := &StaticChecker{Dumpers: []string{}}
	rep, _ := static.Check(File{Path: base.Path})
	for i, cn := range conss {
		if i > 0 && len(out) > 0 && out[len(out)-1].budgetOut() {
			// The program does not finish within the budget: the
			// first consumer judged what it ran; the others would
			// spend the whole budget again for no completed run.
			continue
		}
		p := base
		p.Consumer, p.Static, p.Instructions = cn, rep, insns
		cons, err := consumer.New(cn)
		if err != nil {
			return out, err
		}
		if err := cons.Supports(img.Target, img.SFrameVersion); err != nil {
			cons.Close()
			continue
		}
		t0 := time.Now()
		res := chk.Trace(img, cons)
		p.RunTime = time.Since(t0)
		cons.Close()
		p.Steps, p.Counts, p.Failures, p.RunErr, p.LoadErr = res.Steps, res.Counts, res.Failures, res.RunErr, res.LoadErr
		p.AtOutermost = res.AtOutermost
		p.SPInFPR = spInFPR(img, res.Failures)
		p.Completed = res.RunErr == nil
		seen := map[uint64]bool{}
		for _, pc := range res.Executed {
			seen[pc] = true
		}
		p.Executed = len(seen)
		out = append(out, &p)
		if progress != nil {
			progress(p.Line())
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Line is the program's result on one line.
func (p *Program) Line() string {
	if p.BuildErr != nil {
		return fmt.Sprintf("%s: build error: %s", p.Name(), firstLines(p.BuildErr.Error(), 2))
	}
	state := "completed"
	if !p.Completed {
		state = fmt.Sprintf("stopped: %v", p.RunErr)
	}
	cov := 0.0
	if p.Instructions > 0 {
		cov = 100 * float64(p.Executed) / float64(p.Instructions)
	}
	s := fmt.Sprintf("%s: %d steps (OK %d, WRONG %d, NOINFO %d, ERROR %d), %.1f%% of %d instructions executed, %s",
		p.Name(), p.Steps, p.Counts[verdict.OK], p.Counts[verdict.Wrong], p.Counts[verdict.NoInfo], p.Counts[verdict.Error],
		cov, p.Instructions, state)
	if n := p.Inner(); n < p.Steps-p.Counts[verdict.OK] {
		s += fmt.Sprintf("; %d failing only at the outermost frame", p.Steps-p.Counts[verdict.OK]-n)
	}
	if len(p.Failures) > 0 {
		f := p.Failures[0]
		for _, g := range p.Failures {
			if g.Judgement.Field != "outermost" {
				f = g
				break
			}
		}
		s += fmt.Sprintf("; first failure at %s %#x (%s): %v %s", f.Function, f.PC, f.Insn, f.Judgement.Verdict, f.Judgement.Field)
	}
	if why := p.Triage(); why != "" {
		s += "; known: " + why
	}
	return s
}

// spInFPR says whether the function of the first failure that is not at
// the outermost frame copies %r15 into an FPR (ldgr %fN,%r15).
func spInFPR(img *image.Image, failures []harness.Failure) bool {
	if img.Target != target.S390X {
		return false
	}
	for _, f := range failures {
		if f.Judgement.Field == "outermost" {
			continue
		}
		sym, ok := img.SymbolAt(f.PC)
		if !ok {
			return false
		}
		code := img.Code[sym.Addr-img.CodeAddr : sym.End()-img.CodeAddr]
		for off := 0; off < len(code); {
			text, n, err := disasm.Instruction(img.Target, code[off:], sym.Addr+uint64(off))
			if err != nil || n == 0 {
				return false
			}
			if strings.HasPrefix(text, "ldgr") && strings.HasSuffix(text, ",%r15") {
				return true
			}
			off += n
		}
		return false
	}
	return false
}

// Triage says why a failing program's failure is known, or "" when it
// is clean or new.
func (p *Program) Triage() string {
	switch sig := p.Signature(); {
	case sig == "":
		return ""
	case sig == "outermost-only" && (p.Assembler == "gas-2.40" || p.Assembler == "gas-2.44"):
		return "finding 008: gas 2.40 and 2.44 ignore .cfi_undefined of the RA, so the entry stub is not the outermost frame"
	case p.Target == target.S390X && p.Assembler == "gas-2.47" && sig == "WRONG/cfa" && p.SPInFPR:
		return "finding 034: gcc moves the CFA back before restoring %r15 from an FPR, and gas writes those rows"
	case p.Consumer == "libsframe" && p.Assembler == "gas-2.44" && sig != "build":
		return "finding 021: libsframe 2.47 reads the function starts of gas 2.44's SFrame v2 (no PCREL flag) as PC-relative"
	}
	return ""
}

// CsmithSummary prints per target the programs, steps, coverage and time.
func CsmithSummary(w interface{ Write([]byte) (int, error) }, progs []*Program) {
	type agg struct {
		progs, completed, steps, insns, exec, failing, known, outer, builds int
		t                                                                   time.Duration
	}
	per := map[target.Target]*agg{}
	for _, p := range progs {
		a := per[p.Target]
		if a == nil {
			a = &agg{}
			per[p.Target] = a
		}
		if p.BuildErr != nil {
			a.builds++
			continue
		}
		a.progs++
		if p.Completed {
			a.completed++
		}
		a.steps += p.Steps
		a.insns += p.Instructions
		a.exec += p.Executed
		a.t += p.RunTime
		switch {
		case p.Signature() == "":
		case p.Signature() == "outermost-only":
			a.outer++
		case p.Triage() != "":
			a.known++
		default:
			a.failing++
		}
	}
	var tgs []target.Target
	for t := range per {
		tgs = append(tgs, t)
	}
	sort.Slice(tgs, func(i, j int) bool { return tgs[i] < tgs[j] })
	fmt.Fprintf(w, "%-11s %8s %9s %12s %10s %14s %9s %11s %14s %8s %7s\n", "target", "programs", "completed", "steps", "coverage", "steps/min", "new fails", "known fails", "outermost-only", "builderr", "run s")
	for _, t := range tgs {
		a := per[t]
		cov, rate := 0.0, 0.0
		if a.insns > 0 {
			cov = 100 * float64(a.exec) / float64(a.insns)
		}
		if a.t > 0 {
			rate = float64(a.steps) * 60 / a.t.Seconds()
		}
		fmt.Fprintf(w, "%-11s %8d %9d %12d %9.1f%% %14.0f %9d %11d %14d %8d %7.1f\n", t.Name(), a.progs, a.completed, a.steps, cov, rate, a.failing, a.known, a.outer, a.builds, a.t.Seconds())
	}
}
