package check

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// The dynamic check runs the file's loadable segments in the emulator's
// code region, moved by one delta (every PC-relative reference, and the
// PC-relative or section-relative starts of .sframe, stay right), and
// calls each function from an entry stub of its own in front of them. The
// stub is the outermost frame: a second SFrame section describing it (one
// outermost row) is appended to the file's, as a linker concatenates
// sections, so that an unwind that reaches it ends there.
//
// The runs are lenient (emu.Lenient): a call or jump leaving the file's
// segments and the stubs returns at once with 0, a system call is skipped
// with 0, an unmapped read or write maps a page on demand, zeros in the
// first variant and a pattern of pointers into the same page in the
// others. A run ends when the function returns, at a fault the emulator
// cannot serve (a return address outside the image, more than maxPages
// pages, an s390x data access outside its low window) or when the budget
// runs out; every instruction executed up to there is judged.
// Report.Functions[i].Ends counts why runs ended, Served what was served.
const (
	stubArea = 0x1000 // the stubs' page, at emu.CodeBase
	// externalOff places, after the entry stub, the function every call
	// leaving the file lands in: it returns 0 at once.
	externalOff = 0x100
	// exitOff places the exit stand-in, where calls to functions that
	// never return (NoReturn) go: it ends the run (the exit system call).
	exitOff   = 0x200
	imageBase = 0x10000 // the file's first segment goes this far into the code region
)

// foreign is the file as the emulator runs it.
type foreign struct {
	img    *image.Image
	delta  uint64 // emulator address - file address
	stub   uint64 // the entry stub's address
	inside []emu.Range
	entry  image.Symbol // the process entry's function, moved (Size 0: none)
	// patched are the moved starts of the file's own functions that
	// never return, whose first instruction jumps to the exit stand-in
	// in every run (they are not run themselves).
	patched map[uint64]bool
	// inMemory is the code as the last landing-pad run left it in the
	// emulator (the image with that run's jumps), lastJumps those jumps:
	// the next run restores them and writes its own, a few bytes, where
	// running the unchanged image would rewrite all of it and drop every
	// translation (overlaid).
	inMemory  []byte
	lastJumps []image.Segment
}

// overlaid is the code and segments of a run with overlay (nil: none)
// written over the image: the code as the emulator holds it already, the
// last run's jumps restored, this run's written.
func (fo *foreign) overlaid(segs, overlay []image.Segment) ([]byte, []image.Segment) {
	orig := fo.img.Code
	if fo.inMemory == nil {
		fo.inMemory = append([]byte(nil), orig...)
	}
	code := fo.inMemory
	for _, j := range fo.lastJumps {
		off := j.Addr - fo.img.CodeAddr
		segs = append(segs, image.Segment{Addr: j.Addr, Code: orig[off : off+uint64(len(j.Code))]})
	}
	// What the emulator holds after this run: fresh, since the image
	// given to this run must stay as it was while the run uses it.
	next := append([]byte(nil), orig...)
	fo.lastJumps = fo.lastJumps[:0:0]
	for _, o := range overlay {
		segs = append(segs, o)
		if o.Addr >= fo.img.CodeAddr && o.Addr-fo.img.CodeAddr+uint64(len(o.Code)) <= uint64(len(orig)) {
			copy(next[o.Addr-fo.img.CodeAddr:], o.Code)
			fo.lastJumps = append(fo.lastJumps, o)
		}
	}
	fo.inMemory = next
	return code, segs
}

// maxPages bounds the pages a run maps on demand (1 MiB).
const maxPages = 256

// fill is the content of the pages mapped on demand in variant v: zeros,
// then pointers into the same page at an offset each variant chooses
// (each word holds its address XOR fill(v), below the page size), so
// that a pointer chased through them stays in mapped memory.
func fill(v int) uint64 {
	if v == 0 {
		return 0
	}
	return uint64(v*0x108) & 0xff8
}

