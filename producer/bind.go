package producer

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
)

// Calls between modules through the PLT ld makes, and the loader that
// binds them.
//
// A modules program (toolmodules.go) is first assembled module by module
// as before. Each direct branch from one near module to the start of a
// function another near module defines is then routed through the PLT
// when every reference of the calling module to that function is such a
// branch (x86-64 R_X86_64_PLT32; AArch64 R_AARCH64_CALL26 or JUMP26;
// s390x a brasl or brcl, R_390_PC32DBL or PLT32DBL): the defining
// module's source gets a global alias, F.mod, of the local F, on the line
// that ends F, and the calling module's branches name F.mod (with @PLT
// where the assembler needs it), so that the lines stay the program's.
// Any other reference (an address taken, a jump to a local label, a
// branch the assembler resolved) stays a --defsym at gen's address.
//
// The shared objects are linked first, each leaving F.mod undefined; the
// executable last, dynamically against them (-z now), so ld makes a PLT
// in each object that calls another's function, with an R_*_JUMP_SLOT
// relocation per entry. Every near module's first segment, its .plt
// (ld's place for it: the page after the dynamic symbols), its .sframe
// and after that its GOT lie in a slot of the low code region of their
// own (moduleLowBase, moduleLowSlot), within reach of a call from the
// code and mapped by the emulator.
//
// bindModules then does what ld.so does for such a process loaded at the
// addresses it was linked at, eagerly (BIND_NOW): for each object in load
// order (the executable, then its DT_NEEDED objects as they were given to
// ld), each dynamic relocation is an R_*_JUMP_SLOT or R_*_GLOB_DAT
// without addend, and its slot gets the value of the first definition of
// its symbol in that order. Any other relocation is an error naming the
// file, the relocation section and its file offset; so is a symbol no
// object defines. ld's .plt entries are read with the target's PLT layout
// (pltABIs) and each one's slot matched to its relocation.
//
// A PC in a .plt is described by its object's .sframe, as the kernel
// registers a section per text mapping: each .plt becomes an image.Module
// of its own, NAME:plt, with its object's section. Each entry gets a
// symbol, NAME:F@plt, and PLT0 one, NAME:.plt, so that the oracle sees a
// call enter the entry (a frame) and the entry jump on to F (a tail
// call), and judges every step in between like any other.

// moduleLowBase is the low code region of the emulator (emu.LowCodeBase:
// the code region's base minus sharedBelow); each near module of a
// program whose calls go through a PLT gets moduleLowSlot bytes of it.
const (
	moduleLowBase     = 0x10000000 - sharedBelow
	moduleLowSlot     = 0x40000
	moduleLowSFrame   = 0x10000 // where in its slot a module's .sframe goes
	maxPLTModules     = 4       // slots of the 1 MiB region
	moduleAliasSuffix = ".mod"
)

// objReloc is one relocation of an object's .text.
type objReloc struct {
	off    uint64 // in .text
	typ    uint32
	sym    string
	undef  bool
	addend int64
}

// textRelocs reads the relocations of the object's .text and the
// section's bytes.
func textRelocs(path string) ([]objReloc, []byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	name := filepath.Base(path)
	ti := slices.IndexFunc(f.Sections, func(s *elf.Section) bool { return s.Name == ".text" })
	if ti < 0 {
		return nil, nil, nil
	}
	text, err := f.Sections[ti].Data()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: .text: %w", name, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: symbols: %w", name, err)
	}
	var out []objReloc
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || int(s.Info) != ti {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", name, s.Name, err)
		}
		if len(data)%24 != 0 {
			return nil, nil, fmt.Errorf("%s: %s at file offset %#x: %d bytes, not a whole number of 24-byte entries", name, s.Name, s.Offset, len(data))
		}
		for i := 0; i < len(data); i += 24 {
			off, info, add := f.ByteOrder.Uint64(data[i:]), f.ByteOrder.Uint64(data[i+8:]), int64(f.ByteOrder.Uint64(data[i+16:]))
			idx := info >> 32
			r := objReloc{off: off, typ: uint32(info), addend: add}
			if idx > 0 && idx <= uint64(len(syms)) {
				sym := syms[idx-1]
				r.sym, r.undef = sym.Name, sym.Section == elf.SHN_UNDEF
			}
			out = append(out, r)
		}
	}
	return out, text, nil
}

