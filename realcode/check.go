package realcode

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// File is what a Checker is asked to check: an ELF file, and the
// functions of it that are the code base's own (the C library linked into
// an executable has no .sframe on Debian: its functions are not asked
// about). Empty Functions means every function symbol.
type File struct {
	Path      string
	Functions []string
	// Sources are the base names of the code base's C files: a local
	// function is the code base's own when the STT_FILE symbol before it
	// names one of them (glibc has static functions of the same names).
	Sources []string
}

// Checker checks the SFrame section of one ELF file. An error means the
// file could not be checked at all (not an ELF file of a known target);
// everything wrong with its SFrame is a Finding in the report.
type Checker interface {
	Name() string
	Check(f File) (*Report, error)
}

// Report is what a Checker says of one file.
type Report struct {
	Path     string
	Target   target.Target
	Type     string // ET_REL, ET_EXEC, ET_DYN
	Version  int    // SFrame version of the first section; 0 without one
	Sections int    // SFrame sections in .sframe (more than one: concatenated)
	FDEs     int
	Rows     int
	// Functions and Instructions were looked up one by one (linked files
	// only: an object's starts wait for relocation): every instruction
	// boundary of every function asked about.
	Functions    int
	Instructions int
	Dumpers      []string // dumpers whose rows were compared
	// Skipped are checks that could not run, with the reason (a dumper
	// that does not read this version, say).
	Skipped  []string
	Findings []Finding
	// Check is sfconform check's summary of the file, and CheckTime what
	// it took, when the Checker ran it (WithCheck).
	Check     *check.Summary `json:",omitempty"`
	CheckTime time.Duration  `json:",omitempty"`
}

// Finding is one thing wrong with a file's SFrame.
type Finding struct {
	Kind     string // no-sframe, decode, invalid, no-fde, no-row, row-mid-insn, dumper-error, dumper-rows
	Tool     string // the dumper, for dumper-*
	Function string
	Addr     uint64
	Detail   string
}

func (f Finding) String() string {
	s := f.Kind
	if f.Tool != "" {
		s += " [" + f.Tool + "]"
	}
	if f.Function != "" {
		s += fmt.Sprintf(" %s@%#x", f.Function, f.Addr)
	}
	return s + ": " + f.Detail
}

// Signature is what identifies a finding across builds: its kind and tool,
// without addresses (a reduced program keeps the signature, not the
// address).
func (f Finding) Signature() string { return f.Kind + "/" + f.Tool }

// StaticChecker checks a file without running it: the section decodes and
// passes the checks strict consumers make (sframe.Table.Check, the Linux
// unwinder's rules for version 3), every instruction of every function
// asked about has an FDE and a row and every row starts on an instruction
// boundary, and each dumper consumer prints the rows the decoder reads.
type StaticChecker struct {
	// Dumpers are dumper consumer names (objdump-2.47, ...); nil means
	// every one provisioned (DumperNames).
	Dumpers []string
	// MaxFindings bounds the findings of one kind in one report; 0 is 20.
	MaxFindings int
}

func (c *StaticChecker) Name() string { return "static" }

// DumperNames lists the provisioned dumper consumers: the members of the
// consumer families (consumer.RegisterFamily), the provisioned tools,
// that wrap no library (the source build's family also holds a libsframe
// consumer, which is not a dumper).
func DumperNames() []string {
	var out []string
	for _, n := range consumer.Names() {
		if a, _ := consumer.Lookup(n); consumer.InFamily(n) && a.Library == "" {
			out = append(out, n)
		}
	}
	return out
}

// TargetOf is the sfconform target of an ELF file.
func TargetOf(f *elf.File) (target.Target, error) { return target.FromELF(f.FileHeader) }

