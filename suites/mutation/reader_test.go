package mutation_test

// The suite's own SFrame reader. Equivalence of a mutant is judged with
// it, never with the sframe package under test. It is written from the
// SFrame specification (version 2 and version 3, February 2026) and the
// facts in the project's spec/sframe-facts.md, sections 1-4, and reads
// only what the judgement needs: the function index, each function's rows
// and what their data words mean for the CFA, the RA and the FP. It checks
// bounds and the few values it cannot interpret, nothing else. Version 1
// is not read: the builtin producer writes versions 2 and 3 only.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/target"
)

// ruleKind says how a rule yields its value.
type ruleKind uint8

const (
	undefined ruleKind = iota // no value
	sameReg                   // still in its own register: RA in the link register, FP in the FP register
	atAddr                    // addr = base + off; value = deref ? *addr : addr
)

// atCFA as a rule's base means the CFA rather than a register.
const atCFA = -1

// rule recovers one value of the caller: CFA, RA or FP.
type rule struct {
	kind  ruleKind
	reg   int // DWARF register number, or atCFA
	off   int64
	deref bool
}

func (r rule) String() string {
	switch r.kind {
	case sameReg:
		return "same"
	case atAddr:
		base := fmt.Sprintf("r%d", r.reg)
		if r.reg == atCFA {
			base = "cfa"
		}
		if r.deref {
			return fmt.Sprintf("*(%s%+d)", base, r.off)
		}
		return fmt.Sprintf("%s%+d", base, r.off)
	}
	return "undefined"
}

// row is one frame row entry, as its data words mean it.
type row struct {
	start       uint32 // offset from the function start (PCMASK: inside the repeated block)
	outermost   bool   // no data words: the RA is undefined
	mangled     bool   // AArch64: the saved RA is signed
	cfa, ra, fp rule
	// signal: the function is a signal trampoline (version 3 FDE info
	// bit 7), whose caller an unwinder reads from the signal frame.
	signal bool
}

// function is one function descriptor with its rows.
type function struct {
	start uint64 // absolute address of the first byte
	size  uint32
	mask  bool  // PC type MASK: rows match (PC - start) % rep
	rep   uint8 // repeated block size for MASK
	flex  bool  // version 3 FLEX FDE
	rows  []row
	// signal: version 3 signal trampoline (info bit 7).
	signal bool
}

// frameTable is what a section says, function by function in index order.
type frameTable struct {
	abi     target.Target // the section's ABI id equals the target's value
	version byte
	fns     []function
	// brk, when not intact, is the rule of reading or lookup a consumer
	// mutant gets wrong (unwinder_test.go).
	brk ruleBreak
}

// readSFrame reads a section whose first byte is at address addr.
func readSFrame(b []byte, addr uint64) (*frameTable, error) { return readSFrameBroken(b, addr, intact) }

