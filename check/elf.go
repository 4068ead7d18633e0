package check

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// region is a range of executable bytes: a PF_X segment of a linked file,
// an SHF_EXECINSTR section of a relocatable object.
type region struct {
	Name  string // "LOAD[1]" or the section name
	Addr  uint64
	Data  []byte // file bytes; shorter than Size for a zero-filled tail
	Size  uint64
	Align uint64
}

func (r region) end() uint64 { return r.Addr + r.Size }

// symbol is one function start.
type symbol struct {
	Name string
	Addr uint64
	Size uint64
	// PartOf names the function this is a part of: GCC's hot/cold split
	// names the cold part "f.cold" (or "f.cold.N"), which runs in f's
	// frame and is never called.
	PartOf string
	// File is the input file the symbol's STT_FILE symbol names (local
	// symbols of a linked .symtab only; "" when unknown).
	File string
}

// partOf is the owner a cold part's name names, when funcs has it.
func partOf(name string, funcs []symbol) string {
	i := strings.LastIndex(name, ".cold")
	if i <= 0 {
		return ""
	}
	if rest := name[i+len(".cold"):]; rest != "" && strings.Trim(rest, ".0123456789") != "" {
		return ""
	}
	for _, f := range funcs {
		if f.Name == name[:i] {
			return f.Name
		}
	}
	return ""
}

// loaded is an ELF file as the checks see it: executable regions, function
// starts, the SFrame section and the CFI, at the addresses of the file or,
// for a relocatable object, of the fixed layout laidOut gives it.
type loaded struct {
	Path    string
	File    *elf.File
	Target  target.Target
	Kind    string // "EXEC", "DYN", "REL"
	Regions []region

	SFrame     []byte
	SFrameAddr uint64
	SFrameOff  uint64 // file offset of the section, for messages

	CFI        []byte // .eh_frame, else .debug_frame; nil when neither
	CFIName    string
	CFIAddr    uint64
	CFIOff     uint64
	EHFrameHdr bool

	Funcs      []symbol // sorted by address, deduplicated
	FuncSource string   // ".symtab", ".dynsym" or ".eh_frame"
	Relocated  bool     // a relocatable object laid out by laidOut
}

// targetOf maps an ELF header to one of the four targets.
func targetOf(f *elf.File) (target.Target, error) { return target.FromELF(f.FileHeader) }

