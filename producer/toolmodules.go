package producer

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The modules layout through a real toolchain.
//
// The programs the builtin producer cuts into modules (modulesChosen,
// moduleCuts: the same seeds, the same cuts, from gen's rows) are built
// one ELF per module: each module's functions are assembled from their
// own source file, placed with .org where gen laid them out, and linked
// on their own: the first module as an executable at its address, each
// other one as a shared object (-shared -z now -Bsymbolic) whose .text is
// at its address (rounded down to 64 bytes, which llvm-mc's .text
// alignment asks; the bytes before the module's first function are not
// the module's code). Every module's .sframe is the one its ELF's
// PT_GNU_SFRAME segment finds, placed with --section-start 1 MiB apart
// above the code (the far module's above the far code), so that no two
// sections share an address; with calls through a PLT, each near
// module's in a slot of the low code region with its .plt and GOT
// (bind.go).
//
// gen's layout fixes every address, and its code calls and jumps
// directly. Where ld describes its .plt in .sframe, a branch from one
// near module to another's function goes through the PLT ld makes
// (bind.go: the executable linked against the shared objects, the slots
// bound by a loader). Every other reference between modules stays a
// direct PC-relative one to the fixed address, which ld is given as
// --defsym for every symbol a module's object leaves undefined (the
// assembler keeps the local labels, -L or --save-temp-labels, so that a
// jump to another module's local label finds it too); -Bsymbolic binds a
// shared object's references to those definitions. Without the PLT (ld
// writes no .sframe for it: AArch64) this is a process linked to fixed
// addresses (as prelink left one), and a module ELF with any dynamic
// relocation is an error. Calls to PLT-like stubs reach gen's stubs (the
// plt-stubs pattern through ld's .plt is the one-ELF batch's).
//
// The image's code is the modules' .text laid end to end, checked
// byte for byte against gen's; its Modules carry each ELF's section and
// address and its code range; its record, every module's commands in
// order (the files named after the modules: exe, lib1.so, ...). A program
// whose far code has no rows (the builtin producer leaves it out of every
// module) is built as before, as one ELF.

// moduleSectionGap is how far apart the modules' .sframe sections are
// placed: each must fit.
const moduleSectionGap = 1 << 20

// toolModuleCuts are the modules a toolchain builds p as, or nil.
func toolModuleCuts(p *gen.Program) ([]moduleCut, bool) {
	if !modulesChosen(p.Seed) {
		return nil, false
	}
	fdes := p.FDEs()
	if len(fdes) >= maxConcatenated {
		return nil, false
	}
	// A function rendered as an empty FDE (.cfi_startproc simple, no CFA
	// rule) gets no rows from the assembler (GNU as 2.47 writes an FDE
	// without FREs), whatever gen's rows, and so does a signal
	// restorer, whose CFA is a DWARF expression (GNU as 2.47 for x86-64:
	// an FDE without FREs): a module of such functions alone would have
	// a section without FREs, which the Linux unwinder's rules refuse.
	// The cut counts them as rowless.
	empty := map[uint64]bool{}
	for _, f := range p.Funcs {
		if f.EmptyFDE || f.Kind == image.KindSignalRestorer {
			empty[f.Addr] = true
		}
	}
	fdes = slices.Clone(fdes)
	for i := range fdes {
		if empty[fdes[i].Start] {
			fdes[i].Rows = nil
		}
	}
	cuts, far := moduleCuts(p, fdes, noShortBranchAcross(p))
	if cuts == nil || len(p.FarCode) > 0 && !far {
		return nil, false
	}
	return cuts, far
}