func (c *StaticChecker) Check(file File) (*Report, error) {
	f, err := elf.Open(file.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable ELF file: %w", file.Path, err)
	}
	defer f.Close()
	tg, err := TargetOf(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file.Path, err)
	}
	r := &Report{Path: file.Path, Target: tg, Type: f.Type.String()}
	max := c.MaxFindings
	if max == 0 {
		max = 20
	}
	counts := map[string]int{}
	add := func(fd Finding) {
		if counts[fd.Kind+fd.Tool]++; counts[fd.Kind+fd.Tool] <= max {
			r.Findings = append(r.Findings, fd)
		}
	}
	sec := f.Section(sframe.SectionName)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		if !hasCode(f) {
			// Tables only (bzip2's crctable.c): nothing to describe.
			r.Skipped = append(r.Skipped, "no .sframe section, and no function in an executable section")
			return r, nil
		}
		add(Finding{Kind: "no-sframe", Detail: "the file has no .sframe section"})
		return r, nil
	}
	raw, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: reading .sframe at file offset %d: %w", file.Path, sec.Offset, err)
	}
	// The rows as stored: what a dumper reads of the bare section.
	rawTab, err := sframe.Decode(raw, sec.Addr)
	if err != nil {
		add(Finding{Kind: "decode", Detail: fmt.Sprintf("file offset %#x: %v", sec.Offset, err)})
		return r, nil
	}
	r.Sections = len(rawTab.Sections)
	r.Version = int(rawTab.Sections[0].Header.Version)
	var fdes []sframe.FDE
	for _, s := range rawTab.Sections {
		fs, err := s.FDEs()
		if err != nil {
			add(Finding{Kind: "decode", Detail: err.Error()})
			return r, nil
		}
		fdes = append(fdes, fs...)
	}
	// Bytes of the section after its last SFrame section: libsframe
	// sizes the buffer from the header and refuses one that is longer
	// (objdump and readelf: "Buffer does not contain SFrame data").
	last := rawTab.Sections[len(rawTab.Sections)-1]
	if used := last.Offset + last.Size; used < len(raw) {
		add(Finding{Kind: "trailing", Detail: fmt.Sprintf("the .sframe section is %d bytes, its SFrame data ends at byte %d: %d bytes after it (file offset %#x)",
			len(raw), used, len(raw)-used, sec.Offset+uint64(used))})
	}
	r.FDEs = len(fdes)
	for _, fd := range fdes {
		r.Rows += len(fd.Rows)
	}
	// The structure, with starts as a loader sees them: ReadELF applies
	// an object's PC-relative start relocations. An object whose starts
	// are left to section-relative relocations has no meaningful starts
	// to check for order and overlap. The Linux unwinder's rules (strict)
	// are for what it loads: an object's FDEs are unsorted until ld
	// sorts them.
	linked := f.Type == elf.ET_EXEC || f.Type == elf.ET_DYN
	pcrel := rawTab.Sections[0].Header.Flags&sframe.FlagFuncStartPCRel != 0
	if linked || pcrel {
		tab := rawTab
		if !linked {
			if tab, err = sframe.ReadELF(file.Path); err != nil {
				add(Finding{Kind: "decode", Detail: err.Error()})
				tab = nil
			}
		}
		if tab != nil {
			for _, e := range tab.Check(linked && r.Version == 3) {
				// An object's starts are offsets in their own text
				// section (.text, .text.unlikely, .text.startup):
				// two at one offset of different sections are no
				// overlap.
				if !linked && (errors.Is(e, sframe.ErrOverlappingFDEs) || errors.Is(e, sframe.ErrDuplicateFDE) || errors.Is(e, sframe.ErrNotSorted)) {
					continue
				}
				add(Finding{Kind: "invalid", Detail: e.Error()})
			}
		}
	}
	if linked {
		segment(f, sec, add)
		c.lookups(f, file, rawTab, tg, r, add)
	}
	c.dumpers(tg, raw, sec.Addr, rawTab, fdes, r, add)
	return r, nil
}

// hasCode says whether f has a function symbol in an executable section.
func hasCode(f *elf.File) bool {
	syms, _ := f.Symbols()
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && int(s.Section) < len(f.Sections) && s.Section != elf.SHN_UNDEF &&
			f.Sections[s.Section].Flags&elf.SHF_EXECINSTR != 0 {
			return true
		}
	}
	return false
}

// ptGNUSFrame is the program header type of the SFrame segment
// (PT_GNU_SFRAME, binutils include/elf/common.h).
const ptGNUSFrame = elf.ProgType(0x6474e554)