func (c *checker) dynamic() {
	l, r := c.l, c.r
	if c.t == nil || len(c.funcs) == 0 {
		return
	}
	note := func(msg string) {
		r.add(Finding{Kind: KindNotCompared, Severity: SevNote, Offset: -1, FileOffset: -1, Message: "dynamic: " + msg})
	}
	fo, err := c.foreignImage()
	if err != nil {
		note(err.Error())
		return
	}
	// The campaign engine's worker owns the emulator, as it does for
	// every run of generated programs.
	// No probes: a real file's symbols need not name every function with
	// unwind information.
	worker := campaign.NewWorker(harness.Options{Budget: c.opts.Budget, MaxFailures: c.opts.FailuresPerRun, NoProbes: true})
	defer worker.Close()
	chk, err := worker.Checker(l.Target)
	if err != nil {
		note(fmt.Sprintf("no emulator: %v", err))
		return
	}
	cons, err := consumer.New("builtin")
	if err != nil {
		note(err.Error())
		return
	}
	defer cons.Close()
	c.executedPCs, c.savedCase = map[uint64]bool{}, map[int]bool{}
	if l.Kind != "REL" && l.File.Entry != 0 {
		for _, f := range c.funcs {
			if l.File.Entry >= f.Addr && l.File.Entry < f.Addr+f.Size {
				fo.entry = image.Symbol{Addr: f.Addr + fo.delta, Size: uint32(f.Size)}
			}
		}
	}
	w := &slotWatch{c: c, t: l.Target, delta: fo.delta, off: cons.BatchSize() > 1}
	chk.SetAside(func(expected []frame.Frame, r consumer.Result, j oracle.Judgement) string {
		// Once the run has destroyed a saved register (clobber.go),
		// nothing after says anything about the section.
		if c.cfi != nil && w.step(expected) {
			return AsideClobbered
		}
		if len(expected) > 0 && expected[0].PC >= fo.stub+trampOff && expected[0].PC < fo.stub+trampOff+maxTramps*trampSize {
			return AsidePadEntry
		}
		if k := aside(expected, r, j); k != "" {
			return k
		}
		// The process entry (e_entry) has no caller: the psABI makes it
		// the outermost frame, and so may its rows. Run as a function,
		// or reached by a jump (an exit path), the backtrace ends there
		// while the oracle goes on to the check's stub; every frame
		// before it must still be right.
		if n := len(r.Frames); fo.entry.Size > 0 && r.Err == nil && n > 0 && r.Frames[n-1].Outermost &&
			r.Frames[n-1].PC >= fo.entry.Addr && r.Frames[n-1].PC < fo.entry.End() && j.Verdict == verdict.Wrong && j.Frame == n-1 {
			return AsideProcessEntry
		}
		return ""
	})
	for i, f := range c.funcs {
		if !c.fr[i].HasFDE || f.Size == 0 || strings.HasPrefix(f.Name, ".plt") || f.PartOf != "" || fo.patched[f.Addr+fo.delta] {
			// A PLT entry is entered by a call through it, a cold part
			// by a jump, not run alone; a function that never returns
			// jumps to the exit stand-in (its rows are judged
			// statically only).
			continue
		}
		c.runFunction(i, fo, chk, &watched{Consumer: cons, w: w}, w)
	}
	c.enterLandingPads(fo, chk, &watched{Consumer: cons, w: w}, w)
	c.flushGroups()
}

// runFunction runs function i once per variant and judges every step.
func (c *checker) runFunction(i int, fo *foreign, chk *harness.Checker, cons consumer.Consumer, w *slotWatch) {
	f, fr := c.funcs[i], &c.fr[i]
	lo, hi := f.Addr+fo.delta, f.Addr+f.Size+fo.delta
	seen := map[uint64]bool{}
	for v := 0; v < c.opts.Variants; v++ {
		for _, pc := range c.runOnce(i, fo, chk, cons, w, v, nil) {
			if pc >= lo && pc < hi {
				seen[pc] = true
			}
		}
	}
	fr.Executed = len(seen)
}