// noShortBranchAcross allows a cut at a function start that no 2-byte
// x86-64 branch (jmp rel8, jcc rel8, jrcxz, loop) crosses: GNU as
// encodes a jump to a symbol another object defines with a 32-bit
// displacement, so gen's short jump cannot be a jump between modules. On
// other targets a branch's size does not depend on its target.
func noShortBranchAcross(p *gen.Program) func(uint64) bool {
	if p.Target != target.X86_64 {
		return nil
	}
	type branch struct{ from, to uint64 }
	var short []branch
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			b := in.Bytes
			if len(b) != 2 || b[0] != 0xeb && b[0]&0xf0 != 0x70 && (b[0] < 0xe0 || b[0] > 0xe3) {
				continue
			}
			at := f.Addr + uint64(in.Off)
			short = append(short, branch{at, at + 2 + uint64(int64(int8(b[1])))})
		}
	}
	return func(s uint64) bool {
		return !slices.ContainsFunc(short, func(br branch) bool { return (br.from < s) != (br.to < s) })
	}
}

// produceLayout is produce, with the programs the modules layout picks
// built one ELF per module when modules is set.
func (b *toolBuild) produceLayout(progs []*gen.Program, modules bool) ([]*image.Image, []error) {
	if !modules {
		return b.produce(progs)
	}
	out, errs := make([]*image.Image, len(progs)), make([]error, len(progs))
	var rest []*gen.Program
	var restAt []int
	for i, p := range progs {
		cuts, far := toolModuleCuts(p)
		if cuts == nil {
			rest, restAt = append(rest, p), append(restAt, i)
			continue
		}
		out[i], errs[i] = b.buildModules(p, cuts, far)
		if errors.Is(errs[i], errNoSFrameContents) {
			// A module of functions the toolchain writes no FDE for (gas
			// 2.44 and the patterns beyond v2) has no section a loader
			// could find: the program is built as one ELF, where those
			// functions are judged without FDEs all the same.
			out[i], errs[i] = nil, nil
			rest, restAt = append(rest, p), append(restAt, i)
			continue
		}
		if errs[i] != nil {
			out[i], errs[i] = nil, &BatchError{Seeds: []int64{p.Seed}, Err: errs[i]}
		}
	}
	o, e := b.produce(rest)
	for k, i := range restAt {
		out[i], errs[i] = o[k], e[k]
	}
	return out, errs
}

// moduleName is the name of module i: its ELF's file name too.
func moduleName(i int) string {
	if i == 0 {
		return "exe"
	}
	return fmt.Sprintf("lib%d.so", i)
}

// funcBlock is where a function's text is in a program's assembly: from
// its .type line to its .size line, both included, and the gap or padding
// bytes after it (0-based lines).
type funcBlock struct{ from, to int }

// splitAssembly finds each function's block in the lines of a program's
// assembly, and the lines defining its stacks.
func splitAssembly(lines []string) (map[string]funcBlock, []string, error) {
	blocks := map[string]funcBlock{}
	var stacks []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "\t.set ") {
			stacks = append(stacks, l)
			for i+1 < len(lines) && (strings.HasPrefix(lines[i+1], "\t.type ") || strings.HasPrefix(lines[i+1], "\t.size ")) &&
				!strings.Contains(lines[i+1], "function") {
				i++
				stacks = append(stacks, lines[i])
			}
			continue
		}
		rest, ok := strings.CutPrefix(l, "\t.type ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ",")
		end := slices.IndexFunc(lines[i:], func(s string) bool { return strings.HasPrefix(s, "\t.size "+name+",") })
		if end < 0 {
			return nil, nil, fmt.Errorf("the assembly of function %s (line %d) has no .size line", name, i+1)
		}
		// The bytes after a function that lie in no function (gen's gap or
		// padding: a comment line and a .byte line) go with it.
		for i+end+2 < len(lines) && strings.HasPrefix(lines[i+end+1], "# ") && strings.HasSuffix(lines[i+end+1], ", in no function") &&
			strings.HasPrefix(lines[i+end+2], "\t.byte ") {
			end += 2
		}
		blocks[name] = funcBlock{i, i + end}
		i += end
	}
	return blocks, stacks, nil
}

