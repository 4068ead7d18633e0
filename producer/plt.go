package producer

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// Calls through a PLT the linker makes.
//
// gen's plt-stubs pattern is a block of stubs of one size that the
// builtin encoder describes with one PCMASK FDE. GNU as cannot write such
// an FDE; ld writes one for the .plt it makes (x86-64 since 2.40, s390x
// since 2.46). So a batch holding programs that call stubs is rendered
// with gen.AsmOptions.PLT (each call to stub S calls S.ext@PLT, a global
// alias of S's target) and linked as a shared object (-shared -z now) at
// the batch's addresses, its first segment, .plt among it, 2 MiB below
// the code (sharedBelow: the emulator's low code region). ld makes one PLT
// entry per stub called, an R_*_JUMP_SLOT relocation for its GOT slot,
// and, where it can, SFrame FDEs for the .plt: all the tools decide.
//
// The loader then does what ld.so does for such an object loaded at the
// addresses it was linked at, eagerly (BIND_NOW): it writes each
// JUMP_SLOT's symbol value into its slot. It applies nothing else: any
// other dynamic relocation, a JUMP_SLOT with an addend, against a symbol
// the object does not define or that is no function is an error naming
// it. The image gets the .plt and the sections holding the slots as
// segments, and one symbol per PLT entry of the program (S@plt, S the
// stub whose calls go through it) plus one for PLT0 (".plt"), so that the
// oracle, which reads only the machine and the symbols, sees a call enter
// the entry and the entry jump on to S's target: a frame, then a tail
// call, as with gen's stub.
//
// Where the linker writes no SFrame for its .plt (GNU ld 2.40 to 2.47 for
// AArch64, measured once per toolchain and target by pltProbe) the
// programs are linked as before, their calls reaching gen's stubs, and
// Limits says why.

// sharedBelow is how far below a batch's first program the shared
// object's first segment goes: emu.LowCodeBase is CodeBase - sharedBelow.
const sharedBelow = 2 << 20

// pltABI is how GNU ld lays out the .plt of a target: PLT0's size, each
// entry's, the relocation its GOT slots take, and how an entry names the
// slot it jumps through.
type pltABI struct {
	first, entry int
	jumpSlot     uint32
	slot         func(code []byte, addr uint64) (uint64, bool)
}

// pltABIs takes PLT0's and each entry's size from target.
var pltABIs = withPLTSizes(map[target.Target]pltABI{
	// jmp *slot(%rip): ff 25 rel32.
	target.X86_64: {0, 0, uint32(elf.R_X86_64_JMP_SLOT), func(c []byte, addr uint64) (uint64, bool) {
		if len(c) < 6 || c[0] != 0xff || c[1] != 0x25 {
			return 0, false
		}
		return addr + 6 + uint64(int64(int32(binary.LittleEndian.Uint32(c[2:])))), true
	}},
	// adrp x16, page; ldr x17, [x16, #off]: little-endian words in both
	// byte orders.
	target.AArch64:   {0, 0, uint32(elf.R_AARCH64_JUMP_SLOT), a64PLTSlot},
	target.AArch64BE: {0, 0, uint32(elf.R_AARCH64_JUMP_SLOT), a64PLTSlot},
	// larl %r1, slot: c0 10 imm32 (halfwords).
	target.S390X: {0, 0, uint32(elf.R_390_JMP_SLOT), func(c []byte, addr uint64) (uint64, bool) {
		if len(c) < 6 || c[0] != 0xc0 || c[1] != 0x10 {
			return 0, false
		}
		return addr + 2*uint64(int64(int32(binary.BigEndian.Uint32(c[2:])))), true
	}},
})

func withPLTSizes(m map[target.Target]pltABI) map[target.Target]pltABI {
	for t, a := range m {
		first, entry := t.PLTSizes()
		a.first, a.entry = int(first), int(entry)
		m[t] = a
	}
	return m
}

func a64PLTSlot(c []byte, addr uint64) (uint64, bool) {
	if len(c) < 8 {
		return 0, false
	}
	adrp, ldr := binary.LittleEndian.Uint32(c), binary.LittleEndian.Uint32(c[4:])
	if adrp&0x9f00001f != 0x90000010 || ldr&0xffc003ff != 0xf9400211 {
		return 0, false
	}
	imm := int64(adrp>>29&3|adrp>>5&0x7ffff<<2) << 43 >> 31 // sign-extended, << 12
	return uint64(int64(addr&^0xfff)+imm) + uint64(ldr>>10&0xfff)*8, true
}