// runOnce runs function i in variant v, with the code segments overlay
// written over the file's (a landing pad's jump), judges every step and
// files the failures; it returns the PCs executed and judged.
func (c *checker) runOnce(i int, fo *foreign, chk *harness.Checker, cons consumer.Consumer, w *slotWatch, v int, overlay []image.Segment) []uint64 {
	f, fr := c.funcs[i], &c.fr[i]
	lo := f.Addr + fo.delta
	{
		img := *fo.img
		code, exit := stubCode(c.l.Target, fo.stub, lo)
		img.Segments = []image.Segment{{Addr: fo.stub, Code: code}, {Addr: fo.stub + externalOff, Code: externalCode(c.l.Target)},
			{Addr: fo.stub + exitOff, Code: exitCode(c.l.Target)}}
		if overlay != nil || fo.inMemory != nil {
			img.Code, img.Segments = fo.overlaid(img.Segments, overlay)
		}
		img.Entry, img.Exit = fo.stub, exit
		img.Paths = []map[int]uint64{arguments(c.l.Target, v)}
		chk.SetLenient(&emu.Lenient{Inside: fo.inside, Fill: fill(v), MaxPages: maxPages})
		w.reset()
		res := chk.Trace(&img, cons)
		executed := res.Executed
		if cl := w.lost; cl != nil {
			// The steps from the clobber on were set aside: not judged,
			// not counted as executed.
			if cl.step < len(executed) {
				executed = executed[:cl.step]
			}
			if fr.Clobbered == 0 {
				c.add(i, Finding{Kind: KindDynamic, Severity: SevNote, PC: hex(cl.pc - fo.delta), Offset: -1, FileOffset: -1,
					Message: clobberNote(cl, fo.delta, v, f.Name)})
			}
			fr.Clobbered++
		}
		served := chk.Machine().Served()
		for k, n := range map[string]int{"external calls": served.Externals, "system calls": served.Syscalls, "pages": served.Pages} {
			if n == 0 {
				continue
			}
			if fr.Served == nil {
				fr.Served = map[string]int{}
			}
			fr.Served[k] += n
		}
		for _, pc := range executed {
			if pc >= emu.CodeBase+imageBase {
				c.executedPCs[pc] = true
			}
		}
		fr.Steps += res.Steps
		for k, n := range res.Counts {
			if n == 0 {
				continue
			}
			if fr.Verdicts == nil {
				fr.Verdicts = map[string]int{}
			}
			fr.Verdicts[verdict.Verdict(k).String()] += n
		}
		for k, n := range res.Aside {
			if fr.Aside == nil {
				fr.Aside = map[string]int{}
			}
			fr.Aside[k] += n
		}
		if fr.Ends == nil {
			fr.Ends = map[string]int{}
		}
		fr.Ends[endOf(res)]++
		if res.RunErr != nil && fr.FirstEnd == "" {
			fr.FirstEnd = res.RunErr.Error()
		}
		if res.LoadErr != nil || len(res.Failures) == 0 {
			return executed
		}
		for _, fail := range res.Failures {
			g := c.group(fail, fo.delta, i, v)
			if g.count == 1 && !c.savedCase[i] && c.opts.SaveDir != "" && g.f.Severity == SevError {
				g.f.Reproducer = saveCase(c.opts.SaveDir, &img, cons.Name(), res)
				c.savedCase[i] = true
			}
		}
		if kept := len(res.Failures); kept >= c.opts.FailuresPerRun {
			n := 0
			for _, k := range []verdict.Verdict{verdict.Wrong, verdict.NoInfo, verdict.Error} {
				n += res.Counts[k]
			}
			c.ungrouped += n - kept
			// A WRONG or ERROR step past the kept ones (behind many
			// NOINFO steps in code without SFrame) must still fail.
			keptBy := map[verdict.Verdict]int{}
			for _, f := range res.Failures {
				keptBy[f.Judgement.Verdict]++
			}
			for _, k := range []verdict.Verdict{verdict.Wrong, verdict.Error} {
				if more := res.Counts[k] - keptBy[k]; more > 0 {
					c.add(i, Finding{Kind: KindDynamic, Severity: SevError, PC: hex(f.Addr), Offset: -1, FileOffset: -1, Count: more,
						Message: fmt.Sprintf("%d %s steps in variant %d after the first %d failing steps, which are the ones kept and grouped; rerun with fewer variants or a smaller --budget to see them", more, k, v, kept)})
				}
			}
		}
		return executed
	}
}

