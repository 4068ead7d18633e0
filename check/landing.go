package check

import (
	"debug/elf"
	"fmt"
	"sort"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
)

// C++ landing pads (and the .cold parts and cleanups they lead to) are
// reached only when an exception passes through a call, which the
// check's runs never throw: calls leaving the file return at once, and
// __cxa_throw ends the run. The personality routine, when an exception
// passes through a call whose LSDA call-site entry has a landing pad,
// restores the registers the CFI gives for that frame at the call (the
// callee-saved ones as they were, the SP as after the call returned) and
// sets the PC to the pad. A run that replaces the call by a jump to the
// pad gets exactly that machine: same registers, same stack, PC at the
// pad. For every landing pad the check finds a call in its call-site
// range (a direct or indirect call long enough to hold the jump), runs
// the function holding that call with the jump written over it, in the
// variants in turn until one reaches the pad, and judges every step as
// in any other run. The registers a pad receives the exception in
// (__builtin_eh_return_data_regno) keep what they held at the call.

// landingPad is one pad and the calls that lead to it.
type landingPad struct {
	pad   uint64   // file address
	calls []uint64 // call instructions in its call-site ranges
	fn    []int    // the function (index) each call's run starts in
	why   string   // why it cannot be entered ("" when it can)
}

// PadReport says how far the landing pads were entered.
type PadReport struct {
	// Pads are the distinct landing pads of the LSDAs; Entered those a
	// run reached and judged; NotEntered the others by why.
	Pads       int            `json:"pads"`
	Entered    int            `json:"entered"`
	NotEntered map[string]int `json:"not_entered,omitempty"`
	// Executed counts the distinct instructions the dynamic check ran
	// without the landing-pad runs, WithPads with them.
	Executed int `json:"executed"`
	WithPads int `json:"with_pads"`
}

// landingPads reads the LSDA of every FDE that has one.
func (c *checker) landingPads() ([]*landingPad, []string) {
	var notes []string
	if c.cfi == nil || c.l.Kind == "REL" {
		return nil, nil
	}
	byPad := map[uint64]*landingPad{}
	for _, fde := range c.cfi.FDEs {
		if fde.LSDA == 0 {
			continue
		}
		data, base, ok := c.sectionAt(fde.LSDA)
		if !ok {
			notes = append(notes, fmt.Sprintf("FDE 0x%x: its LSDA at 0x%x is in no section", fde.Start, fde.LSDA))
			continue
		}
		l, err := cfi.ParseLSDA(data, base, fde.LSDA, fde.Start, c.l.File.ByteOrder)
		if err != nil {
			notes = append(notes, fmt.Sprintf("FDE 0x%x: LSDA at 0x%x: %v", fde.Start, fde.LSDA, err))
			continue
		}
		for _, cs := range l.CallSites {
			if cs.LandingPad == 0 {
				continue
			}
			p := byPad[cs.LandingPad]
			if p == nil {
				p = &landingPad{pad: cs.LandingPad}
				byPad[cs.LandingPad] = p
			}
			c.callsIn(p, cs, fde)
		}
	}
	var out []*landingPad
	for _, p := range byPad {
		if len(p.calls) == 0 && p.why == "" {
			p.why = "no call in its call-site ranges"
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pad < out[j].pad })
	return out, notes
}

// callsIn adds the calls of call site cs (whose return address minus one
// lies in its range) that a jump fits in.
func (c *checker) callsIn(p *landingPad, cs cfi.CallSite, fde *cfi.FDE) {
	code := c.l.code(fde.Start, fde.End)
	jlen := len(jumpCode(c.l.Target, 0, 0))
	for off := 0; off < len(code); {
		pc := fde.Start + uint64(off)
		n, err := disasm.Length(c.l.Target, code[off:])
		if err != nil {
			return
		}
		off += n
		if end := pc + uint64(n); end-1 < cs.Start || end-1 >= cs.End || !isCall(c.l.Target, code[off-n:off]) {
			continue
		}
		if n < jlen {
			if p.why == "" {
				p.why = "its calls are shorter than a jump"
			}
			continue
		}
		fn := c.runnerOf(pc)
		if fn < 0 {
			continue
		}
		p.calls, p.fn, p.why = append(p.calls, pc), append(p.fn, fn), ""
	}
}