// pltEntry is one entry of the linked .plt.
type pltEntry struct {
	addr, slot uint64
	symbol     string // the JUMP_SLOT's symbol
	value      uint64 // and its value, which the loader wrote into the slot
}

// pltLinked is a linked shared object's .plt, bound.
type pltLinked struct {
	addr    uint64
	code    []byte
	abi     pltABI
	entries map[string]pltEntry // by symbol
	got     []image.Segment     // the sections holding the slots, the slots written
}

// readPLT reads the .plt of a shared object and binds its GOT slots as
// the loader does.
func readPLT(f *elf.File, tg target.Target) (*pltLinked, error) {
	abi, ok := pltABIs[tg]
	if !ok {
		return nil, fmt.Errorf("no PLT layout known for %s", tg.Name())
	}
	sec := f.Section(".plt")
	if sec == nil {
		return nil, errors.New("the shared object has no .plt")
	}
	code, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf(".plt: %w", err)
	}
	n := (len(code) - abi.first) / abi.entry
	if len(code) < abi.first+abi.entry || abi.first+n*abi.entry != len(code) {
		return nil, fmt.Errorf(".plt at %#x is %d bytes, not a %d-byte PLT0 and %d-byte entries", sec.Addr, len(code), abi.first, abi.entry)
	}
	slots, err := jumpSlots(f, abi.jumpSlot)
	if err != nil {
		return nil, err
	}
	l := &pltLinked{addr: sec.Addr, code: code, abi: abi, entries: map[string]pltEntry{}}
	for i := 0; i < n; i++ {
		off := abi.first + i*abi.entry
		addr := sec.Addr + uint64(off)
		slot, ok := abi.slot(code[off:off+abi.entry], addr)
		if !ok {
			return nil, fmt.Errorf("PLT entry %d at %#x (% x) does not load a GOT slot as ld's %s entries do", i+1, addr, code[off:off+abi.entry], tg.Name())
		}
		e, ok := slots[slot]
		if !ok {
			return nil, fmt.Errorf("PLT entry %d at %#x jumps through %#x, which no JUMP_SLOT relocation binds", i+1, addr, slot)
		}
		delete(slots, slot)
		e.addr = addr
		l.entries[e.symbol] = e
	}
	for slot, e := range slots {
		return nil, fmt.Errorf("JUMP_SLOT relocation of %s at %#x has no PLT entry", e.symbol, slot)
	}
	if l.got, err = boundGOT(f, l.entries); err != nil {
		return nil, err
	}
	return l, nil
}

// jumpSlots reads every dynamic relocation of f (SHT_RELA sections that
// are loaded: .rela.dyn, .rela.plt), refusing all but JUMP_SLOTs without
// an addend against functions f defines, and returns them by slot.
func jumpSlots(f *elf.File, jumpSlot uint32) (map[uint64]pltEntry, error) {
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("dynamic symbols: %w", err)
	}
	out := map[uint64]pltEntry{}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_REL && s.Flags&elf.SHF_ALLOC != 0 {
			return nil, fmt.Errorf("%s: the loader applies RELA relocations only", s.Name)
		}
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		if len(data)%24 != 0 {
			return nil, fmt.Errorf("%s at file offset %#x: %d bytes, not a whole number of 24-byte entries", s.Name, s.Offset, len(data))
		}
		for i := 0; i < len(data); i += 24 {
			off, info, add := f.ByteOrder.Uint64(data[i:]), f.ByteOrder.Uint64(data[i+8:]), int64(f.ByteOrder.Uint64(data[i+16:]))
			typ, idx := uint32(info), info>>32
			where := fmt.Sprintf("%s entry %d (file offset %#x)", s.Name, i/24, s.Offset+uint64(i))
			if typ != jumpSlot {
				return nil, fmt.Errorf("%s: relocation %s at %#x: the loader applies only %s", where, relocName(f.Machine, typ), off, relocName(f.Machine, jumpSlot))
			}
			if idx == 0 || idx > uint64(len(syms)) {
				return nil, fmt.Errorf("%s: %s at %#x names symbol %d of %d", where, relocName(f.Machine, typ), off, idx, len(syms))
			}
			sym := syms[idx-1]
			switch {
			case add != 0:
				return nil, fmt.Errorf("%s: %s of %s at %#x has addend %d: the loader binds a slot to the symbol alone", where, relocName(f.Machine, typ), sym.Name, off, add)
			case sym.Section == elf.SHN_UNDEF:
				return nil, fmt.Errorf("%s: %s at %#x binds %s, which the object does not define: the loader loads no other object", where, relocName(f.Machine, typ), off, sym.Name)
			case elf.ST_TYPE(sym.Info) != elf.STT_FUNC:
				return nil, fmt.Errorf("%s: %s at %#x binds %s of type %v, not a function", where, relocName(f.Machine, typ), off, sym.Name, elf.ST_TYPE(sym.Info))
			}
			if _, dup := out[off]; dup {
				return nil, fmt.Errorf("%s: a second JUMP_SLOT at %#x", where, off)
			}
			out[off] = pltEntry{slot: off, symbol: sym.Name, value: sym.Value}
		}
	}
	return out, nil
}