// Classes of judged steps the dynamic check keeps out of the verdicts.
const (
	AsideSPOffStack  = "sp off stack"
	AsideBeyondDepth = "beyond depth limit"
	// AsideProcessEntry: the backtrace ends at an outermost frame in the
	// function at e_entry, every frame before it right: the entry's
	// outermost row holds for a process, not for the check's call.
	AsideProcessEntry = "in the process entry"
)

// aside sets apart the steps whose judgement says nothing about the
// section: the SP outside the emulator's stack (an argument of the
// variant, a pointer taken for a size, moved it there: no real run is in
// that state), and a backtrace the consumer cut at its frame limit whose
// frames up to there are all right (oracle.Compare reports the depth only
// after every returned frame matched).
func aside(expected []frame.Frame, r consumer.Result, j oracle.Judgement) string {
	if len(expected) > 0 && (expected[0].SP < emu.StackBase || expected[0].SP >= emu.StackTop) {
		return AsideSPOffStack
	}
	if j.Verdict == verdict.Wrong && j.Field == "depth" && r.Err == nil &&
		len(r.Frames) >= sframe.DefaultMaxFrames && len(r.Frames) < len(expected) {
		return AsideBeyondDepth
	}
	return ""
}

// saveCase saves a failing run in the corpus format; the image holds the
// moved file's code and section, and the stub. Its one function.
func saveCase(dir string, img *image.Image, consName string, res *harness.Result) string {
	img = merged(img)
	cs := repro.NewCase(repro.CaseInput{Img: img, ConsumerName: consName, Res: res})
	if cs == nil {
		return ""
	}
	path, err := corpus.Save(dir, cs)
	if err != nil {
		return "not saved: " + err.Error()
	}
	return path
}

func endOf(res *harness.Result) string {
	switch {
	case res.LoadErr != nil:
		return "refused"
	case res.RunErr == nil:
		return "returned"
	case errors.Is(res.RunErr, emu.ErrBudget):
		return "budget"
	case errors.Is(res.RunErr, emu.ErrFault):
		return "fault"
	case errors.Is(res.RunErr, emu.ErrExit):
		return "exit"
	}
	return "error"
}

// framesText prints frames with their PCs at the file's addresses (the
// stack addresses are the emulator's).
func framesText(fs []frame.Frame, delta uint64) string {
	out := "["
	for i, f := range fs {
		if i > 0 {
			out += " "
		}
		if f.PC >= emu.CodeBase+stubArea && f.PC < emu.CodeBase+imageBase {
			out += fmt.Sprintf("pc=<entry stub> cfa=0x%x", f.CFA)
		} else {
			out += fmt.Sprintf("pc=0x%x cfa=0x%x", f.PC-delta, f.CFA)
		}
		if f.Outermost {
			out += " outermost"
		}
	}
	return out + "]"
}