// branchReloc reports whether r is a direct branch a linker may route
// through a PLT.
func branchReloc(t target.Target, r objReloc, text []byte) bool {
	switch t {
	case target.X86_64:
		return r.typ == uint32(elf.R_X86_64_PLT32)
	case target.AArch64, target.AArch64BE:
		return r.typ == uint32(elf.R_AARCH64_CALL26) || r.typ == uint32(elf.R_AARCH64_JUMP26)
	case target.S390X:
		// brasl (c0 r5) and brcl (c0 m4): the relocated field is the
		// instruction's third to sixth bytes; larl (c0 r0) takes an
		// address.
		if r.typ != uint32(elf.R_390_PC32DBL) && r.typ != uint32(elf.R_390_PLT32DBL) || r.off < 2 || r.off > uint64(len(text)) {
			return false
		}
		op := text[r.off-1] & 0x0f
		return text[r.off-2] == 0xc0 && (op == 4 || op == 5)
	}
	return false
}

// planRoutes decides which calls between near modules go through a PLT:
// for each module, the functions of other near modules it reaches by
// branches alone. The result is by module index; definer names the
// module defining each routed function.
func planRoutes(p *gen.Program, mods []*moduleLinked, near int) (routes []map[string]bool, definer map[string]int, err error) {
	where := map[string]int{} // a function start's module
	for _, f := range p.Funcs {
		if f.PartOf != "" || f.Far {
			continue
		}
		for k, m := range mods[:near] {
			if a, ok := m.defined[f.Name]; ok && a == f.Addr {
				where[f.Name] = k
			}
		}
	}
	routes, definer = make([]map[string]bool, len(mods)), map[string]int{}
	for k, m := range mods[:near] {
		rels, text, err := textRelocs(m.obj)
		if err != nil {
			return nil, nil, err
		}
		ok := map[string]bool{}
		for _, r := range rels {
			d, isFunc := where[r.sym]
			if !r.undef || !isFunc || d == k {
				continue
			}
			if _, seen := ok[r.sym]; !seen {
				ok[r.sym] = true
			}
			ok[r.sym] = ok[r.sym] && branchReloc(p.Target, r, text)
		}
		for n, all := range ok {
			if all {
				if routes[k] == nil {
					routes[k] = map[string]bool{}
				}
				routes[k][n], definer[n] = true, where[n]
			}
		}
	}
	return routes, definer, nil
}

// routeSources rewrites the modules' sources for routes: the calling
// module's branches name F.mod, the defining module defines it. Lines
// stay lines.
func routeSources(t target.Target, mods []*moduleLinked, routes []map[string]bool, definer map[string]int) {
	suffix := "@PLT"
	if t == target.AArch64 || t == target.AArch64BE {
		suffix = "" // bl takes the symbol alone (R_AARCH64_CALL26)
	}
	for k, rs := range routes {
		if len(rs) == 0 {
			continue
		}
		m := mods[k]
		for i, l := range m.body {
			if !strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "\t.") {
				continue
			}
			m.body[i] = renameSymbols(l, func(s string) string {
				if rs[s] {
					return s + moduleAliasSuffix + suffix
				}
				return s
			})
		}
		m.changed = true
	}
	for n, d := range definer {
		m := mods[d]
		typ := ""
		for i, l := range m.body {
			if rest, ok := strings.CutPrefix(l, "\t.type "+n+", "); ok {
				typ = rest
			}
			if strings.HasPrefix(l, "\t.size "+n+",") {
				a := n + moduleAliasSuffix
				m.body[i] = fmt.Sprintf("%s; .globl %s; .type %s, %s; .set %s, %s", l, a, a, typ, a, n)
				m.changed = true
				break
			}
		}
	}
}