// load reads what the checks need from an ELF file. Every error is the
// reason the file is unusable.
func load(path string) (*loaded, error) {
	// debug/elf says "EOF" of a file cut short: CheckELFFile names the
	// structure and its offset.
	if err := sframe.CheckELFFile(path); err != nil {
		return nil, fmt.Errorf("not a readable ELF file: %w", err)
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("not a readable ELF file: %w", err)
	}
	l := &loaded{Path: path, File: f}
	if l.Target, err = targetOf(f); err != nil {
		f.Close()
		return nil, err
	}
	switch f.Type {
	case elf.ET_EXEC:
		l.Kind = "EXEC"
	case elf.ET_DYN:
		l.Kind = "DYN"
	case elf.ET_REL:
		l.Kind = "REL"
	default:
		f.Close()
		return nil, fmt.Errorf("ELF type %v: only executables, shared objects and relocatable objects are checked", f.Type)
	}
	if len(f.Sections) <= 1 {
		f.Close()
		return nil, errors.New("no section headers: the .sframe section is found by name (a file stripped of its section headers cannot be checked)")
	}
	if err := l.read(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

func (l *loaded) Close() error { return l.File.Close() }

func (l *loaded) read() error {
	f := l.File
	if f.Type == elf.ET_REL {
		layOut(f)
		l.Relocated = true
	}
	sec := f.Section(sframe.SectionName)
	if sec == nil {
		return sframe.ErrNoSection
	}
	if sec.Type == elf.SHT_NOBITS {
		return fmt.Errorf("%w: the section has no contents in the file (SHT_NOBITS)", sframe.ErrNoSection)
	}
	data, err := sec.Data()
	if err != nil {
		return fmt.Errorf("reading %s at file offset %d (0x%x): %w", sec.Name, sec.Offset, sec.Offset, err)
	}
	if f.Type == elf.ET_REL {
		if data, err = sframe.ApplyRelocations(f, sec, data); err != nil {
			return err
		}
		data = sectionRelative(data)
	}
	l.SFrame, l.SFrameAddr, l.SFrameOff = data, sec.Addr, sec.Offset

	for _, name := range []string{".eh_frame", ".debug_frame"} {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		d, err := s.Data()
		if err != nil {
			return fmt.Errorf("reading %s at file offset %d (0x%x): %w", name, s.Offset, s.Offset, err)
		}
		if f.Type == elf.ET_REL {
			if d, err = sframe.ApplyRelocations(f, s, d); err != nil {
				return err
			}
		}
		l.CFI, l.CFIName, l.CFIAddr, l.CFIOff = d, name, s.Addr, s.Offset
		break
	}
	l.EHFrameHdr = f.Section(".eh_frame_hdr") != nil

	if f.Type == elf.ET_REL {
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_EXECINSTR == 0 || s.Flags&elf.SHF_ALLOC == 0 || s.Size == 0 {
				continue
			}
			r := region{Name: s.Name, Addr: s.Addr, Size: s.Size, Align: s.Addralign}
			if s.Type != elf.SHT_NOBITS {
				if r.Data, err = s.Data(); err != nil {
					return fmt.Errorf("reading %s: %w", s.Name, err)
				}
			}
			l.Regions = append(l.Regions, r)
		}
	} else {
		for i, p := range f.Progs {
			if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || p.Memsz == 0 {
				continue
			}
			r := region{Name: fmt.Sprintf("LOAD[%d]", i), Addr: p.Vaddr, Size: p.Memsz, Align: p.Align}
			r.Data = make([]byte, p.Filesz)
			if _, err := p.ReadAt(r.Data, 0); err != nil {
				return fmt.Errorf("reading program header %d (file offset %d): %w", i, p.Off, err)
			}
			l.Regions = append(l.Regions, r)
		}
	}
	sort.Slice(l.Regions, func(i, j int) bool { return l.Regions[i].Addr < l.Regions[j].Addr })
	l.readFuncs()
	return nil
}

// readFuncs takes function starts from .symtab, else .dynsym. The caller
// falls back to the CFI's FDE starts (never .sframe's) when both are empty.
func (l *loaded) readFuncs() {
	for _, src := range []struct {
		name string
		read func() ([]elf.Symbol, error)
	}{{".symtab", l.File.Symbols}, {".dynsym", l.File.DynamicSymbols}} {
		syms, err := src.read()
		if err != nil {
			continue
		}
		var out []symbol
		file := ""
		for _, s := range syms {
			// ld writes each input's STT_FILE symbol before its local
			// symbols; global symbols belong to no file.
			if elf.ST_TYPE(s.Info) == elf.STT_FILE {
				file = s.Name
			}
			if elf.ST_BIND(s.Info) != elf.STB_LOCAL {
				file = ""
			}
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE {
				continue
			}
			addr := s.Value
			if l.Relocated && int(s.Section) < len(l.File.Sections) {
				addr += l.File.Sections[s.Section].Addr
			}
			if _, ok := l.regionOf(addr); !ok {
				continue
			}
			out = append(out, symbol{Name: s.Name, Addr: addr, Size: s.Size, File: file})
		}
		if len(out) > 0 {
			for i := range out {
				out[i].PartOf = partOf(out[i].Name, out)
			}
			l.Funcs, l.FuncSource = dedupe(append(out, l.pltEntries()...)), src.name
			return
		}
	}
}

// pltEntries names the entries of a linked file's PLT sections
// (".plt+16"), which no symbol table lists: a call through the PLT enters
// one, and the oracle records a frame only at a symbol. The layouts are
// ld's: x86-64 16-byte entries (PLT0 too); AArch64 a 32-byte PLT0, then
// 16-byte entries; s390x 32 bytes each.
func (l *loaded) pltEntries() []symbol {
	if l.File.Type == elf.ET_REL {
		return nil
	}
	var out []symbol
	for _, s := range l.File.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Size == 0 || (s.Name != ".plt" && s.Name != ".plt.sec" && s.Name != ".plt.got") {
			continue
		}
		first, entry := l.Target.PLTSizes()
		if s.Name != ".plt" {
			first = entry // .plt.sec and .plt.got have no PLT0
		}
		if s.Name == ".plt.got" && l.Target == target.X86_64 && !bytes.HasPrefix(l.code(s.Addr, s.Addr+4), endbr64) {
			// ld's x86-64 .plt.got entries are 8 bytes (jmp *GOT;
			// xchg %ax,%ax), 16 only with IBT (endbr64 first).
			first, entry = 8, 8
		}
		for off, size := uint64(0), first; off+size <= s.Size; off, size = off+size, entry {
			out = append(out, symbol{Name: fmt.Sprintf("%s+%d", s.Name, off), Addr: s.Addr + off, Size: size})
		}
	}
	return out
}

// endbr64 starts an x86-64 PLT entry built for IBT.
var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

