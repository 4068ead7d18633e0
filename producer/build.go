package producer

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// BatchProducer is a Producer that makes many images with one run of its
// tools: process start-up must not dominate a run of thousands of
// programs.
type BatchProducer interface {
	Producer
	// ProduceBatch makes the images of programs of one target laid out at
	// disjoint addresses, in increasing order (gen.Program.LayoutAt), far
	// code included. out[i] is progs[i]'s image, or nil with errs[i]
	// saying why: one program a tool cannot take does not fail the
	// others.
	ProduceBatch(progs []*gen.Program) (out []*image.Image, errs []error)
}

// batchAlign is how programs of one batch are aligned: the start of each
// object's part of a section, so that where the linker puts it is known.
const batchAlign = 64

// toolBuild assembles programs with a real assembler (GNU as or llvm-mc)
// and links them with GNU ld at fixed addresses, then loads each
// program's image out of the linked file. Only the tools decide the
// table: the assembler reads the .cfi_* directives of gen's text, never
// gen's rows.
type toolBuild struct {
	producer string
	target   target.Target
	version  int // the SFrame version the assembler was measured to emit
	as       toolchain.Toolchain
	asFlags  []string // --gsframe
	ld       toolchain.Toolchain
	tools    []image.Tool
	// objects is how many objects a batch is split into: 1 gives one
	// .sframe section for the linker to merge; more leave the linked
	// section as several input sections laid end to end when the linker
	// cannot merge them (llvm-mc's version 2 for GNU ld 2.44).
	objects int
}

// BatchError is a tool that failed on a set of programs.
type BatchError struct {
	Seeds []int64
	Err   error
}