// foreignImage moves the file's loadable segments into the emulator's
// code region.
func (c *checker) foreignImage() (*foreign, error) {
	l := c.l
	base := uint64(emu.CodeBase + imageBase)
	stub := uint64(emu.CodeBase + stubArea)
	var code []byte
	var lo uint64
	var err error
	if l.Kind == "REL" {
		code, lo, err = c.objectCode(base, stub+externalOff)
	} else {
		code, lo, err = c.segmentCode()
	}
	if err != nil {
		return nil, err
	}
	span := uint64(len(code))
	delta := base - lo
	img := &image.Image{Target: l.Target, Producer: "file:" + l.Path, Code: code, CodeAddr: base}
	if len(c.r.Sections) > 0 {
		img.SFrameVersion = c.r.Sections[0].Version
	}
	for _, f := range c.funcs {
		img.Symbols = append(img.Symbols, image.Symbol{Name: f.Name, Addr: f.Addr + delta, Size: uint32(f.Size), PartOf: f.PartOf})
	}
	// The oracle finds the entry stub, the outermost frame, by a symbol.
	img.Symbols = append(img.Symbols, image.Symbol{Name: "<entry>", Addr: stub, Size: uint32(stubLen(l.Target))},
		image.Symbol{Name: "<external>", Addr: stub + externalOff, Size: uint32(len(externalCode(l.Target)))},
		image.Symbol{Name: "<exit>", Addr: stub + exitOff, Size: uint32(len(exitCode(l.Target)))})
	// The patches go into the code itself, the same for every run: code
	// rewritten between runs costs a write and a flush of the
	// emulator's translations of the whole image each time.
	patched := map[uint64]bool{}
	for _, f := range c.funcs {
		if isNoReturn(f.Name) && f.Size > 0 && !patched[f.Addr+delta] {
			at := f.Addr + delta
			j := jumpCode(l.Target, at, stub+exitOff)
			if at < base || at-base+uint64(len(j)) > uint64(len(code)) || uint64(len(j)) > f.Size {
				continue
			}
			copy(code[at-base:], j)
			patched[at] = true
		}
	}
	if l.Kind != "REL" {
		if err := c.bindDynamic(code, lo, delta, stub+externalOff, stub+exitOff); err != nil {
			return nil, err
		}
	}
	img.SortSymbols()
	section, err := withStubSection(l.Target, l.SFrame, l.SFrameAddr+delta, stub, c.r.Sections)
	if err != nil {
		return nil, err
	}
	img.SFrame, img.SFrameAddr = section, l.SFrameAddr+delta
	img.RuleRegs = c.ruleRegs()
	inside := []emu.Range{{Lo: stub, Hi: emu.CodeBase + imageBase}, {Lo: base, Hi: base + span}}
	return &foreign{img: img, delta: delta, stub: stub, inside: inside, patched: patched}, nil
}

// segmentCode is a linked file's loadable segments from the first one's
// page, and that address.
func (c *checker) segmentCode() ([]byte, uint64, error) {
	l := c.l
	var loads []*elf.Prog
	for _, p := range l.File.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 {
			loads = append(loads, p)
		}
	}
	if len(loads) == 0 {
		return nil, 0, errors.New("no PT_LOAD segment")
	}
	sort.Slice(loads, func(i, j int) bool { return loads[i].Vaddr < loads[j].Vaddr })
	lo := loads[0].Vaddr &^ 0xfff
	hi := loads[len(loads)-1].Vaddr + loads[len(loads)-1].Memsz
	if s := l.SFrameAddr + uint64(len(l.SFrame)); s > hi {
		hi = s
	}
	if err := fits(hi - lo); err != nil {
		return nil, 0, err
	}
	code := make([]byte, hi-lo)
	for _, p := range loads {
		if p.Filesz == 0 {
			continue
		}
		if _, err := p.ReadAt(code[p.Vaddr-lo:p.Vaddr-lo+p.Filesz], 0); err != nil {
			return nil, 0, fmt.Errorf("reading PT_LOAD at 0x%x: %v", p.Vaddr, err)
		}
	}
	return code, lo, nil
}

// fits reports whether span bytes fit the emulator's code region after
// the stubs.
func fits(span uint64) error {
	if span > emu.CodeSize-imageBase-(1<<20) {
		return fmt.Errorf("the loadable segments span %d bytes, more than the emulator's %d-byte code region holds", span, emu.CodeSize-imageBase)
	}
	return nil
}

// stubLen is the length of the call instruction stubCode writes.
func stubLen(t target.Target) int {
	switch t {
	case target.X86_64:
		return 5
	case target.S390X:
		return 6
	}
	return 4
}