// moduleLinked is one module's ELF, read.
type moduleLinked struct {
	cut          moduleCut
	base         uint64 // where its .text starts: cut.start rounded down to batchAlign
	name         string
	src, obj, so string
	lineOf       []int // the program's line of each line of the module's source
	part         *part
	defined      map[string]uint64 // symbols of the object's .text, at their addresses
	undefined    []string
	linked       *linked
	asOut        string
	head, body   []string   // the source's lines: a comment and .text, then the module's
	changed      bool       // body rewritten for calls through the PLT (bind.go)
	lowSlot      uint64     // where its first segment goes when calls go through a PLT, else 0
	routed       []objReloc // the branches of .text ld sends to a PLT entry
	bound        boundModule
}

// writeSource writes the module's source file from its lines.
func (m *moduleLinked) writeSource(p *gen.Program) error {
	src := strings.Join(m.head, "\n") + "\n" + strings.Join(m.body, "\n") + "\n\t" + p.NoExecStack() + "\n"
	return os.WriteFile(m.src, []byte(src), 0o644)
}

// buildModules builds p as one ELF per module of cuts (the last one the
// far code when far).
func (b *toolBuild) buildModules(p *gen.Program, cuts []moduleCut, far bool) (*image.Image, error) {
	if p.Target != b.target {
		return nil, fmt.Errorf("%s producer for %s: program seed %d is for %s", b.producer, b.target.Name(), p.Seed, p.Target.Name())
	}
	dir, err := os.MkdirTemp("", "sfconform-"+strings.NewReplacer(":", "_", "/", "_").Replace(b.producer)+"-modules-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	asm := p.AssemblyWith(gen.AsmOptions{InFile: true})
	lines := strings.Split(asm, "\n")
	blocks, stacks, err := splitAssembly(lines)
	if err != nil {
		return nil, err
	}
	mods := make([]*moduleLinked, len(cuts))
	for k, c := range cuts {
		isFar := far && k == len(cuts)-1
		m := &moduleLinked{cut: c, name: moduleName(k), src: filepath.Join(dir, fmt.Sprintf("b%d.s", k)),
			obj: filepath.Join(dir, fmt.Sprintf("b%d.o", k)), so: filepath.Join(dir, moduleName(k)), base: c.start &^ (batchAlign - 1)}
		if isFar {
			m.base = c.start
		}
		var body []string
		for _, f := range p.Funcs {
			if f.Far != isFar || !isFar && (f.Addr < c.start || f.Addr >= c.end) {
				continue
			}
			bl, ok := blocks[f.Name]
			if !ok {
				return nil, fmt.Errorf("the assembly has no text for function %s", f.Name)
			}
			body = append(body, fmt.Sprintf("\t.org %#x", f.Addr-m.base))
			m.lineOf = append(m.lineOf, 0)
			for i := bl.from; i <= bl.to; i++ {
				body = append(body, lines[i])
				m.lineOf = append(m.lineOf, i+1)
			}
		}
		if k == 0 {
			body = append(body, stacks...)
			m.lineOf = append(m.lineOf, make([]int, len(stacks))...)
		}
		head := []string{fmt.Sprintf("# sfconform: %s seed %d, module %d of %d (%s), code [%#x,%#x), %s",
			p.Target.Name(), p.Seed, k+1, len(cuts), m.name, c.start, c.end, b.producer), "\t.text"}
		text := strings.Join(body, "\n") + "\n"
		m.part = &part{prog: p, file: filepath.Base(m.src), first: len(head), lines: len(body),
			funcs: functionLines(text, ""), text: body}
		m.head, m.body = head, body
		if err := m.writeSource(p); err != nil {
			return nil, err
		}
		mods[k] = m
	}
	keep := "-L"
	if strings.HasPrefix(b.producer, "llvm-mc") {
		keep = "--save-temp-labels"
	}
	var asCmds []string
	assemble := func(m *moduleLinked) error {
		r, err := b.as.Assemble(m.src, m.obj, append(slices.Clone(b.asFlags), keep)...)
		asCmds = append(asCmds, r.String())
		if err != nil {
			return err
		}
		m.asOut = r.Output
		m.defined, m.undefined = nil, nil
		return m.readObject()
	}
	for _, m := range mods {
		if err := assemble(m); err != nil {
			return nil, err
		}
	}
	near := len(mods)
	if far {
		near--
	}
	// Calls between near modules go through the PLT ld makes where it
	// describes its .plt in .sframe (bind.go).
	var routes []map[string]bool
	if sup := b.pltProbe(); sup.ok && near <= maxPLTModules {
		var definer map[string]int
		var err error
		if routes, definer, err = planRoutes(p, mods, near); err != nil {
			return nil, err
		}
		if len(definer) == 0 {
			routes = nil
		} else {
			routeSources(p.Target, mods, routes, definer)
			asCmds = asCmds[:0]
			for k, m := range mods {
				if k < near {
					m.lowSlot = moduleLowBase + uint64(k)*moduleLowSlot
				}
				if m.changed {
					if err := m.writeSource(p); err != nil {
						return nil, err
					}
				}
				if err := assemble(m); err != nil {
					return nil, err
				}
			}
		}
	}
	alias := func(k int, n string) bool {
		base, ok := strings.CutSuffix(n, moduleAliasSuffix)
		return ok && k < len(routes) && routes[k][base]
	}
	defined := map[string]uint64{}
	for _, m := range mods {
		for n, a := range m.defined {
			defined[n] = a
		}
	}
	nearEnd := p.Base + uint64(len(p.Code))
	// The shared objects first, the executable last, linked against the
	// near ones when calls go through a PLT.
	order := make([]int, 0, len(mods))
	for k := 1; k < len(mods); k++ {
		order = append(order, k)
	}
	order = append(order, 0)
	ldCmds := make([]string, len(mods))
	for _, k := range order {
		m := mods[k]
		l := toolchain.Link{Output: m.so, Objects: []string{m.obj}, Text: m.base, Entry: m.cut.start, Symbols: map[string]uint64{}}
		at := alignUp(nearEnd, moduleSectionGap) + uint64(k)*moduleSectionGap
		if far && k == len(mods)-1 {
			at = alignUp(m.cut.end, moduleSectionGap)
		}
		next := at + moduleSectionGap
		if m.lowSlot != 0 {
			at, next = m.lowSlot+moduleLowSFrame, m.lowSlot+moduleLowSlot
		}
		l.Sections = map[string]uint64{sframe.SectionName: at}
		if k == 0 {
			l.Entry = p.Entry
			if routes != nil {
				l.Now, l.TextSegment = true, m.lowSlot
				for _, o := range mods[1:near] {
					l.Objects = append(l.Objects, o.so)
				}
			}
		} else {
			l.Shared, l.Symbolic = true, true
			if m.lowSlot != 0 {
				l.TextSegment = m.lowSlot
			} else if base := m.cut.start &^ (1<<20 - 1); base >= sharedBelow {
				l.TextSegment = base - sharedBelow
			}
		}
		for _, n := range m.undefined {
			if alias(k, n) {
				continue // through the PLT
			}
			a, ok := defined[n]
			if !ok {
				return nil, fmt.Errorf("module %s refers to %s, which no module defines", m.name, n)
			}
			l.Symbols[n] = a
		}
		r, err := b.ld.Link(l)
		ldCmds[k] = r.String()
		if err != nil {
			return nil, err
		}
		m.asOut += "\x00" + r.Output
		if m.linked, err = readModule(m.so, b.target); err != nil {
			return nil, fmt.Errorf("module %s: %w", m.name, err)
		}
		if routes == nil {
			if err := noDynamicRelocs(m.so); err != nil {
				return nil, fmt.Errorf("module %s: %w", m.name, err)
			}
		}
		if end := m.linked.sframeAddr + uint64(len(m.linked.sframe)); end > next {
			return nil, fmt.Errorf("module %s: .sframe [%#x,+%d) passes %#x, where the next module's begins", m.name, m.linked.sframeAddr, len(m.linked.sframe), next)
		}
	}
	// The commands in the order they run: every assembly, then the links.
	cmds := asCmds
	for _, k := range order {
		cmds = append(cmds, ldCmds[k])
	}
	if routes != nil {
		if err := bindRouted(p, mods, routes); err != nil {
			return nil, err
		}
	}
	return b.loadModules(p, mods, far, cmds, dir)
}

// readModule reads a module's ELF, its .plt left to bindModules.
func readModule(path string, tg target.Target) (*linked, error) {
	return readLinkedWith(path, tg, false)
}

// readObject reads the symbols of the module's object: those of its
// .text at their addresses, and those it leaves undefined.
func (m *moduleLinked) readObject() error {
	f, err := elf.Open(m.obj)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s: symbols: %w", filepath.Base(m.obj), err)
	}
	text := slices.IndexFunc(f.Sections, func(s *elf.Section) bool { return s.Name == ".text" })
	m.defined = map[string]uint64{}
	for _, s := range syms {
		switch {
		case s.Name == "" || elf.ST_TYPE(s.Info) == elf.STT_SECTION || elf.ST_TYPE(s.Info) == elf.STT_FILE:
		case s.Section == elf.SHN_UNDEF:
			m.undefined = append(m.undefined, s.Name)
		case int(s.Section) == text:
			m.defined[s.Name] = m.base + s.Value
		}
	}
	return nil
}