func (e *BatchError) Error() string {
	if len(e.Seeds) == 1 {
		return fmt.Sprintf("seed %d: %v", e.Seeds[0], e.Err)
	}
	return fmt.Sprintf("a batch of %d programs (seeds %d..%d): %v", len(e.Seeds), e.Seeds[0], e.Seeds[len(e.Seeds)-1], e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// produce builds progs; when a tool fails on the whole batch it tries the
// halves, so that the failure lands on the programs that cause it.
func (b *toolBuild) produce(progs []*gen.Program) ([]*image.Image, []error) {
	out, errs := make([]*image.Image, len(progs)), make([]error, len(progs))
	if len(progs) == 0 {
		return out, errs
	}
	if err := b.checkLayout(progs); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	imgs, perProg, err := b.buildOnce(progs)
	if err == nil {
		return imgs, perProg
	}
	var te *toolchain.ToolError
	if len(progs) == 1 || !errors.As(err, &te) {
		for i := range errs {
			errs[i] = &BatchError{Seeds: seeds(progs), Err: err}
		}
		return out, errs
	}
	half := len(progs) / 2
	o1, e1 := b.produce(progs[:half])
	o2, e2 := b.produce(progs[half:])
	return append(o1, o2...), append(e1, e2...)
}

func seeds(progs []*gen.Program) []int64 {
	out := make([]int64, len(progs))
	for i, p := range progs {
		out[i] = p.Seed
	}
	return out
}

// checkLayout requires the programs laid out one after the other, near
// and far code each in increasing order, every start aligned to
// batchAlign, so that one source file with .org directives places each
// where gen laid it out.
func (b *toolBuild) checkLayout(progs []*gen.Program) error {
	var nearEnd, farEnd uint64
	for i, p := range progs {
		if p.Target != b.target {
			return fmt.Errorf("%s producer for %s: program seed %d is for %s", b.producer, b.target.Name(), p.Seed, p.Target.Name())
		}
		if len(p.Code) == 0 {
			return fmt.Errorf("%s producer: program seed %d is not laid out", b.producer, p.Seed)
		}
		if p.Base%batchAlign != 0 || (len(p.FarCode) > 0 && p.FarBase%batchAlign != 0) {
			return fmt.Errorf("%s producer: program seed %d at %#x (far %#x): batched programs start on %d-byte boundaries",
				b.producer, p.Seed, p.Base, p.FarBase, batchAlign)
		}
		if i > 0 && p.Base < nearEnd || len(p.FarCode) > 0 && farEnd > 0 && p.FarBase < farEnd {
			return fmt.Errorf("%s producer: program seed %d at %#x (far %#x) overlaps or precedes the one before it (which ends at %#x, far %#x)",
				b.producer, p.Seed, p.Base, p.FarBase, nearEnd, farEnd)
		}
		nearEnd = p.Base + uint64(len(p.Code))
		if len(p.FarCode) > 0 {
			farEnd = p.FarBase + uint64(len(p.FarCode))
		}
	}
	return nil
}

// part is one program's place in a batch's source file.
type part struct {
	prog   *gen.Program
	prefix string
	file   string // the source file's base name
	first  int    // line number in the file of the program's first line, minus 1
	lines  int
	funcs  []funcLine // where each function's text starts, in the program's own lines
	text   []string   // the program's lines
}

// funcText is the text of the function called name, from its .type line
// to the next function's.
func (pt *part) funcText(name string) []string {
	for i, f := range pt.funcs {
		if f.name != name {
			continue
		}
		end := len(pt.text)
		if i+1 < len(pt.funcs) {
			end = pt.funcs[i+1].line - 1
		}
		return pt.text[f.line-1 : end]
	}
	return nil
}

type funcLine struct {
	name string
	line int
}

// asmObject is one source file of a batch and the object made from it.
type asmObject struct {
	src, obj string
	parts    []*part
}

// render writes the source files of a batch: programs split evenly over
// b.objects files, each placed with .org at its address relative to its
// file's part of .text (and of the far section).
func (b *toolBuild) render(dir string, progs []*gen.Program, plt bool) ([]*asmObject, error) {
	n := min(max(b.objects, 1), len(progs))
	var objs []*asmObject
	nearStart, farStart := progs[0].Base, uint64(0)
	for _, p := range progs {
		if len(p.FarCode) > 0 {
			farStart = p.FarBase
			break
		}
	}
	k := 0
	for j := 0; j < n; j++ {
		chunk := progs[k : k+(len(progs)-k)/(n-j)]
		o := &asmObject{src: filepath.Join(dir, fmt.Sprintf("b%d.s", j)), obj: filepath.Join(dir, fmt.Sprintf("b%d.o", j))}
		var sb strings.Builder
		line := 0
		emit := func(s string) {
			sb.WriteString(s)
			line += strings.Count(s, "\n")
		}
		emit(fmt.Sprintf("# sfconform: %d programs for %s, %s, object %d of %d\n", len(chunk), b.target.Name(), b.producer, j+1, n))
		far := slices.ContainsFunc(chunk, func(p *gen.Program) bool { return len(p.FarCode) > 0 })
		if far {
			emit("\t" + gen.CFISections + "\n")
		}
		typ := "@progbits"
		if b.target.IsAArch64() {
			typ = "%progbits"
		}
		// Each file's part of a section starts batchAlign-aligned: the
		// linker then puts it at the next such boundary after the
		// previous file's part.
		emit(fmt.Sprintf("\t.text\n\t.balign %d\n", batchAlign))
		if far {
			emit(fmt.Sprintf("\t.pushsection %s,\"ax\",%s\n\t.balign %d\n\t.popsection\n", gen.FarSection, typ, batchAlign))
		}
		for _, p := range chunk {
			pt := &part{prog: p, prefix: fmt.Sprintf("p%d_", k), file: filepath.Base(o.src)}
			emit(fmt.Sprintf("\t.text\n\t.org %#x\n", p.Base-nearStart))
			if len(p.FarCode) > 0 {
				emit(fmt.Sprintf("\t.pushsection %s,\"ax\",%s\n\t.org %#x\n\t.popsection\n", gen.FarSection, typ, p.FarBase-farStart))
			}
			text := p.AssemblyWith(gen.AsmOptions{Prefix: pt.prefix, InFile: true, PLT: plt})
			pt.first = line
			pt.lines = strings.Count(text, "\n")
			pt.funcs = functionLines(text, pt.prefix)
			pt.text = strings.Split(text, "\n")
			emit(text)
			o.parts = append(o.parts, pt)
			k++
		}
		emit("\t" + chunk[0].NoExecStack() + "\n")
		if err := os.WriteFile(o.src, []byte(sb.String()), 0o644); err != nil {
			return nil, err
		}
		objs = append(objs, o)
		// The next file's part of .text starts at the next boundary
		// after this one's code: its .org offsets count from there.
		last := chunk[len(chunk)-1]
		nearStart = alignUp(last.Base+uint64(len(last.Code)), batchAlign)
		for _, p := range chunk {
			if len(p.FarCode) > 0 {
				farStart = alignUp(p.FarBase+uint64(len(p.FarCode)), batchAlign)
			}
		}
	}
	return objs, nil
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// functionLines finds where each function's text starts (its .type line).
func functionLines(text, prefix string) []funcLine {
	var out []funcLine
	for i, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "\t.type "); ok {
			name, _, _ := strings.Cut(rest, ",")
			if n, ok := strings.CutPrefix(name, prefix); ok && !strings.HasSuffix(rest, "object") {
				out = append(out, funcLine{name: n, line: i + 1})
			}
		}
	}
	return out
}

// buildOnce assembles and links the whole batch once: as a shared object
// whose calls to PLT-like stubs go through ld's .plt when some program
// calls a stub and ld describes its .plt (plt.go).
func (b *toolBuild) buildOnce(progs []*gen.Program) ([]*image.Image, []error, error) {
	dir, err := os.MkdirTemp("", "sfconform-"+strings.NewReplacer(":", "_", "/", "_").Replace(b.producer)+"-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	plt := slices.ContainsFunc(progs, func(p *gen.Program) bool { return len(p.PLTStubs()) > 0 }) && b.pltProbe().ok
	return b.buildIn(dir, progs, plt)
}

// buildIn is buildOnce in dir, through the PLT or not.
func (b *toolBuild) buildIn(dir string, progs []*gen.Program, plt bool) ([]*image.Image, []error, error) {
	objs, err := b.render(dir, progs, plt)
	if err != nil {
		return nil, nil, err
	}
	var cmds []string
	warnings := make([][]image.Warning, len(progs))
	unplaced := make([][]image.Warning, len(objs)) // per object: the assembler's messages without a line
	var objFiles []string
	var parts []*part
	for j, o := range objs {
		r, err := b.as.Assemble(o.src, o.obj, b.asFlags...)
		cmds = append(cmds, r.String())
		if err != nil {
			return nil, nil, err
		}
		w, rest := attribute(r.Output, b.tools[0].Name, o)
		copy(warnings[len(parts):], w)
		unplaced[j] = rest
		objFiles = append(objFiles, o.obj)
		parts = append(parts, o.parts...)
	}
	l := toolchain.Link{Output: filepath.Join(dir, "b"), Objects: objFiles, Text: progs[0].Base, Entry: progs[0].Entry}
	if plt {
		l.Shared = true
		if base := progs[0].Base &^ (1<<20 - 1); base >= sharedBelow {
			l.TextSegment = base - sharedBelow
		}
	}
	for _, p := range progs {
		if len(p.FarCode) > 0 {
			l.Sections = map[string]uint64{gen.FarSection: p.FarBase}
			break
		}
	}
	r, err := b.ld.Link(l)
	cmds = append(cmds, r.String())
	if err != nil {
		return nil, nil, err
	}
	batchWarnings := linkerWarnings(r.Output, dir)
	linked, err := readLinked(l.Output, b.target)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", strings.Join(cmds, "; "), err)
	}
	batchWarnings = append(batchWarnings, linked.notes...)
	first := 0
	for j, o := range objs {
		placeSkips(unplaced[j], o, linked.table, warnings[first:first+len(o.parts)])
		first += len(o.parts)
	}
	imgs, errs := make([]*image.Image, len(progs)), make([]error, len(progs))
	for i, pt := range parts {
		rec := &image.Record{Tools: b.tools, Commands: cmds, Batch: len(progs),
			Warnings: append(append([]image.Warning(nil), warnings[i]...), batchWarnings...)}
		imgs[i], errs[i] = b.load(linked, pt, rec)
		if errs[i] != nil {
			imgs[i] = nil
			errs[i] = &BatchError{Seeds: []int64{pt.prog.Seed}, Err: errs[i]}
		}
	}
	return imgs, errs, nil
}

// placeSkips attributes an assembler's messages that name no line. GNU as
// 2.44 writes its SFrame FDEs after reading the whole file and says
// "<file>: Warning: skipping SFrame FDE; non-SP/FP register 10 in
// .cfi_def_cfa" once per function it leaves out, in the order of the
// functions. Each such message goes to the next function of the file, in
// order, that has no FDE in the linked table and whose text uses the
// directive the message names; other functions without an FDE (left out
// without a word: GNU as 2.40, or 2.44 for ".cfi_startproc simple") are
// passed over. A message that finds no function, and any other message
// that names no line, goes to every program of the file.
func placeSkips(msgs []image.Warning, o *asmObject, tab *sframe.Table, per [][]image.Warning) {
	type fn struct {
		part int
		name string
	}
	var missing []fn
	for i, pt := range o.parts {
		for _, f := range pt.prog.Funcs {
			if tab == nil {
				break
			}
			if got, err := tab.FindFDE(f.Addr); err != nil || got.Start > f.Addr {
				missing = append(missing, fn{i, f.Name})
			}
		}
	}
	var rest []image.Warning
	next := 0
	for _, m := range msgs {
		if !strings.Contains(m.Text, "SFrame FDE") {
			rest = append(rest, m)
			continue
		}
		directive := ""
		if d := skipDirectiveRE.FindStringSubmatch(m.Text); d != nil {
			directive = d[1]
		}
		placed := false
		for k := next; k < len(missing); k++ {
			f := missing[k]
			if directive != "" && !slices.ContainsFunc(o.parts[f.part].funcText(f.name), func(l string) bool {
				return strings.HasPrefix(l, "\t"+directive+" ")
			}) {
				continue
			}
			m.Function = f.name
			per[f.part] = append(per[f.part], m)
			next, placed = k+1, true
			break
		}
		if !placed {
			rest = append(rest, m)
		}
	}
	for i := range per {
		per[i] = append(per[i], rest...)
	}
}

// skipDirectiveRE finds the directive a skipped-FDE message names.
var skipDirectiveRE = regexp.MustCompile(`in (\.cfi_[a-z_]+)`)

// diagRE matches a diagnostic about a source file of a batch: GNU as
// "b0.s:123: Warning: text", llvm-mc "/dir/b0.s:123:2: warning: text",
// and without a line "/dir/b0.s: Warning: text".
var diagRE = regexp.MustCompile(`^(?:\S*/)?(b\d+\.s):(?:(\d+):(?:\d+:)?)? *(.*)$`)

// attribute sorts an assembler's messages about one source file: those
// naming a line of a program go to that program (with the function and
// the line of its own text); the rest (no line, or llvm-mc's
// "<unknown>:0: ...") are returned apart.
func attribute(out, tool string, o *asmObject) (per [][]image.Warning, rest []image.Warning) {
	per = make([][]image.Warning, len(o.parts))
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, " \t")
		if l == "" || strings.HasSuffix(l, "Assembler messages:") {
			continue
		}
		m := diagRE.FindStringSubmatch(l)
		if m == nil || m[1] != filepath.Base(o.src) {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.Trim(l, " ^~") == "" {
				continue // llvm-mc's echo of the source line and its caret
			}
			rest = append(rest, image.Warning{Tool: tool, Text: l})
			continue
		}
		n, _ := strconv.Atoi(m[2])
		idx := slices.IndexFunc(o.parts, func(p *part) bool { return n > p.first && n <= p.first+p.lines })
		if idx < 0 {
			rest = append(rest, image.Warning{Tool: tool, Text: m[3]})
			continue
		}
		pt := o.parts[idx]
		w := image.Warning{Tool: tool, Line: n - pt.first, Text: strings.ReplaceAll(m[3], pt.prefix, "")}
		for _, f := range pt.funcs {
			if f.line <= w.Line {
				w.Function = f.name
			}
		}
		per[idx] = append(per[idx], w)
	}
	return per, rest
}