// readSFrameBroken is readSFrame with one rule broken, for a consumer
// mutant.
func readSFrameBroken(b []byte, addr uint64, brk ruleBreak) (*frameTable, error) {
	r := &byteReader{b: b}
	var o binary.ByteOrder // from the magic 0xdee2, stored in the target's order
	switch m := r.bytes(0, 28); {
	case m == nil:
		return nil, r.err
	case m[0] == 0xde && m[1] == 0xe2:
		o = binary.BigEndian
	case m[0] == 0xe2 && m[1] == 0xde:
		o = binary.LittleEndian
	default:
		return nil, fmt.Errorf("bad magic %#x", m[:2])
	}
	r.o = o
	t := &frameTable{version: b[2], abi: target.Target(b[4]), brk: brk}
	flags, fixedRA := b[3], int64(int8(b[6]))
	if t.version != 2 && t.version != 3 {
		return nil, fmt.Errorf("version %d is not read here", t.version)
	}
	if !t.abi.Valid() {
		return nil, fmt.Errorf("unknown ABI %d", b[4])
	}
	hdrEnd := 28 + int(b[7]) // fdeoff and freoff count from the end of the auxiliary header
	numFDEs := int(o.Uint32(b[8:]))
	fdeSub := hdrEnd + int(o.Uint32(b[20:]))
	freSub := hdrEnd + int(o.Uint32(b[24:]))
	fdeSize := map[byte]int{2: 20, 3: 16}[t.version]

	for i := 0; i < numFDEs; i++ {
		at := fdeSub + i*fdeSize
		d := r.bytes(at, fdeSize)
		if d == nil {
			return nil, r.err
		}
		var f function
		var start int64
		var freAt, numFREs int
		var info, info2 byte
		if t.version == 2 { // s32 start, u32 size, u32 fre_off, u32 num_fres, u8 info, u8 rep_size, u16 pad
			start, f.size = int64(int32(o.Uint32(d[0:]))), o.Uint32(d[4:])
			freAt, numFREs = freSub+int(o.Uint32(d[8:])), int(o.Uint32(d[12:]))
			info, f.rep = d[16], d[17]
		} else { // s64 start, u32 size, u32 fre_off; attribute: u16 num_fres, u8 info, u8 info2, u8 rep_size
			start, f.size = int64(o.Uint64(d[0:])), o.Uint32(d[8:])
			a := r.bytes(freSub+int(o.Uint32(d[12:])), 5)
			if a == nil {
				return nil, r.err
			}
			numFREs, info, info2, f.rep = int(o.Uint16(a[0:])), a[2], a[3], a[4]
			freAt = freSub + int(o.Uint32(d[12:])) + 5
		}
		f.start = addr + uint64(start)
		if flags&0x4 != 0 { // FDE_FUNC_START_PCREL: relative to the start field itself
			f.start += uint64(at)
		}
		f.mask = info>>4&1 == 1
		f.signal = t.version == 3 && info&0x80 != 0
		switch info2 & 0x1f {
		case 0:
		case 1:
			f.flex = true
		default:
			return nil, fmt.Errorf("FDE %d: FDE type %d", i, info2&0x1f)
		}
		addrSize := map[byte]int{0: 1, 1: 2, 2: 4}[info&0xf]
		if addrSize == 0 {
			return nil, fmt.Errorf("FDE %d: FRE type %d", i, info&0xf)
		}
		for k := 0; k < numFREs; k++ {
			s := r.bytes(freAt, addrSize+1)
			if s == nil {
				return nil, r.err
			}
			fi := s[addrSize] // bit 0 base SP, bits 1-4 word count, bits 5-6 word size, bit 7 mangled RA
			n, size := int(fi>>1&0xf), map[byte]int{0: 1, 1: 2, 2: 4}[fi>>5&3]
			if size == 0 {
				return nil, fmt.Errorf("FDE %d FRE %d: data word size code 3", i, k)
			}
			w := r.bytes(freAt+addrSize+1, n*size)
			if w == nil {
				return nil, r.err
			}
			u, sv := make([]uint64, n), make([]int64, n)
			for j := range n {
				u[j], sv[j] = r.word(w[j*size:], size)
			}
			row, err := t.meaning(f.flex, fixedRA, fi, u, sv)
			if err != nil {
				return nil, fmt.Errorf("FDE %d FRE %d: %w", i, k, err)
			}
			row.start = uint32(r.unsigned(s, addrSize))
			row.signal = f.signal
			f.rows = append(f.rows, row)
			freAt += addrSize + 1 + n*size
		}
		t.fns = append(t.fns, f)
	}
	return t, nil
}

// meaning turns one FRE's data words (u unsigned, s signed) into rules,
// per FDE type and ABI (specification section 3).
func (t *frameTable) meaning(flex bool, fixedRA int64, fi byte, u []uint64, s []int64) (row, error) {
	n := len(u)
	r := row{mangled: fi&0x80 != 0}
	if n == 0 {
		r.outermost = true
		return r, nil
	}
	// Defaults when a word is absent: AMD64 keeps the RA at the header's
	// fixed offset from the CFA; elsewhere RA and FP stay in their registers.
	r.ra, r.fp = rule{kind: sameReg}, rule{kind: sameReg}
	fixed := t.abi == target.X86_64 && t.brk != brkFixedRAIgnored
	if fixed {
		r.ra = rule{kind: atAddr, reg: atCFA, off: fixedRA, deref: true}
	}
	s390xScaled := t.abi == target.S390X && t.brk != brkS390XCFAUnscaled
	if flex {
		// Pairs (control, displacement) for CFA, RA, FP; a control word
		// of 0 alone is padding: that value keeps its default.
		pair := func(ctrl uint64, disp int64) rule {
			x := rule{kind: atAddr, reg: atCFA, off: disp, deref: ctrl>>1&1 == 1 && t.brk != brkFlexIgnoreDeref}
			if ctrl&1 == 1 {
				x.reg = int(ctrl >> 3)
			}
			return x
		}
		if n < 2 || u[0]&1 == 0 {
			return r, errors.New("flexible CFA rule without a base register")
		}
		r.cfa = pair(u[0], s[1])
		if s390xScaled {
			r.cfa.off = r.cfa.off*8 + 160
		}
		i := 2
		for _, x := range []*rule{&r.ra, &r.fp} {
			switch {
			case i == n:
			case u[i] == 0 && t.brk != brkFlexPaddingAsPair:
				i++
			case i+1 < n:
				*x, i = pair(u[i], s[i+1]), i+2
				if t.brk == brkFlexBaseAlwaysCFA {
					x.reg = atCFA
				}
			default:
				return r, errors.New("flexible control word without its displacement")
			}
		}
		if i != n {
			return r, fmt.Errorf("%d data words left over", n-i)
		}
		return r, nil
	}

	// DEFAULT: word 0 is the CFA offset from SP or FP (FRE info bit 0).
	base := t.abi.FP()
	if fi&1 == 1 != (t.brk == brkCFABaseBitInverted) {
		base = t.abi.SP()
	}
	r.cfa = rule{kind: atAddr, reg: base, off: s[0]}
	saved := func(w int64) rule {
		if t.abi == target.S390X && t.version == 2 && w&1 == 1 && t.brk != brkV2RegnumWordsAsOffsets {
			return rule{kind: atAddr, reg: int(w >> 1)} // s390x v2: an odd word is the DWARF register holding the value
		}
		return rule{kind: atAddr, reg: atCFA, off: w, deref: true}
	}
	most := 3
	switch {
	case fixed: // AMD64 [CFA, FP?]; RA at the fixed offset
		most = 2
		if n >= 2 {
			r.fp = saved(s[1])
		}
	default: // AArch64 [CFA] or [CFA, RA, FP]; s390x [CFA, RA?, FP?]
		if s390xScaled {
			r.cfa.off = s[0]*8 + 160 // stored as (offset - 160) / 8
		}
		// s390x: an RA word of 0 is padding, RA not saved.
		if n >= 2 && !(t.abi == target.S390X && s[1] == 0 && t.brk != brkS390XRAPaddingAsOffset) {
			r.ra = saved(s[1])
		}
		if n >= 3 {
			r.fp = saved(s[2])
		}
	}
	if n > most {
		return r, fmt.Errorf("%d data words, at most %d on %s", n, most, t.abi.Name())
	}
	return r, nil
}