// renameSymbols replaces each symbol token of line by to's answer.
func renameSymbols(line string, to func(string) string) string {
	isSym := func(c byte) bool {
		return c == '_' || c == '.' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	var sb strings.Builder
	for i := 0; i < len(line); {
		if !isSym(line[i]) {
			sb.WriteByte(line[i])
			i++
			continue
		}
		j := i
		for j < len(line) && isSym(line[j]) {
			j++
		}
		sb.WriteString(to(line[i:j]))
		i = j
	}
	return sb.String()
}

// boundPLT is one object's .plt, its entries bound.
type boundPLT struct {
	addr    uint64
	code    []byte
	abi     pltABI
	entries []pltEntry // in address order
}

// boundModule is what the loader made of one object.
type boundModule struct {
	plt *boundPLT
	got []image.Segment // the sections holding slots, the slots written
}

// dynSym is a dynamic symbol definition in load order.
type dynSym struct {
	value  uint64
	module int
}

// bindModules binds the dynamic relocations of the objects at paths, in
// load order (the executable first), eagerly, as ld.so does with
// BIND_NOW for objects loaded at their link addresses.
func bindModules(paths []string, tg target.Target) ([]boundModule, error) {
	abi, ok := pltABIs[tg]
	if !ok {
		return nil, fmt.Errorf("no PLT layout known for %s", tg.Name())
	}
	files := make([]*elf.File, len(paths))
	for i, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files[i] = f
	}
	scope := map[string]dynSym{}
	for i, f := range files {
		syms, err := f.DynamicSymbols()
		if err != nil && f.Section(".dynsym") != nil {
			return nil, fmt.Errorf("%s: dynamic symbols: %w", filepath.Base(paths[i]), err)
		}
		for _, s := range syms {
			b := elf.ST_BIND(s.Info)
			if s.Section == elf.SHN_UNDEF || b != elf.STB_GLOBAL && b != elf.STB_WEAK {
				continue
			}
			if _, seen := scope[s.Name]; !seen {
				scope[s.Name] = dynSym{s.Value, i}
			}
		}
	}
	out := make([]boundModule, len(files))
	for i, f := range files {
		name := filepath.Base(paths[i])
		for _, sec := range []string{".plt.got", ".plt.sec"} {
			if s := f.Section(sec); s != nil && s.Size > 0 {
				return nil, fmt.Errorf("%s: ld made a %s (%d bytes at %#x), which the modules' calls never ask for and the loader does not read", name, sec, s.Size, s.Addr)
			}
		}
		slots, err := bindRelocs(f, name, abi.jumpSlot, scope)
		if err != nil {
			return nil, err
		}
		if len(slots) == 0 {
			continue
		}
		sec := f.Section(".plt")
		var entries map[string]pltEntry
		if sec != nil {
			code, err := sec.Data()
			if err != nil {
				return nil, fmt.Errorf("%s: .plt: %w", name, err)
			}
			n := (len(code) - abi.first) / abi.entry
			if len(code) < abi.first+abi.entry || abi.first+n*abi.entry != len(code) {
				return nil, fmt.Errorf("%s: .plt at %#x is %d bytes, not a %d-byte PLT0 and %d-byte entries", name, sec.Addr, len(code), abi.first, abi.entry)
			}
			bp := &boundPLT{addr: sec.Addr, code: code, abi: abi}
			for k := 0; k < n; k++ {
				off := abi.first + k*abi.entry
				addr := sec.Addr + uint64(off)
				slot, ok := abi.slot(code[off:off+abi.entry], addr)
				if !ok {
					return nil, fmt.Errorf("%s: PLT entry %d at %#x (% x) does not load a GOT slot as ld's %s entries do", name, k+1, addr, code[off:off+abi.entry], tg.Name())
				}
				e, ok := slots[slot]
				if !ok || !e.jump {
					return nil, fmt.Errorf("%s: PLT entry %d at %#x jumps through %#x, which no JUMP_SLOT relocation binds", name, k+1, addr, slot)
				}
				e.addr = addr
				bp.entries = append(bp.entries, e.pltEntry)
			}
			out[i].plt = bp
		}
		entries = map[string]pltEntry{}
		for _, e := range slots {
			entries[fmt.Sprintf("%#x", e.slot)] = e.pltEntry
		}
		if out[i].got, err = boundGOT(f, entries); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if out[i].plt != nil && len(out[i].plt.entries) != countJumps(slots) {
			return nil, fmt.Errorf("%s: %d JUMP_SLOT relocations, %d PLT entries", name, countJumps(slots), len(out[i].plt.entries))
		}
	}
	return out, nil
}

type boundSlot struct {
	pltEntry
	jump bool // a JUMP_SLOT (else a GLOB_DAT)
}

func countJumps(slots map[uint64]boundSlot) int {
	n := 0
	for _, s := range slots {
		if s.jump {
			n++
		}
	}
	return n
}