// linkerWarnings keeps what ld printed, without its own path and the
// temporary directory's.
func linkerWarnings(out, dir string) []image.Warning {
	var ws []image.Warning
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if prog, rest, ok := strings.Cut(l, ": "); ok && (strings.Contains(prog, "/") || strings.HasSuffix(prog, "ld")) {
			l = rest
		}
		ws = append(ws, image.Warning{Tool: "ld", Text: strings.ReplaceAll(l, dir+"/", "")})
	}
	return ws
}

// linked is what a batch's executable holds.
type linked struct {
	text, far         []byte
	textAddr, farAddr uint64
	sframe            []byte
	sframeAddr        uint64
	version           int
	funcs             map[string]elf.Symbol // by name, prefixed
	objects           map[string]elf.Symbol
	table             *sframe.Table
	notes             []image.Warning // facts about the linked file the tools did not print
	plt               *pltLinked      // a shared object's .plt, bound (plt.go)
}

// ptGNUSFrame is the program header type of the SFrame segment
// (PT_GNU_SFRAME, include/elf/common.h).
const ptGNUSFrame = elf.ProgType(0x6474e554)

// readLinked reads the executable: code, symbols, and the .sframe section
// as a loader finds it, through the PT_GNU_SFRAME segment.
func readLinked(path string, tg target.Target) (*linked, error) {
	return readLinkedWith(path, tg, true)
}