// segment checks that PT_GNU_SFRAME, through which a loader finds the
// table, is exactly the .sframe section: a longer segment hands a reader
// bytes that are not SFrame data (what follows the section).
func segment(f *elf.File, sec *elf.Section, add func(Finding)) {
	var seg *elf.Prog
	for _, p := range f.Progs {
		if p.Type == ptGNUSFrame {
			seg = p
		}
	}
	switch {
	case seg == nil:
		add(Finding{Kind: "segment", Detail: "the file has .sframe but no PT_GNU_SFRAME segment"})
	case seg.Vaddr != sec.Addr || seg.Filesz != sec.Size || seg.Memsz != sec.Size:
		add(Finding{Kind: "segment", Detail: fmt.Sprintf("PT_GNU_SFRAME is [%#x, +%#x) (file size %#x), .sframe is [%#x, +%#x): %d bytes more",
			seg.Vaddr, seg.Memsz, seg.Filesz, sec.Addr, sec.Size, int64(seg.Memsz)-int64(sec.Size))})
	}
}

// ownSymbols are the function symbols of syms that are the code base's
// own (all of them when file names none): a global by its name, a local by
// its name and the STT_FILE symbol before it, which names its source.
func ownSymbols(syms []elf.Symbol, file File) []elf.Symbol {
	own := map[string]bool{}
	for _, n := range file.Functions {
		own[n] = true
	}
	sources := map[string]bool{}
	for _, n := range file.Sources {
		sources[n] = true
	}
	var mine []elf.Symbol
	cur := ""
	for _, s := range syms {
		switch {
		case elf.ST_TYPE(s.Info) == elf.STT_FILE:
			cur = s.Name
		case elf.ST_TYPE(s.Info) != elf.STT_FUNC:
		case len(own) == 0:
			mine = append(mine, s)
		case elf.ST_BIND(s.Info) == elf.STB_LOCAL && len(sources) > 0:
			if sources[cur] && own[s.Name] {
				mine = append(mine, s)
			}
		case own[s.Name]:
			mine = append(mine, s)
		}
	}
	return mine
}

// lookups checks every instruction boundary of the functions asked about.
func (c *StaticChecker) lookups(f *elf.File, file File, tab *sframe.Table, tg target.Target, r *Report, add func(Finding)) {
	syms, err := f.Symbols()
	if err != nil {
		r.Skipped = append(r.Skipped, fmt.Sprintf("lookups: no symbol table (%v)", err))
		return
	}
	own := map[string]bool{}
	for _, n := range file.Functions {
		own[n] = true
	}
	mine := ownSymbols(syms, file)
	seen := map[uint64]bool{}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Value < mine[j].Value })
	for _, s := range mine {
		if s.Size == 0 || seen[s.Value] {
			continue
		}
		if int(s.Section) >= len(f.Sections) {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Flags&elf.SHF_EXECINSTR == 0 || s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
			continue
		}
		seen[s.Value] = true
		code, err := sec.Data()
		if err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("lookups in %s: %v", sec.Name, err))
			continue
		}
		code = code[s.Value-sec.Addr : s.Value-sec.Addr+s.Size]
		r.Functions++
		fn, err := tab.FindFDE(s.Value)
		if err != nil {
			add(Finding{Kind: "no-fde", Function: s.Name, Addr: s.Value, Detail: fmt.Sprintf("no FDE covers the function's first instruction (%v)", err)})
			continue
		}
		var rowStarts []uint64
		if rows, err := fn.Rows(); err == nil {
			for _, row := range rows {
				rowStarts = append(rowStarts, fn.Start+uint64(row.Start))
			}
		}
		var boundaries []uint64
		for off := 0; off < len(code); {
			pc := s.Value + uint64(off)
			_, n, err := disasm.Instruction(tg, code[off:], pc)
			if err != nil || n == 0 {
				r.Skipped = append(r.Skipped, fmt.Sprintf("lookups in %s at %#x: cannot decode the instruction (%v); the rest of the function is not looked up", s.Name, pc, err))
				break
			}
			boundaries = append(boundaries, pc)
			r.Instructions++
			if pc >= fn.End() {
				add(Finding{Kind: "no-fde", Function: s.Name, Addr: pc, Detail: fmt.Sprintf("the function's FDE (%#x, size %d) ends before this instruction; the symbol's size is %d", fn.Start, fn.Size, s.Size)})
				break
			}
			if _, err := fn.FindRow(pc); err != nil {
				add(Finding{Kind: "no-row", Function: s.Name, Addr: pc, Detail: err.Error()})
			}
			off += n
		}
		if fn.PCType != sframe.PCMask {
			for _, rs := range rowStarts {
				if rs >= s.Value && rs < s.Value+s.Size {
					if _, ok := slices.BinarySearch(boundaries, rs); !ok && len(boundaries) > 0 && rs <= boundaries[len(boundaries)-1] {
						add(Finding{Kind: "row-mid-insn", Function: s.Name, Addr: rs, Detail: fmt.Sprintf("a row starts at %#x, inside an instruction", rs)})
					}
				}
			}
		}
	}
	if len(own) > 0 {
		var missing []string
		have := map[string]bool{}
		for _, s := range syms {
			have[s.Name] = true
		}
		for n := range own {
			if !have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			r.Skipped = append(r.Skipped, fmt.Sprintf("lookups: %d functions asked about are not in the symbol table (e.g. %s)", len(missing), missing[0]))
		}
	}
}