// bindRelocs reads every dynamic relocation of f and binds it in scope.
func bindRelocs(f *elf.File, name string, jumpSlot uint32, scope map[string]dynSym) (map[uint64]boundSlot, error) {
	globDat := map[elf.Machine]uint32{elf.EM_X86_64: uint32(elf.R_X86_64_GLOB_DAT), elf.EM_AARCH64: uint32(elf.R_AARCH64_GLOB_DAT), elf.EM_S390: uint32(elf.R_390_GLOB_DAT)}[f.Machine]
	var syms []elf.Symbol
	if f.Section(".dynsym") != nil {
		var err error
		if syms, err = f.DynamicSymbols(); err != nil {
			return nil, fmt.Errorf("%s: dynamic symbols: %w", name, err)
		}
	}
	out := map[uint64]boundSlot{}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_REL && s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
			return nil, fmt.Errorf("%s: %s at file offset %#x: the loader applies RELA relocations only", name, s.Name, s.Offset)
		}
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, s.Name, err)
		}
		if len(data)%24 != 0 {
			return nil, fmt.Errorf("%s: %s at file offset %#x: %d bytes, not a whole number of 24-byte entries", name, s.Name, s.Offset, len(data))
		}
		for i := 0; i < len(data); i += 24 {
			off, info, add := f.ByteOrder.Uint64(data[i:]), f.ByteOrder.Uint64(data[i+8:]), int64(f.ByteOrder.Uint64(data[i+16:]))
			typ, idx := uint32(info), info>>32
			where := fmt.Sprintf("%s: %s entry %d (file offset %#x)", name, s.Name, i/24, s.Offset+uint64(i))
			if typ != jumpSlot && typ != globDat {
				return nil, fmt.Errorf("%s: relocation %s at %#x: the loader applies only %s and %s", where, relocName(f.Machine, typ), off, relocName(f.Machine, jumpSlot), relocName(f.Machine, globDat))
			}
			if idx == 0 || idx > uint64(len(syms)) {
				return nil, fmt.Errorf("%s: %s at %#x names symbol %d of %d", where, relocName(f.Machine, typ), off, idx, len(syms))
			}
			sym := syms[idx-1].Name
			if add != 0 {
				return nil, fmt.Errorf("%s: %s of %s at %#x has addend %d: the loader binds a slot to the symbol alone", where, relocName(f.Machine, typ), sym, off, add)
			}
			def, ok := scope[sym]
			if !ok {
				return nil, fmt.Errorf("%s: %s at %#x binds %s, which no loaded object defines", where, relocName(f.Machine, typ), off, sym)
			}
			if _, dup := out[off]; dup {
				return nil, fmt.Errorf("%s: a second relocation of the slot at %#x", where, off)
			}
			out[off] = boundSlot{pltEntry{slot: off, symbol: sym, value: def.value + bindSkew}, typ == jumpSlot}
		}
	}
	return out, nil
}

// bindSkew is added to every bound value; 0 but in a test that makes the
// loader bind wrong on purpose.
var bindSkew uint64

// branchTo re-encodes the branch that r relocates in code (the module's
// bytes at addr, its .text offset r.off) to reach to, as the linker
// resolves it.
func branchTo(t target.Target, code []byte, at uint64, r objReloc, to uint64) error {
	d := int64(to) + r.addend - int64(at)
	switch t {
	case target.X86_64:
		if d != int64(int32(d)) {
			return fmt.Errorf("a branch at %#x cannot reach %#x", at, to)
		}
		binary.LittleEndian.PutUint32(code, uint32(int32(d)))
	case target.AArch64, target.AArch64BE:
		if d&3 != 0 || d < -1<<27 || d >= 1<<27 {
			return fmt.Errorf("a branch at %#x cannot reach %#x", at, to)
		}
		w := binary.LittleEndian.Uint32(code)
		binary.LittleEndian.PutUint32(code, w&^0x3ffffff|uint32(d>>2)&0x3ffffff)
	case target.S390X:
		if d&1 != 0 || d>>1 != int64(int32(d>>1)) {
			return fmt.Errorf("a branch at %#x cannot reach %#x", at, to)
		}
		binary.BigEndian.PutUint32(code, uint32(int32(d>>1)))
	default:
		return fmt.Errorf("no branch encoding for %s", t.Name())
	}
	return nil
}