// readLinkedWith is readLinked, binding a shared object's .plt (plt.go)
// when bindPLT is set.
func readLinkedWith(path string, tg target.Target, bindPLT bool) (*linked, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.ByteOrder != tg.ByteOrder() {
		return nil, fmt.Errorf("linked file is %v, %s is %v", f.ByteOrder, tg.Name(), tg.ByteOrder())
	}
	l := &linked{funcs: map[string]elf.Symbol{}, objects: map[string]elf.Symbol{}}
	for _, s := range []struct {
		name string
		data *[]byte
		addr *uint64
	}{{".text", &l.text, &l.textAddr}, {gen.FarSection, &l.far, &l.farAddr}} {
		sec := f.Section(s.name)
		if sec == nil {
			continue
		}
		if *s.data, err = sec.Data(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		*s.addr = sec.Addr
	}
	var seg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == ptGNUSFrame {
			seg = p
		}
	}
	sec := f.Section(sframe.SectionName)
	switch {
	case sec == nil || sec.Size == 0:
		return nil, errNoSFrameContents
	case seg == nil:
		return nil, errors.New("the linked file has .sframe but no PT_GNU_SFRAME segment")
	case seg.Vaddr != sec.Addr || seg.Filesz < sec.Size:
		return nil, fmt.Errorf("PT_GNU_SFRAME [%#x,+%d) does not start with .sframe [%#x,+%d)", seg.Vaddr, seg.Filesz, sec.Addr, sec.Size)
	}
	// The image carries what a loader reads: the segment. GNU ld 2.47 for
	// s390x rounds the segment up to the section's alignment (8), past
	// the section's last byte; the record says so.
	l.sframe = make([]byte, seg.Filesz)
	if _, err := seg.ReadAt(l.sframe, 0); err != nil {
		return nil, fmt.Errorf("PT_GNU_SFRAME: %w", err)
	}
	if data, err := sec.Data(); err != nil || !bytes.Equal(data, l.sframe[:len(data)]) {
		return nil, fmt.Errorf("PT_GNU_SFRAME and .sframe hold different bytes (%v)", err)
	}
	switch past := l.sframe[sec.Size:]; {
	case len(past) > 0 && slices.ContainsFunc(past, func(b byte) bool { return b != 0 }):
		// GNU ld 2.40 and 2.44 size the segment of an object whose .plt
		// they describe as the input sections' sum, before merging, and
		// leave bytes of the linker-made PLT section past .sframe's end:
		// no section, and no zero padding a decoder may skip. The table
		// is .sframe.
		l.notes = append(l.notes, image.Warning{Tool: "sfconform", Text: fmt.Sprintf(
			"PT_GNU_SFRAME covers %d bytes, .sframe %d, and the %d bytes past its end are not zero (% x): the image carries .sframe alone",
			seg.Filesz, sec.Size, len(past), past)})
		l.sframe = l.sframe[:sec.Size]
	case len(past) > 0:
		l.notes = append(l.notes, image.Warning{Tool: "sfconform", Text: fmt.Sprintf(
			"PT_GNU_SFRAME covers %d bytes, .sframe %d (% x past its end): the image carries the segment, as a loader reads it",
			seg.Filesz, sec.Size, past)})
	}
	l.sframeAddr = seg.Vaddr
	if len(l.sframe) < 4 {
		return nil, fmt.Errorf(".sframe is %d bytes", len(l.sframe))
	}
	l.version = int(l.sframe[2])
	if l.table, err = sframe.Decode(l.sframe, l.sframeAddr); err != nil {
		// The image still carries the section: validation and the
		// consumers report what is wrong with it.
		l.table = nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("symbols: %w", err)
	}
	if bindPLT && f.Type == elf.ET_DYN && f.Section(".plt") != nil {
		if l.plt, err = readPLT(f, tg); err != nil {
			return nil, fmt.Errorf("the shared object's PLT: %w", err)
		}
	}
	for _, s := range syms {
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC:
			l.funcs[s.Name] = s
		case elf.STT_OBJECT:
			l.objects[s.Name] = s
		}
	}
	return l, nil
}