// find returns the row that covers pc: the function whose [start,
// start+size) holds it, then its last row starting at or before the PC's
// offset (PC type INC) or the offset modulo the block size (MASK).
func (t *frameTable) find(pc uint64) (*row, bool) {
	f := t.function(pc)
	if f == nil {
		return nil, false
	}
	if len(f.rows) == 0 && t.version == 3 && !f.flex {
		// Version 3: a DEFAULT FDE without FREs marks an outermost
		// frame, unless it is a signal trampoline's: its rows are not
		// used, the Linux unwinder looks at the signal flag first.
		if f.signal && t.brk != brkEmptySignalFDEOutermost {
			return &signalRow, true
		}
		if t.brk == brkEmptyFDENoInfo {
			return nil, false
		}
		return &outermostRow, true
	}
	off := pc - f.start
	if f.mask && t.brk != brkPCMaskAsInc {
		if f.rep == 0 {
			return nil, false
		}
		off %= uint64(f.rep)
	}
	var hit *row
	for k := range f.rows {
		s := uint64(f.rows[k].start)
		if s > off || s == off && k > 0 && t.brk == brkRowStartExclusive {
			break
		}
		hit = &f.rows[k]
	}
	return hit, hit != nil
}

// function returns the first function whose [start, start+size) holds
// pc, or nil.
func (t *frameTable) function(pc uint64) *function {
	var below *function // the nearest function starting at or before pc
	for i := range t.fns {
		f := &t.fns[i]
		if pc < f.start {
			continue
		}
		if pc-f.start < uint64(f.size) {
			return f
		}
		if below == nil || f.start > below.start {
			below = f
		}
	}
	if t.brk == brkFDESizeIgnored {
		return below
	}
	return nil
}

var (
	outermostRow = row{outermost: true}
	signalRow    = row{signal: true}
)

// byteReader reads fields of a section in its byte order, checking bounds.
type byteReader struct {
	b   []byte
	o   binary.ByteOrder
	err error
}

// bytes returns b[at:at+n], or nil (and sets err) when that is outside.
func (r *byteReader) bytes(at, n int) []byte {
	if at < 0 || n < 0 || at > len(r.b) || len(r.b)-at < n {
		r.err = fmt.Errorf("%d bytes at offset %d are outside the %d-byte section", n, at, len(r.b))
		return nil
	}
	return r.b[at : at+n]
}

func (r *byteReader) unsigned(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(r.o.Uint16(b))
	}
	return uint64(r.o.Uint32(b))
}

// word reads a data word both ways: flexible control words are unsigned,
// every other data word is signed.
func (r *byteReader) word(b []byte, size int) (uint64, int64) {
	u := r.unsigned(b, size)
	shift := 64 - 8*size
	return u, int64(u<<shift) >> shift
}