func relocName(m elf.Machine, typ uint32) string {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64(typ).String()
	case elf.EM_AARCH64:
		return elf.R_AARCH64(typ).String()
	case elf.EM_S390:
		return elf.R_390(typ).String()
	}
	return fmt.Sprintf("type %d", typ)
}

// boundGOT returns the sections holding the slots with every slot holding
// its symbol's value.
func boundGOT(f *elf.File, entries map[string]pltEntry) ([]image.Segment, error) {
	var segs []image.Segment
	var names []string
	for _, e := range entries {
		i := slices.IndexFunc(f.Sections, func(s *elf.Section) bool {
			return s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_ALLOC != 0 && e.slot >= s.Addr && e.slot+8 <= s.Addr+s.Size
		})
		if i < 0 {
			return nil, fmt.Errorf("the GOT slot %#x of %s lies in no loaded section", e.slot, e.symbol)
		}
		s := f.Sections[i]
		k := slices.Index(names, s.Name)
		if k < 0 {
			data, err := s.Data()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.Name, err)
			}
			names, segs = append(names, s.Name), append(segs, image.Segment{Addr: s.Addr, Code: data})
			k = len(segs) - 1
		}
		f.ByteOrder.PutUint64(segs[k].Code[e.slot-s.Addr:], e.value)
	}
	slices.SortFunc(segs, func(a, b image.Segment) int {
		if a.Addr < b.Addr {
			return -1
		}
		return 1
	})
	return segs, nil
}

// pltImage adds to img what p's calls through the PLT need: the .plt and
// the bound GOT as segments, a symbol per entry and PLT0's, and checks
// that the linked code is gen's with each call to a stub reaching that
// stub's entry, whose slot holds the address of the stub's target.
func pltImage(img *image.Image, l *linked, pt *part, code []byte) error {
	p := pt.prog
	to := map[string]uint64{}
	for _, s := range p.PLTStubs() {
		name := pt.prefix + gen.PLTName(s)
		e, ok := l.plt.entries[name]
		if !ok {
			return fmt.Errorf("the linked .plt has no entry for %s", name)
		}
		tgt := p.StubTarget(s)
		if f, ok := l.funcs[pt.prefix+tgt]; !ok || f.Value != e.value {
			return fmt.Errorf("the PLT entry of %s at %#x is bound to %#x, not to %s (%#x)", s, e.addr, e.value, tgt, f.Value)
		}
		to[s] = e.addr
		img.Symbols = append(img.Symbols, image.Symbol{Name: s + "@plt", Addr: e.addr, Size: uint32(l.plt.abi.entry)})
	}
	want, err := p.CodeWithCalls(to)
	if err != nil {
		return err
	}
	if i := mismatch(code, want); i >= 0 {
		return fmt.Errorf("the linked code differs from gen's with its calls to stubs sent to their PLT entries, at %#x (%s): gen % x, linked % x",
			p.Base+uint64(i), describeAt(p, p.Base+uint64(i)), want[i:min(i+8, len(want))], code[i:min(i+8, len(code))])
	}
	img.Symbols = append(img.Symbols, image.Symbol{Name: ".plt", Addr: l.plt.addr, Size: uint32(l.plt.abi.first)})
	img.Record.Assembly = p.AssemblyWith(gen.AsmOptions{PLT: true})
	img.Segments = append(img.Segments, image.Segment{Addr: l.plt.addr, Code: l.plt.code})
	img.Segments = append(img.Segments, l.plt.got...)
	return nil
}

// pltSupport is what pltProbe measured.
type pltSupport struct {
	ok  bool
	why string // when not ok
}

// pltProbes holds what pltProbe measured, per assembler, linker and
// target: a *pltProbeResult.
var pltProbes sync.Map

type pltProbeResult struct {
	once sync.Once
	pltSupport
}

// pltProbe links a program calling stubs through the PLT, the way a batch
// is, and says whether the linker described the .plt entries in .sframe;
// once per process for each assembler, linker and target.
func (b *toolBuild) pltProbe() pltSupport {
	key := strings.Join(append([]string{b.as.AS, b.ld.LD, b.target.Name()}, append(b.as.ASFlags, b.asFlags...)...), "\x00")
	r, _ := pltProbes.LoadOrStore(key, &pltProbeResult{})
	res := r.(*pltProbeResult)
	res.once.Do(func() { res.pltSupport = b.measurePLT() })
	return res.pltSupport
}