// load cuts one program's image out of the linked batch, checking that
// the toolchain placed and encoded its code exactly as gen laid it out.
func (b *toolBuild) load(l *linked, pt *part, rec *image.Record) (*image.Image, error) {
	p := pt.prog
	code, err := cut(l.text, l.textAddr, p.Base, len(p.Code), ".text")
	if err != nil {
		return nil, err
	}
	viaPLT := l.plt != nil && len(p.PLTStubs()) > 0
	if i := mismatch(code, p.Code); i >= 0 && !viaPLT {
		return nil, fmt.Errorf("the linked code differs from gen's at %#x (%s): gen % x, linked % x",
			p.Base+uint64(i), describeAt(p, p.Base+uint64(i)), p.Code[i:min(i+8, len(p.Code))], code[i:min(i+8, len(code))])
	}
	img := &image.Image{
		Target: p.Target, Producer: b.producer, SFrameVersion: l.version,
		Code: code, CodeAddr: p.Base, Entry: p.Entry, Exit: p.Exit,
		Paths: p.PathRegs(), Signals: p.Signals(), SFrame: l.sframe, SFrameAddr: l.sframeAddr, Record: rec,
	}
	if len(p.FarCode) > 0 {
		far, err := cut(l.far, l.farAddr, p.FarBase, len(p.FarCode), gen.FarSection)
		if err != nil {
			return nil, err
		}
		if i := mismatch(far, p.FarCode); i >= 0 {
			return nil, fmt.Errorf("the linked far code differs from gen's at %#x (%s)", p.FarBase+uint64(i), describeAt(p, p.FarBase+uint64(i)))
		}
		img.Segments = []image.Segment{{Addr: p.FarBase, Code: far}}
	}
	// The symbols are the linked file's; the ownership of a cold part is
	// program's, and so is a function's kind (signal handler, restorer):
	// an ELF symbol says neither.
	for _, g := range p.Symbols() {
		s, ok := l.funcs[pt.prefix+g.Name]
		if !ok {
			return nil, fmt.Errorf("the linked file has no function symbol %s", pt.prefix+g.Name)
		}
		if s.Value != g.Addr || uint32(s.Size) != g.Size {
			return nil, fmt.Errorf("function %s is at [%#x,+%d) in the linked file, gen laid it out at [%#x,+%d)", g.Name, s.Value, s.Size, g.Addr, g.Size)
		}
		img.Symbols = append(img.Symbols, image.Symbol{Name: g.Name, Addr: s.Value, Size: uint32(s.Size), PartOf: g.PartOf, Kind: g.Kind})
	}
	for _, g := range p.Stacks() {
		s, ok := l.objects[pt.prefix+g.Name]
		if !ok || s.Value != g.Addr || uint32(s.Size) != g.Size {
			return nil, fmt.Errorf("stack %s: linked symbol %+v, gen's [%#x,+%d)", g.Name, s, g.Addr, g.Size)
		}
		img.Symbols = append(img.Symbols, image.Symbol{Name: g.Name, Addr: s.Value, Size: uint32(s.Size), Kind: image.KindStack})
	}
	if viaPLT {
		if err := pltImage(img, l, pt, code); err != nil {
			return nil, err
		}
	}
	img.SortSymbols()
	img.RuleRegs = ruleRegs(p, img, l.table)
	return img, nil
}