// runnerOf is the index of the function whose runs execute pc: the
// function holding it, or the owner of the cold part holding it.
func (c *checker) runnerOf(pc uint64) int {
	i := sort.Search(len(c.funcs), func(i int) bool { return c.funcs[i].Addr > pc }) - 1
	if i < 0 || pc >= c.funcs[i].Addr+c.funcs[i].Size {
		return -1
	}
	if owner := c.funcs[i].PartOf; owner != "" {
		for j, f := range c.funcs {
			if f.Name == owner {
				return j
			}
		}
		return -1
	}
	return i
}

// isCall reports whether insn is a call instruction.
func isCall(t target.Target, insn []byte) bool {
	switch t {
	case target.X86_64:
		i := 0
		for i < len(insn) && (insn[i] == 0x3e || insn[i] == 0x66 || insn[i] == 0xf2 || insn[i]&0xf0 == 0x40) {
			i++ // notrack, operand size, bnd, REX
		}
		if i >= len(insn) {
			return false
		}
		if insn[i] == 0xe8 {
			return true
		}
		return insn[i] == 0xff && i+1 < len(insn) && (insn[i+1]>>3)&7 == 2
	case target.S390X:
		// brasl, basr, bras
		return len(insn) >= 2 && ((insn[0] == 0xc0 && insn[1]&0x0f == 0x05) || insn[0] == 0x0d || (insn[0] == 0xa7 && insn[1]&0x0f == 0x05))
	}
	if len(insn) != 4 {
		return false
	}
	w := uint32(insn[0]) | uint32(insn[1])<<8 | uint32(insn[2])<<16 | uint32(insn[3])<<24
	return w&0xfc000000 == 0x94000000 || w&0xfffffc1f == 0xd63f0000 // bl, blr
}

// sectionAt is the allocated section holding addr.
func (c *checker) sectionAt(addr uint64) ([]byte, uint64, bool) {
	for _, s := range c.l.File.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && addr >= s.Addr && addr < s.Addr+s.Size {
			d, err := s.Data()
			if err != nil {
				return nil, 0, false
			}
			return d, s.Addr, true
		}
	}
	return nil, 0, false
}

// padEntry is one call turned into a jump to a landing pad, through a
// trampoline in the stubs' page that sets the selector register as the
// personality routine does (moved addresses).
type padEntry struct {
	call, pad, sel uint64
}

// trampOff places the trampolines in the stubs' page, trampSize apart;
// their steps are set aside (AsidePadEntry).
const (
	trampOff  = 0x300
	trampSize = 0x20
	maxTramps = (0x1000 - trampOff) / trampSize
)

// AsidePadEntry: the steps of the trampoline that enters a landing pad,
// which runs in the throwing frame but has no row of its own.
const AsidePadEntry = "entering a landing pad"

// overlay is the code a run with these entries writes over the file's
// and into the stubs' page.
func (c *checker) overlay(fo *foreign, entries []padEntry) []image.Segment {
	var out []image.Segment
	for j, e := range entries {
		tr := fo.stub + trampOff + uint64(j)*trampSize
		out = append(out, image.Segment{Addr: e.call, Code: jumpCode(c.l.Target, e.call, tr)},
			image.Segment{Addr: tr, Code: trampCode(c.l.Target, tr, e.pad, e.sel)})
	}
	return out
}

// trampCode sets the second exception-data register
// (__builtin_eh_return_data_regno(1): the handler switch value the pad
// compares) to sel and jumps to pad; the first keeps what it held.
func trampCode(t target.Target, at, pad, sel uint64) []byte {
	var b []byte
	switch t {
	case target.X86_64: // mov $sel, %edx
		b = []byte{0xba, byte(sel), 0, 0, 0}
	case target.S390X: // lghi %r7, sel
		b = []byte{0xa7, 0x79, 0, byte(sel)}
	default: // movz x1, #sel
		w := 0xd2800001 | uint32(sel&0xffff)<<5
		b = []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)}
	}
	return append(b, jumpCode(t, at+uint64(len(b)), pad)...)
}