// dumpers compares each dumper consumer's reading of the section with the
// decoder's.
func (c *StaticChecker) dumpers(tg target.Target, raw []byte, addr uint64, tab *sframe.Table, fdes []sframe.FDE, r *Report, add func(Finding)) {
	names := c.Dumpers
	if names == nil {
		names = DumperNames()
	}
	img := &image.Image{Target: tg, SFrame: raw, SFrameAddr: addr, SFrameVersion: r.Version}
	for _, name := range names {
		cons, err := consumer.New(name)
		if err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		d, ok := cons.(*consumer.Dumper)
		if !ok {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: not a dumper", name))
			continue
		}
		if err := d.Supports(tg, r.Version); err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if err := d.RefusesPCRelV2(); err != nil && pcrelV2(tab) {
			r.Skipped = append(r.Skipped, err.Error())
			continue
		}
		if len(tab.Sections) > 1 {
			// The bare-section wrapper holds the concatenation as it is;
			// what a dumper makes of it is compared like any other.
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: %d concatenated sections", name, len(tab.Sections)))
		}
		r.Dumpers = append(r.Dumpers, name)
		if err := d.Load(img); err != nil {
			add(Finding{Kind: "dumper-error", Tool: name, Detail: err.Error()})
			continue
		}
		got := d.Listing().FDEs()
		if diff := compareFDEs(fdes, got); diff != "" {
			add(Finding{Kind: "dumper-rows", Tool: name, Detail: diff})
		}
		d.Close()
	}
}

// pcrelV2 says whether tab is a version 2 section with PC-relative
// function starts (erratum 1), which binutils before 2.45 does not read.
func pcrelV2(tab *sframe.Table) bool {
	h := tab.Sections[0].Header
	return h.Version == 2 && h.Flags&sframe.FlagFuncStartPCRel != 0
}

// compareFDEs says where a dumper's functions and rows first differ from
// the decoder's, or "" when they agree. The repetition size of PCMASK
// functions is not compared: GNU dumpers do not print it.
func compareFDEs(want, got []sframe.FDE) string {
	if len(want) != len(got) {
		return fmt.Sprintf("the decoder reads %d FDEs, the dumper prints %d", len(want), len(got))
	}
	for i := range want {
		w, g := &want[i], &got[i]
		if w.Start != g.Start || w.Size != g.Size || w.PCType != g.PCType {
			return fmt.Sprintf("FDE %d: decoder start %#x size %d type %v, dumper start %#x size %d type %v",
				i, w.Start, w.Size, w.PCType, g.Start, g.Size, g.PCType)
		}
		if len(w.Rows) != len(g.Rows) {
			return fmt.Sprintf("FDE %d (%#x): the decoder reads %d rows, the dumper prints %d", i, w.Start, len(w.Rows), len(g.Rows))
		}
		for j := range w.Rows {
			if w.Rows[j] != g.Rows[j] {
				return fmt.Sprintf("FDE %d (%#x) row %d: decoder %+v, dumper %+v", i, w.Start, j, w.Rows[j], g.Rows[j])
			}
		}
	}
	return ""
}

// errNoChecks is returned by a campaign asked for nothing.
var errNoChecks = errors.New("realcode: nothing to check")