func cut(sec []byte, secAddr, addr uint64, n int, name string) ([]byte, error) {
	if addr < secAddr || addr-secAddr+uint64(n) > uint64(len(sec)) {
		return nil, fmt.Errorf("%s [%#x,+%d) in the linked file does not hold the program's [%#x,+%d)", name, secAddr, len(sec), addr, n)
	}
	off := addr - secAddr
	return slices.Clone(sec[off : off+uint64(n)]), nil
}

// mismatch is the index of the first byte where a and b differ, or -1.
func mismatch(a, b []byte) int {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	if len(b) > len(a) {
		return len(a)
	}
	return -1
}

func describeAt(p *gen.Program, pc uint64) string {
	for _, f := range p.Funcs {
		if pc >= f.Addr && pc < f.Addr+uint64(f.Size) {
			for _, in := range f.Insns {
				if pc >= f.Addr+uint64(in.Off) && pc < f.Addr+uint64(in.Off)+uint64(len(in.Bytes)) {
					return fmt.Sprintf("%s+%#x %q", f.Name, in.Off, in.Text)
				}
			}
			return f.Name
		}
	}
	return "outside every function"
}

// ruleRegs are the registers the emulator must read at every step for a
// consumer: those gen's rules name, and those the toolchain's rows for
// this program name (a toolchain may base a rule on another register).
func ruleRegs(p *gen.Program, img *image.Image, t *sframe.Table) []int {
	return ruleRegsIn(p, img, t, p.RuleRegs())
}

// ruleRegsIn is regs with the registers t's rows for img's functions
// name.
func ruleRegsIn(p *gen.Program, img *image.Image, t *sframe.Table, regs []int) []int {
	if t == nil {
		return regs
	}
	for _, s := range img.Symbols {
		if s.IsStack() {
			continue
		}
		f, err := t.FindFDE(s.Addr)
		if err != nil {
			continue
		}
		rows, err := f.Rows()
		if err != nil {
			continue
		}
		regs = sframe.RuleRegs(sframe.ABI(p.Target), rows, regs)
	}
	return regs
}

// toolOf describes one tool of a toolchain for the record.
func toolOf(name, path string, tc toolchain.Toolchain) (image.Tool, error) {
	v, err := toolchain.ToolVersion(path)
	if err != nil {
		return image.Tool{}, err
	}
	return image.Tool{Name: name, Path: path, Version: v, Package: tc.Package, Suite: tc.Suite}, nil
}

// errNoSFrameContents is a link whose output has no .sframe bytes: every
// input function lacked an FDE the toolchain could write.
var errNoSFrameContents = errors.New("the linked file has no .sframe contents")