// padVariant is the first of two argument variants only the landing-pad
// runs use (after the six of every function): negative numbers, which
// take the error paths that throw (arguments).
const padVariant = 6

// selectors are the handler switch values the runs give a pad in turn:
// the first catch clause, a cleanup, the second clause.
var selectors = []uint64{1, 0, 2}

// enterLandingPads enters every landing pad: a run of the function
// holding a call in the pad's call-site ranges, the call turned into a
// jump to the pad, in the variants (and selectors) in turn until one
// reaches it. A pad whose calls lie in code that only another pad leads
// to (a catch handler's calls) is tried on top of the entries that
// reached the other pads of its function, up to three levels deep.
func (c *checker) enterLandingPads(fo *foreign, chk *harness.Checker, cons consumer.Consumer, w *slotWatch) {
	pr := &PadReport{Executed: len(c.executedPCs)}
	defer func() {
		pr.WithPads = len(c.executedPCs)
		if pr.Pads > 0 {
			c.r.Pads = pr
		}
	}()
	pads, notes := c.landingPads()
	for _, n := range notes {
		c.r.add(Finding{Kind: KindNotCompared, Severity: SevNote, Offset: -1, FileOffset: -1, Message: "landing pads: " + n})
	}
	pr.Pads = len(pads)
	entered := map[uint64]bool{}
	reached := map[int][][]padEntry{} // by function: entries that reached a pad
	try := func(p *landingPad, k int, base []padEntry, variants int) bool {
		call, fn := p.calls[k]+fo.delta, p.fn[k]
		if !c.fr[fn].HasFDE || fo.patched[c.funcs[fn].Addr+fo.delta] || len(base) >= maxTramps {
			return false
		}
		for _, e := range base {
			if e.call == call {
				return false
			}
		}
		run := func(v int, sel uint64) bool {
			entries := append(append([]padEntry(nil), base...), padEntry{call: call, pad: p.pad + fo.delta, sel: sel})
			for _, pc := range c.runOnce(fn, fo, chk, cons, w, v, c.overlay(fo, entries)) {
				if pc == p.pad+fo.delta {
					reached[fn] = append(reached[fn], entries)
					return true
				}
			}
			return false
		}
		for v := 0; v < variants; v++ {
			sel := selectors[v%len(selectors)]
			if run(v, sel) {
				// The same entry with the other selectors: the bases
				// of the pads that only another clause's code leads to.
				for _, other := range selectors {
					if other != sel {
						run(v, other)
					}
				}
				return true
			}
		}
		return false
	}
	for round := 0; round < 3; round++ {
		progress := false
		for _, p := range pads {
			if entered[p.pad] || p.why != "" {
				continue
			}
		calls:
			for k := 0; k < len(p.calls) && k < 4; k++ {
				if round == 0 {
					if try(p, k, nil, padVariant+2) {
						entered[p.pad], progress = true, true
						break
					}
					continue
				}
				bases := reached[p.fn[k]]
				for b := 0; b < len(bases) && b < 12; b++ {
					if try(p, k, bases[b], len(selectors)) {
						entered[p.pad], progress = true, true
						break calls
					}
				}
			}
		}
		if !progress {
			break
		}
	}
	for _, p := range pads {
		switch {
		case entered[p.pad]:
			pr.Entered++
		case p.why != "":
			pr.notEntered(p.why)
		case !p.runnable(c, fo):
			pr.notEntered("its calls are in functions the dynamic check does not run (no SFrame FDE, or never returns)")
		default:
			pr.notEntered("no run reached a call that leads to it")
		}
	}
}

func (pr *PadReport) notEntered(why string) {
	if pr.NotEntered == nil {
		pr.NotEntered = map[string]int{}
	}
	pr.NotEntered[why]++
}

// runnable reports whether one of p's calls is in a function the dynamic
// check runs.
func (p *landingPad) runnable(c *checker, fo *foreign) bool {
	for _, fn := range p.fn {
		if c.fr[fn].HasFDE && !fo.patched[c.funcs[fn].Addr+fo.delta] {
			return true
		}
	}
	return false
}