func (b *toolBuild) measurePLT() pltSupport {
	ld := fmt.Sprintf("GNU ld %s", b.ld.Version)
	if _, ok := pltABIs[b.target]; !ok {
		return pltSupport{why: fmt.Sprintf("sfconform knows no PLT layout for %s", b.target.Name())}
	}
	var p *gen.Program
	for seed := int64(1); p == nil && seed <= 100; seed++ {
		q, err := gen.Generate(b.target, seed, gen.Options{Patterns: []string{"plt-stubs", "fp-frame", "leaf"}})
		if err != nil {
			return pltSupport{why: err.Error()}
		}
		if len(q.PLTStubs()) > 0 {
			p = q
		}
	}
	if p == nil {
		return pltSupport{why: "gen made no program calling a PLT-like stub to probe the linker with"}
	}
	if err := p.LayoutAt(0x10000000, 0x10000000+gen.FarOffset); err != nil {
		return pltSupport{why: err.Error()}
	}
	dir, err := os.MkdirTemp("", "sfconform-plt-probe-")
	if err != nil {
		return pltSupport{why: err.Error()}
	}
	defer os.RemoveAll(dir)
	imgs, errs, err := b.buildIn(dir, []*gen.Program{p}, true)
	if err == nil {
		err = errs[0]
	}
	if err != nil {
		return pltSupport{why: fmt.Sprintf("linking a shared object that calls through the PLT failed: %v", err)}
	}
	img := imgs[0]
	tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
	if err != nil {
		return pltSupport{why: fmt.Sprintf("the .sframe of a shared object with a .plt does not decode: %v", err)}
	}
	var lost []string
	for _, s := range img.Symbols {
		fde, err := tab.FindFDE(s.Addr)
		covered := err == nil && fde.Start <= s.Addr
		switch {
		case strings.HasSuffix(s.Name, "@plt") && !covered:
			return pltSupport{why: fmt.Sprintf("%s writes no SFrame FDE for the %s .plt it makes (measured: .sframe has %d FDEs, none for the PLT entry at %#x)",
				ld, b.target.Name(), fdeCount(tab), s.Addr)}
		case s.Name != ".plt" && !strings.HasSuffix(s.Name, "@plt") && !s.IsStack() && (!covered || fde.Start != s.Addr):
			lost = append(lost, s.Name)
		}
	}
	if len(lost) > 0 {
		// The program's own FDEs must survive the link: every function
		// of the probe has CFI any version expresses.
		var said []string
		for _, w := range img.Record.Warnings {
			if w.Tool == "ld" {
				said = append(said, w.Text)
			}
		}
		return pltSupport{why: fmt.Sprintf("linked into a shared object with a .plt by %s, .sframe keeps %d FDEs and none for %d of the program's %d functions (%s); ld said: %q",
			ld, fdeCount(tab), len(lost), len(p.Funcs), strings.Join(lost, ", "), strings.Join(said, "; "))}
	}
	return pltSupport{ok: true}
}

func fdeCount(t *sframe.Table) int {
	n := 0
	for _, s := range t.Sections {
		n += int(s.Header.NumFDEs)
	}
	return n
}

// Limited is a producer whose images of some pattern are not what the
// pattern asks of the toolchain, for a reason of the tools': Limits says,
// for t, which patterns and why.
type Limited interface {
	Limits(t target.Target) map[string]string
}

// limits is what the build cannot do through the linker: the plt-stubs
// programs keep gen's stubs where the PLT probe found ld's .plt
// undescribed or the program's FDEs lost.
func (b *toolBuild) limits() map[string]string {
	if sup := b.pltProbe(); !sup.ok {
		return map[string]string{"plt-stubs": "the calls reach gen's stubs, not a PLT the linker makes: " + sup.why}
	}
	return nil
}

// Limits says what the toolchain's link cannot do for t (plt.go).
func (g *GAS) Limits(t target.Target) map[string]string {
	b, err := g.build(t)
	if err != nil {
		return nil
	}
	return b.limits()
}

// Limits says what the toolchain's link cannot do for t (plt.go).
func (l *LLVMMC) Limits(t target.Target) map[string]string {
	b, err := l.build(t)
	if err != nil {
		return nil
	}
	return b.limits()
}

var _, _ Limited = (*GAS)(nil), (*LLVMMC)(nil)