// stubCode is a call from at to fn; the run exits at the instruction after
// it.
func stubCode(t target.Target, at, fn uint64) ([]byte, uint64) {
	rel := int64(fn - at)
	var b []byte
	switch t {
	case target.X86_64: // call rel32
		b = []byte{0xe8, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(b[1:], uint32(rel-5))
	case target.S390X: // brasl %r14, rel32 (halfwords)
		b = []byte{0xc0, 0xe5, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[2:], uint32(rel/2))
	default: // bl imm26 (words); instructions are little-endian in both byte orders
		b = make([]byte, 4)
		binary.LittleEndian.PutUint32(b, 0x94000000|uint32(rel/4)&0x3ffffff)
	}
	return b, at + uint64(len(b))
}

// withStubSection appends to the file's section a section of the same ABI
// with one function: the stub, outermost (its RA undefined).
func withStubSection(t target.Target, sec []byte, base, stub uint64, infos []SectionInfo) ([]byte, error) {
	version := sframe.Version3
	if len(infos) > 0 && infos[0].Version == 2 {
		version = sframe.Version2
	}
	abi := sframe.ABI(t)
	fp, ra := sframe.DefaultFixedOffsets(abi)
	pad := (8 - len(sec)%8) % 8
	at := base + uint64(len(sec)+pad)
	stubFDE := sframe.FDE{Start: stub, Size: uint32(stubLen(t)), Rows: []sframe.Row{{
		CFA: sframe.Rule{Kind: sframe.RuleUndefined}, RA: sframe.Rule{Kind: sframe.RuleUndefined}, FP: sframe.Rule{Kind: sframe.RuleSame}}}}
	// The external function never touches its frame: the entry rules
	// hold throughout (the psABI's, as the oracle reads them).
	entry := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: t.SP(), Offset: t.CFAAtEntry()}, RA: sframe.Rule{Kind: sframe.RuleSame}, FP: sframe.Rule{Kind: sframe.RuleSame}}
	if !t.HasLinkRegister() {
		entry.RA = sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: target.RAOnStackAtEntry, Deref: true}
	}
	extFDE := sframe.FDE{Start: stub + externalOff, Size: uint32(len(externalCode(t))), Rows: []sframe.Row{entry}}
	exitFDE := sframe.FDE{Start: stub + exitOff, Size: uint32(len(exitCode(t))), Rows: []sframe.Row{entry}}
	extra, err := sframe.Encode([]sframe.FDE{stubFDE, extFDE, exitFDE}, sframe.EncodeOptions{Version: version, ABI: abi, Base: at, PCRel: true, CFAFixedFP: fp, CFAFixedRA: ra})
	if err != nil {
		return nil, fmt.Errorf("encoding the entry stub's section: %v", err)
	}
	out := make([]byte, 0, len(sec)+pad+len(extra))
	out = append(append(append(out, sec...), make([]byte, pad)...), extra...)
	return out, nil
}

// arguments are the argument registers of variant v (DWARF numbers):
// zeros, then pointers into the stack's zeroed area above the entry SP,
// then small integers, then mixes of both.
func arguments(t target.Target, v int) map[int]uint64 {
	regs := t.ArgRegs()
	scratch := uint64(emu.InitialSP + 1024)
	// The caller's FP is one no slot holds by chance (clobber.go).
	out := map[int]uint64{t.FP(): entryFP}
	for k, r := range regs {
		switch {
		case v == 0:
			out[r] = 0
		case v == 1:
			out[r] = scratch + uint64(k)*256
		case v == 2:
			out[r] = uint64(k + 1)
		case v == padVariant:
			out[r] = uint64(-1 - int64(k)) // negative: the error paths that throw
		case v == padVariant+1:
			out[r] = uint64(int64(int32(-0x80000000 + k)))
		case (v+k)%2 == 0:
			out[r] = scratch + uint64(k)*64
		default:
			out[r] = uint64(v*7 + k)
		}
	}
	return out
}

// ruleRegs lists the registers other than SP, FP and the link register
// that the section's rules name (a CFA on %r10 after DRAP, an s390x FP or
// RA saved in an FPR): the emulator reads them at every step for the
// unwinder's topmost frame.
func (c *checker) ruleRegs() []int {
	var out []int
	for _, f := range c.fdes {
		if rows, err := f.Rows(); err == nil {
			out = sframe.RuleRegs(sframe.ABI(c.l.Target), rows, out)
		}
	}
	return out
}