// noDynamicRelocs fails when the linked file has dynamic relocations: the
// loader applies none to a module.
func noDynamicRelocs(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if (s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL) && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			return fmt.Errorf("%s holds %d bytes of dynamic relocations: the loader applies none to a module", s.Name, s.Size)
		}
	}
	return nil
}

// loadModules makes p's image out of its modules' ELFs.
func (b *toolBuild) loadModules(p *gen.Program, mods []*moduleLinked, far bool, cmds []string, dir string) (*image.Image, error) {
	rec := &image.Record{Tools: b.tools, Commands: cmds, Batch: 1}
	img := &image.Image{
		Target: p.Target, Producer: b.producer, CodeAddr: p.Base, Entry: p.Entry, Exit: p.Exit,
		Paths: p.PathRegs(), Signals: p.Signals(), Record: rec,
	}
	regs := p.RuleRegs()
	for k, m := range mods {
		l := m.linked
		code, err := cut(l.text, l.textAddr, m.cut.start, int(m.cut.end-m.cut.start), ".text of "+m.name)
		if err != nil {
			return nil, err
		}
		if far && k == len(mods)-1 {
			if i := mismatch(code, p.FarCode); i >= 0 {
				return nil, fmt.Errorf("module %s: the linked far code differs from gen's at %#x (%s)", m.name, p.FarBase+uint64(i), describeAt(p, p.FarBase+uint64(i)))
			}
			img.Segments = []image.Segment{{Addr: p.FarBase, Code: code}}
		} else {
			img.Code = append(img.Code, code...)
		}
		if k == 0 {
			img.SFrameVersion = l.version
		} else if l.version != img.SFrameVersion {
			return nil, fmt.Errorf("module %s has SFrame version %d, module exe %d", m.name, l.version, img.SFrameVersion)
		}
		img.Modules = append(img.Modules, image.Module{Name: m.name, Start: m.cut.start, End: m.cut.end, SFrame: l.sframe, SFrameAddr: l.sframeAddr})
		// What the tools said: the assembler's messages about a line go
		// to the program's line; the rest as the batch build places them.
		asOut, ldOut, _ := strings.Cut(m.asOut, "\x00")
		o := &asmObject{src: m.src, obj: m.obj, parts: []*part{m.part}}
		per, rest := attribute(asOut, b.tools[0].Name, o)
		for i := range per[0] {
			if w := &per[0][i]; w.Line > 0 && w.Line <= len(m.lineOf) {
				w.Line = m.lineOf[w.Line-1]
			}
		}
		placeSkips(rest, o, l.table, per)
		rec.Warnings = append(rec.Warnings, per[0]...)
		rec.Warnings = append(rec.Warnings, linkerWarnings(ldOut, dir)...)
		rec.Warnings = append(rec.Warnings, l.notes...)
	}
	want, err := routedCode(p, mods)
	if err != nil {
		return nil, err
	}
	if i := mismatch(img.Code, want); i >= 0 {
		return nil, fmt.Errorf("the linked modules' code differs from gen's (its calls between modules sent to their PLT entries) at %#x (%s): gen % x, linked % x",
			p.Base+uint64(i), describeAt(p, p.Base+uint64(i)), want[i:min(i+8, len(want))], img.Code[i:min(i+8, len(img.Code))])
	}
	for _, m := range mods {
		pltParts(img, m)
	}
	slices.SortFunc(img.Modules, func(a, b image.Module) int { return cmp.Compare(a.Start, b.Start) })
	for _, g := range p.Symbols() {
		k := slices.IndexFunc(mods, func(m *moduleLinked) bool {
			_, ok := m.linked.funcs[g.Name]
			return ok && m.cut.start <= g.Addr && g.Addr < m.cut.end || (far && m == mods[len(mods)-1] && ok)
		})
		if k < 0 {
			return nil, fmt.Errorf("no module's linked file has function symbol %s", g.Name)
		}
		s := mods[k].linked.funcs[g.Name]
		if s.Value != g.Addr || uint32(s.Size) != g.Size {
			return nil, fmt.Errorf("function %s is at [%#x,+%d) in %s, gen laid it out at [%#x,+%d)", g.Name, s.Value, s.Size, mods[k].name, g.Addr, g.Size)
		}
		img.Symbols = append(img.Symbols, image.Symbol{Name: g.Name, Addr: s.Value, Size: uint32(s.Size), PartOf: g.PartOf, Kind: g.Kind})
	}
	for _, g := range p.Stacks() {
		s, ok := mods[0].linked.objects[g.Name]
		if !ok || s.Value != g.Addr || uint32(s.Size) != g.Size {
			return nil, fmt.Errorf("stack %s: linked symbol %+v in exe, gen's [%#x,+%d)", g.Name, s, g.Addr, g.Size)
		}
		img.Symbols = append(img.Symbols, image.Symbol{Name: g.Name, Addr: s.Value, Size: uint32(s.Size), Kind: image.KindStack})
	}
	img.SortSymbols()
	for _, m := range mods {
		regs = ruleRegsIn(p, img, m.linked.table, regs)
	}
	img.RuleRegs = regs
	if err := img.CheckModules(); err != nil {
		return nil, err
	}
	return img, nil
}