// bindRouted binds the near modules of a program whose calls go through a
// PLT (the far module must need no binding), checks that every entry is
// bound to the function gen laid out, and notes each module's routed
// branches.
func bindRouted(p *gen.Program, mods []*moduleLinked, routes []map[string]bool) error {
	var paths []string
	var near []*moduleLinked
	for _, m := range mods {
		if m.lowSlot == 0 {
			if err := noDynamicRelocs(m.so); err != nil {
				return fmt.Errorf("module %s: %w", m.name, err)
			}
			continue
		}
		paths, near = append(paths, m.so), append(near, m)
	}
	bound, err := bindModules(paths, p.Target)
	if err != nil {
		return err
	}
	addr := map[string]uint64{}
	for _, f := range p.Funcs {
		addr[f.Name] = f.Addr
	}
	for k, m := range near {
		m.bound = bound[k]
		at := map[string]uint64{} // PLT entry by alias
		if bp := m.bound.plt; bp != nil {
			for _, e := range bp.entries {
				f, ok := strings.CutSuffix(e.symbol, moduleAliasSuffix)
				if !ok || !routes[k][f] {
					return fmt.Errorf("module %s: ld made a PLT entry at %#x for %s, which the module does not call through the PLT", m.name, e.addr, e.symbol)
				}
				if e.value != addr[f] {
					return fmt.Errorf("module %s: the PLT entry of %s at %#x is bound to %#x, not to %s (%#x)", m.name, f, e.addr, e.value, f, addr[f])
				}
				at[e.symbol] = e.addr
			}
		}
		rels, _, err := textRelocs(m.obj)
		if err != nil {
			return err
		}
		m.routed = nil
		for _, r := range rels {
			if f, ok := strings.CutSuffix(r.sym, moduleAliasSuffix); ok && r.undef && routes[k][f] {
				if _, ok := at[r.sym]; !ok {
					return fmt.Errorf("module %s: the branch at .text+%#x to %s has no PLT entry", m.name, r.off, r.sym)
				}
				m.routed = append(m.routed, r)
			}
		}
		if len(at) > 0 && len(m.routed) == 0 {
			return fmt.Errorf("module %s has a PLT and no branch to it", m.name)
		}
	}
	return nil
}

// pltEntryAt is the address of the module's PLT entry for symbol.
func (m *moduleLinked) pltEntryAt(symbol string) uint64 {
	for _, e := range m.bound.plt.entries {
		if e.symbol == symbol {
			return e.addr
		}
	}
	return 0
}

// routedCode is gen's code with every routed branch sent to its PLT
// entry: what the linked modules must hold.
func routedCode(p *gen.Program, mods []*moduleLinked) ([]byte, error) {
	want := slices.Clone(p.Code)
	for _, m := range mods {
		for _, r := range m.routed {
			at := m.base + r.off
			if at < p.Base || at+4 > p.Base+uint64(len(want)) {
				return nil, fmt.Errorf("module %s: a branch at %#x lies outside the program's code", m.name, at)
			}
			if err := branchTo(p.Target, want[at-p.Base:], at, r, m.pltEntryAt(r.sym)); err != nil {
				return nil, fmt.Errorf("module %s: %w", m.name, err)
			}
		}
	}
	return want, nil
}

// pltParts adds a routed module's .plt and GOT to img: segments, symbols
// (NAME:F@plt per entry, NAME:.plt for PLT0) and the .plt as a module
// mapping of its own, described by the module's section.
func pltParts(img *image.Image, m *moduleLinked) {
	bp := m.bound.plt
	if bp == nil {
		return
	}
	img.Segments = append(img.Segments, image.Segment{Addr: bp.addr, Code: bp.code})
	img.Segments = append(img.Segments, m.bound.got...)
	if bp.abi.first > 0 {
		img.Symbols = append(img.Symbols, image.Symbol{Name: m.name + ":.plt", Addr: bp.addr, Size: uint32(bp.abi.first)})
	}
	for _, e := range bp.entries {
		f, _ := strings.CutSuffix(e.symbol, moduleAliasSuffix)
		img.Symbols = append(img.Symbols, image.Symbol{Name: m.name + ":" + f + "@plt", Addr: e.addr, Size: uint32(bp.abi.entry)})
	}
	img.Modules = append(img.Modules, image.Module{Name: m.name + ":plt", Start: bp.addr, End: bp.addr + uint64(len(bp.code)),
		SFrame: m.linked.sframe, SFrameAddr: m.linked.sframeAddr})
}

// PLTModule reports whether a module of an image is a .plt mapping of
// another module's object (pltParts), not an object of its own.
func PLTModule(name string) bool { return strings.HasSuffix(name, ":plt") }