// externalCode returns 0 to the caller at once.
func externalCode(t target.Target) []byte {
	switch t {
	case target.X86_64:
		return []byte{0x31, 0xc0, 0xc3} // xor %eax,%eax; ret
	case target.S390X:
		return []byte{0xa7, 0x29, 0, 0, 0x07, 0xfe} // lghi %r2,0; br %r14
	}
	return []byte{0x00, 0x00, 0x80, 0xd2, 0xc0, 0x03, 0x5f, 0xd6} // mov x0, #0; ret
}

// Dynamic relocation types bindDynamic applies, per machine.
var dynRelocs = map[elf.Machine]struct{ relative, jumpSlot, globDat, abs64 uint32 }{
	elf.EM_X86_64:  {uint32(elf.R_X86_64_RELATIVE), uint32(elf.R_X86_64_JMP_SLOT), uint32(elf.R_X86_64_GLOB_DAT), uint32(elf.R_X86_64_64)},
	elf.EM_AARCH64: {uint32(elf.R_AARCH64_RELATIVE), uint32(elf.R_AARCH64_JUMP_SLOT), uint32(elf.R_AARCH64_GLOB_DAT), uint32(elf.R_AARCH64_ABS64)},
	elf.EM_S390:    {uint32(elf.R_390_RELATIVE), uint32(elf.R_390_JMP_SLOT), uint32(elf.R_390_GLOB_DAT), uint32(elf.R_390_64)},
}

// bindDynamic does what ld.so does under BIND_NOW for the relocations a
// call needs: RELATIVE words get the moved base, JUMP_SLOT, GLOB_DAT and
// 64-bit absolute words their symbol's moved address, or the external
// function's when the file does not define the symbol (a shared
// library's), or the exit stand-in's for a function that never returns
// (NoReturn). code holds the segments from address lo; other relocation
// types are left as they are.
func (c *checker) bindDynamic(code []byte, lo, delta, external, exit uint64) error {
	f := c.l.File
	kinds, ok := dynRelocs[f.Machine]
	if !ok {
		return nil
	}
	syms, _ := f.DynamicSymbols()
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			return fmt.Errorf("reading %s: %v", sec.Name, err)
		}
		bo := f.ByteOrder
		for i := 0; i+24 <= len(data); i += 24 {
			off, info, addend := bo.Uint64(data[i:]), bo.Uint64(data[i+8:]), bo.Uint64(data[i+16:])
			typ, symIdx := uint32(info), info>>32
			if off < lo || off-lo+8 > uint64(len(code)) {
				continue
			}
			var v uint64
			switch typ {
			case kinds.relative:
				v = addend + delta
			case kinds.jumpSlot, kinds.globDat, kinds.abs64:
				v = external
				if symIdx > 0 && symIdx <= uint64(len(syms)) {
					s := syms[symIdx-1]
					switch {
					case s.Section != elf.SHN_UNDEF && s.Value != 0:
						v = s.Value + delta
					case isNoReturn(s.Name) && elf.ST_TYPE(s.Info) != elf.STT_OBJECT:
						v = exit
					}
				}
				if typ != kinds.jumpSlot {
					v += addend
				}
			default:
				continue
			}
			bo.PutUint64(code[off-lo:], v)
		}
	}
	return nil
}

// merged is img with its stub segments laid into the code, which then
// starts at the stubs' page: a reproducer's entry must lie in its code.
func merged(img *image.Image) *image.Image {
	out := *img
	lo := img.CodeAddr
	for _, s := range img.Segments {
		lo = min(lo, s.Addr)
	}
	code := make([]byte, img.CodeAddr-lo+uint64(len(img.Code)))
	copy(code[img.CodeAddr-lo:], img.Code)
	for _, s := range img.Segments {
		copy(code[s.Addr-lo:], s.Code)
	}
	out.Code, out.CodeAddr, out.Segments = code, lo, nil
	return &out
}