// dedupe sorts symbols by address and keeps one per address (the sized
// one, then the first name in table order).
func dedupe(s []symbol) []symbol {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Addr < s[j].Addr })
	out := s[:0]
	for _, x := range s {
		if n := len(out); n > 0 && out[n-1].Addr == x.Addr {
			if out[n-1].Size == 0 && x.Size > 0 {
				out[n-1].Size = x.Size
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

func (l *loaded) regionOf(addr uint64) (region, bool) {
	i := sort.Search(len(l.Regions), func(i int) bool { return l.Regions[i].end() > addr })
	if i < len(l.Regions) && l.Regions[i].Addr <= addr {
		return l.Regions[i], true
	}
	return region{}, false
}

// sectionAt names the allocated executable section holding addr ("" when
// none does or the file has no section headers for it).
func (l *loaded) sectionAt(addr uint64) string {
	if s := l.sectionOf(addr); s != nil {
		return s.Name
	}
	return ""
}

func (l *loaded) sectionOf(addr uint64) *elf.Section {
	for _, s := range l.File.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_EXECINSTR != 0 && s.Addr <= addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// allocSectionAt is the allocated section holding addr (nil: none; a
// file without section headers for its segments has none anywhere).
func (l *loaded) allocSectionAt(addr uint64) *elf.Section {
	for _, s := range l.File.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Addr <= addr && addr < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// nextSection is the start of the first allocated section after addr,
// or limit.
func (l *loaded) nextSection(addr, limit uint64) uint64 {
	next := limit
	for _, s := range l.File.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Addr > addr && s.Addr < next {
			next = s.Addr
		}
	}
	return next
}

// code returns the file bytes at [addr, end) within one region (zeros past
// the file contents), or nil when addr is not executable.
func (l *loaded) code(addr, end uint64) []byte {
	r, ok := l.regionOf(addr)
	if !ok {
		return nil
	}
	if end > r.end() {
		end = r.end()
	}
	lo, hi := addr-r.Addr, end-r.Addr
	if hi <= uint64(len(r.Data)) {
		return r.Data[lo:hi]
	}
	out := make([]byte, hi-lo)
	if lo < uint64(len(r.Data)) {
		copy(out, r.Data[lo:])
	}
	return out
}

// relLayoutBase is where a relocatable object's allocated sections are laid
// out, one after the other at their alignment: a fixed layout in which every
// text section has its own addresses, so that functions of different
// sections (-ffunction-sections) neither overlap nor share starts.
const relLayoutBase = 0x400000

// layOut gives every allocated section of a relocatable object an address
// (it rewrites the Addr of f's section headers in memory only).
func layOut(f *elf.File) {
	addr := uint64(relLayoutBase)
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue // .debug_frame's CIE pointers are offsets: its address stays 0
		}
		if a := s.Addralign; a > 1 {
			addr = (addr + a - 1) &^ (a - 1)
		}
		s.Addr = addr
		addr += s.Size
		if s.Size == 0 {
			addr++ // keep empty sections apart too: a symbol names one address
		}
	}
}

// sectionRelative: GNU as fills the function start fields of every .sframe
// it writes (versions 1 to 3) with PC-relative relocations to the function's
// text; versions 1 and 2 without FlagFuncStartPCRel declare the fields
// relative to the section start, which ld rewrites when it links. Once the
// relocations are applied at a fixed layout such fields hold PC-relative
// values, so they are turned into section-relative ones (field address -
// section address added), as a linker would, in every header of the
// buffer that lacks the flag.
func sectionRelative(data []byte) []byte {
	for off := 0; off+sframe.HeaderSize <= len(data); {
		var bo binary.ByteOrder = binary.LittleEndian
		if binary.BigEndian.Uint16(data[off:]) == sframe.Magic {
			bo = binary.BigEndian
		} else if binary.LittleEndian.Uint16(data[off:]) != sframe.Magic {
			return data
		}
		version, flags, aux := data[off+2], sframe.Flags(data[off+3]), int(data[off+7])
		numFDEs := int(bo.Uint32(data[off+8:]))
		freLen := int(bo.Uint32(data[off+16:]))
		fdeOff := int(bo.Uint32(data[off+20:]))
		freOff := int(bo.Uint32(data[off+24:]))
		fdeSize := 0
		switch version {
		case 1:
			fdeSize = 17
		case 2:
			fdeSize = 20
		}
		if fdeSize > 0 && flags&sframe.FlagFuncStartPCRel == 0 {
			for i := 0; i < numFDEs; i++ {
				at := off + sframe.HeaderSize + aux + fdeOff + i*fdeSize
				if at < 0 || at+4 > len(data) {
					break
				}
				v := int32(bo.Uint32(data[at:])) + int32(at)
				bo.PutUint32(data[at:], uint32(v))
			}
		}
		next := off + sframe.HeaderSize + aux + freOff + freLen
		for next < len(data) && next%8 != 0 && data[next] == 0 {
			next++
		}
		if next <= off {
			return data
		}
		off = next
	}
	return data
}