// ModuleLinker is a toolchain producer that can build the programs the
// modules layout picks one ELF per module.
type ModuleLinker interface {
	BatchProducer
	// WithModules is the producer with the modules layout on (the
	// programs modulesChosen picks are built one ELF per module) or off.
	WithModules(on bool) BatchProducer
}

// WithModules is g building the modules layout's programs one ELF per
// module, or not.
func (g *GAS) WithModules(on bool) BatchProducer {
	if on {
		return gasModules{g}
	}
	return g
}

// WithModules is l building the modules layout's programs one ELF per
// module, or not.
func (l *LLVMMC) WithModules(on bool) BatchProducer {
	if on {
		return llvmModules{l}
	}
	return l
}

// gasModules is a GAS producer with the modules layout on.
type gasModules struct{ *GAS }

func (g gasModules) Produce(p *gen.Program) (*image.Image, error) {
	imgs, errs := g.ProduceBatch([]*gen.Program{p})
	return imgs[0], errs[0]
}

func (g gasModules) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	return produceLayout(progs, g.build, true)
}

// llvmModules is an LLVMMC producer with the modules layout on.
type llvmModules struct{ *LLVMMC }

func (l llvmModules) Produce(p *gen.Program) (*image.Image, error) {
	imgs, errs := l.ProduceBatch([]*gen.Program{p})
	return imgs[0], errs[0]
}

func (l llvmModules) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	return produceLayout(progs, l.build, true)
}

var _, _ ModuleLinker = (*GAS)(nil), (*LLVMMC)(nil)
var _, _ Limited = gasModules{}, llvmModules{}
