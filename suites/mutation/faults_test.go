package mutation_test

import (
	"encoding/binary"
	"fmt"

	"github.com/sfconform/sfconform/image"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// faultClass injects one kind of fault into a correct image. apply
// returns false when the program offers no place for the fault (or the
// encoder cannot express it); such a mutant is counted as inapplicable.
type faultClass struct {
	name  string
	apply func(in *mutationInput) (*mutant, bool)
}

// faultPrograms says, for a class that needs it, which programs the
// class is tried on per target and version, and how many: patterns (nil:
// the default mix), n 0 for none. Every other class is tried on
// mutantsPerClass programs of the default mix everywhere.
var faultPrograms = map[string]func(abi target.Target, v sframe.Version) (patterns []string, n int){
	// Rules on other registers than SP and FP: x86-64's DRAP and
	// CFA-on-%r10/%r11 functions (v3) and s390x's FPR saves. Only DRAP
	// has one at a call site, where dropping the row that leaves %r10
	// makes a caller's rule name a register (about one image in five:
	// the row dropped may be the epilogue's, the function may call
	// nothing): those programs are drawn from DRAP alone, and more of
	// them, so that reg-rules-in-callers meets the fault. s390x's leaves
	// come from the default mix.
	"reg-rule-kept": func(abi target.Target, v sframe.Version) ([]string, int) {
		switch {
		case abi == target.X86_64 && v == 3:
			return []string{"drap"}, 6 * mutantsPerClass
		case abi == target.S390X:
			return nil, mutantsPerClass
		}
		return nil, 0
	},
	// With a link register the CFA at the entry is SP itself (s390x: SP
	// + 160, the caller's SP): a lost allocation at a call site makes a
	// caller's SP equal to its callee's, what cfa-growth-equal-in-callers
	// lets through. About one image in nine has it there: more images.
	"frame-size-lost": func(abi target.Target, v sframe.Version) ([]string, int) {
		if abi.HasLinkRegister() {
			return nil, 3 * mutantsPerClass
		}
		return nil, mutantsPerClass
	},
}

// mutant is a faulty image and what was done to it. A fault placed in the
// rows before encoding keeps the mutated rows, so that it is also judged
// at the row level; a fault in the bytes has rows nil.
type mutant struct {
	img  *image.Image
	desc string
	rows []sframe.FDE
}

var faultClasses = []faultClass{
	{"cfa-offset+word", rowFault(func(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
		return shiftRule(&f.Rows[r].CFA, +target.WordSize, "CFA")
	})},
	{"cfa-offset-word", rowFault(func(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
		return shiftRule(&f.Rows[r].CFA, -target.WordSize, "CFA")
	})},
	{"fre-start-moved", rowFault(moveRowStart)},
	{"fp-offset", rowFault(func(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
		if f.Rows[r].FP.Kind != sframe.RuleExpr || f.Rows[r].FP.Reg != sframe.RegCFA {
			return "", false
		}
		return shiftRule(&f.Rows[r].FP, -target.WordSize, "FP")
	})},
	{"ra-offset", raOffset},
	{"cfa-base-flipped", rowFault(flipBase)},
	{"fre-dropped", rowFault(func(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
		desc := fmt.Sprintf("row at +0x%x of the function at 0x%x dropped", f.Rows[r].Start, f.Start)
		f.Rows = append(f.Rows[:r:r], f.Rows[r+1:]...)
		return desc, true
	})},
	{"dataword-size", dataWordSize},
	{"field-byte-order", fieldByteOrder},
	{"func-size-short", funcSizeShort},
	// A producer that misses the CFI of a save or an allocation: the
	// faults that put the topmost-frame rules (RA in the link register,
	// CFA == SP) at a call site, where only a caller's rules hold.
	{"ra-save-lost", rowFault(raSaveLost)},
	{"frame-size-lost", rowFault(frameSizeLost)},
	// The row that moves a rule off a register other than SP and FP
	// dropped (the DRAP register outliving its use): a register rule at a
	// call site (see faultMix).
	{"reg-rule-kept", rowFault(regRuleKept)},
}

// raSaveLost says the RA is still in the link register where the row
// says it is saved on the stack.
func raSaveLost(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
	ra := &f.Rows[r].RA
	if !in.abi.HasLinkRegister() || ra.Kind != sframe.RuleExpr || ra.Reg != sframe.RegCFA {
		return "", false
	}
	*ra = sframe.Rule{Kind: sframe.RuleSame}
	return "RA save not described: RA in the link register", true
}

// entryCFA is the CFA's offset from SP at a function's entry.
func entryCFA(abi target.Target) int64 {
	switch abi {
	case target.X86_64:
		return 8 // the return address the call pushed
	case target.S390X:
		return 160 // the register save area the caller allocated
	}
	return 0
}

// frameSizeLost says the CFA is where it was at the entry, SP plus the
// entry offset, where the row says the frame was allocated.
func frameSizeLost(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
	c := &f.Rows[r].CFA
	if c.Kind != sframe.RuleExpr || c.Reg != in.abi.SP() || c.Deref || c.Offset == entryCFA(in.abi) {
		return "", false
	}
	desc := fmt.Sprintf("CFA sp%+d -> sp%+d: the allocation not described", c.Offset, entryCFA(in.abi))
	c.Offset = entryCFA(in.abi)
	return desc, true
}

// regRuleKept drops the row that ends a rule on a register other than SP
// and FP, so that rule holds on.
func regRuleKept(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
	if r == 0 {
		return "", false
	}
	onReg := func(x sframe.Rule) bool {
		return x.Kind == sframe.RuleExpr && x.Reg != sframe.RegCFA && x.Reg != in.abi.SP() && x.Reg != in.abi.FP()
	}
	prev, cur := f.Rows[r-1], f.Rows[r]
	var kept string
	switch {
	case onReg(prev.CFA) && cur.CFA != prev.CFA:
		kept = "CFA"
	case onReg(prev.RA) && cur.RA != prev.RA:
		kept = "RA"
	case onReg(prev.FP) && cur.FP != prev.FP:
		kept = "FP"
	default:
		return "", false
	}
	desc := fmt.Sprintf("row at +0x%x of the function at 0x%x dropped: the %s rule on a register holds on", cur.Start, f.Start, kept)
	f.Rows = append(f.Rows[:r:r], f.Rows[r+1:]...)
	return desc, true
}

// candidates lists (fde, row) pairs whose PC range holds an executed PC.
func candidates(in *mutationInput, fdes []sframe.FDE) [][2]int {
	var out [][2]int
	for i := range fdes {
		f := &fdes[i]
		for r := range f.Rows {
			end := f.End()
			if r+1 < len(f.Rows) {
				end = f.Start + uint64(f.Rows[r+1].Start)
			}
			if in.executedIn(f.Start+uint64(f.Rows[r].Start), end) {
				out = append(out, [2]int{i, r})
			}
		}
	}
	return out
}

// rowFault applies mutate to one executed row, chosen by the seed among
// those where mutate applies, and encodes the result.
func rowFault(mutate func(in *mutationInput, f *sframe.FDE, r int) (string, bool)) func(*mutationInput) (*mutant, bool) {
	return func(in *mutationInput) (*mutant, bool) {
		cands := candidates(in, in.prog.FDEs())
		for k := range cands {
			c := cands[(int(uint64(in.seed)%uint64(len(cands)))+k)%len(cands)]
			fdes := cloneFDEs(in.prog.FDEs())
			desc, ok := mutate(in, &fdes[c[0]], c[1])
			if !ok {
				continue
			}
			img, err := producer.BuiltinFrom(in.prog, in.v, fdes)
			if err != nil {
				continue // the encoder cannot express it: try another row
			}
			return &mutant{img: img, desc: desc, rows: fdes}, true
		}
		return nil, false
	}
}

func cloneFDEs(in []sframe.FDE) []sframe.FDE {
	out := append([]sframe.FDE(nil), in...)
	for i := range out {
		out[i].Rows = append([]sframe.Row(nil), in[i].Rows...)
	}
	return out
}

func shiftRule(r *sframe.Rule, by int64, what string) (string, bool) {
	if r.Kind != sframe.RuleExpr {
		return "", false
	}
	r.Offset += by
	return fmt.Sprintf("%s offset %+d", what, by), true
}

func moveRowStart(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
	if r == 0 {
		return "", false
	}
	var offs []uint32
	for _, fn := range in.prog.Funcs {
		if fn.Addr == f.Start {
			for _, insn := range fn.Insns {
				offs = append(offs, insn.Off)
			}
		}
	}
	cur := f.Rows[r].Start
	for k, o := range offs {
		if o != cur {
			continue
		}
		if k+1 < len(offs) && (r+1 == len(f.Rows) || offs[k+1] < f.Rows[r+1].Start) {
			f.Rows[r].Start = offs[k+1]
			return fmt.Sprintf("row +0x%x moved one instruction later, to +0x%x", cur, offs[k+1]), true
		}
		if k > 0 && offs[k-1] > f.Rows[r-1].Start {
			f.Rows[r].Start = offs[k-1]
			return fmt.Sprintf("row +0x%x moved one instruction earlier, to +0x%x", cur, offs[k-1]), true
		}
	}
	return "", false
}

func flipBase(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
	c := &f.Rows[r].CFA
	sp, fp := in.abi.SP(), in.abi.FP()
	if c.Kind != sframe.RuleExpr || c.Deref {
		return "", false
	}
	switch c.Reg {
	case sp:
		c.Reg = fp
		return "CFA base SP -> FP", true
	case fp:
		c.Reg = sp
		return "CFA base FP -> SP", true
	}
	return "", false
}

// raOffset moves a saved RA's slot. On x86-64 the RA slot is the header's
// fixed offset, so the fault goes there.
func raOffset(in *mutationInput) (*mutant, bool) {
	if in.abi == target.X86_64 {
		img := cloneImage(in.img)
		img.SFrame[6] = byte(int8(img.SFrame[6]) - target.WordSize)
		return &mutant{img: img, desc: "header fixed RA offset moved down one word"}, true
	}
	return rowFault(func(in *mutationInput, f *sframe.FDE, r int) (string, bool) {
		if f.Rows[r].RA.Kind != sframe.RuleExpr || f.Rows[r].RA.Reg != sframe.RegCFA {
			return "", false
		}
		return shiftRule(&f.Rows[r].RA, -target.WordSize, "RA")
	})(in)
}

func funcSizeShort(in *mutationInput) (*mutant, bool) {
	for k := range in.prog.Funcs {
		fn := in.prog.Funcs[(int(uint64(in.seed)%uint64(len(in.prog.Funcs)))+k)%len(in.prog.Funcs)]
		last := fn.Insns[len(fn.Insns)-1]
		if !in.executedIn(fn.Addr+uint64(last.Off), fn.Addr+uint64(fn.Size)) {
			continue
		}
		fdes := cloneFDEs(in.prog.FDEs())
		for i := range fdes {
			f := &fdes[i]
			if f.Start != fn.Addr {
				continue
			}
			f.Size -= uint32(len(last.Bytes))
			for len(f.Rows) > 0 && f.Rows[len(f.Rows)-1].Start >= f.Size {
				f.Rows = f.Rows[:len(f.Rows)-1]
			}
		}
		img, err := producer.BuiltinFrom(in.prog, in.v, fdes)
		if err != nil {
			continue
		}
		return &mutant{img: img, desc: fmt.Sprintf("%s one instruction short (%d bytes)", fn.Name, len(last.Bytes)), rows: fdes}, true
	}
	return nil, false
}

func cloneImage(img *image.Image) *image.Image {
	c := *img
	c.SFrame = append([]byte(nil), img.SFrame...)
	return &c
}

// layout locates the parts of a section written by the builtin producer
// (one section, no auxiliary header), read here by hand so that byte
// faults do not depend on the decoder under test.
type layout struct {
	order            binary.ByteOrder
	fdeBase, freBase int
	fdeSize          int
	numFDEs          int
}

func sectionLayout(b []byte) layout {
	l := layout{order: binary.LittleEndian}
	if b[0] == 0xde && b[1] == 0xe2 {
		l.order = binary.BigEndian
	}
	hdr := sframe.HeaderSize + int(b[7])
	l.numFDEs = int(l.order.Uint32(b[8:]))
	l.fdeBase = hdr + int(l.order.Uint32(b[20:]))
	l.freBase = hdr + int(l.order.Uint32(b[24:]))
	l.fdeSize = 20
	if b[2] == 3 {
		l.fdeSize = 16
	}
	return l
}

// executedFDEs lists the indexes of FDEs (in stored order) that describe
// executed code.
func executedFDEs(in *mutationInput, l layout) []int {
	b := in.img.SFrame
	var out []int
	for i := 0; i < l.numFDEs; i++ {
		at := l.fdeBase + i*l.fdeSize
		var start int64
		var size uint32
		if b[2] == 3 {
			start, size = int64(l.order.Uint64(b[at:])), l.order.Uint32(b[at+8:])
		} else {
			start, size = int64(int32(l.order.Uint32(b[at:]))), l.order.Uint32(b[at+4:])
		}
		abs := in.img.SFrameAddr + uint64(at) + uint64(start)
		if in.executedIn(abs, abs+uint64(size)) {
			out = append(out, i)
		}
	}
	return out
}

// dataWordSize changes the data-word size code of the first FRE of an
// executed function that has data words.
func dataWordSize(in *mutationInput) (*mutant, bool) {
	l := sectionLayout(in.img.SFrame)
	fdes := executedFDEs(in, l)
	for k := range fdes {
		i := fdes[(int(uint64(in.seed)%uint64(len(fdes)))+k)%len(fdes)]
		img := cloneImage(in.img)
		b := img.SFrame
		at := l.fdeBase + i*l.fdeSize
		var freOff, info int
		if b[2] == 3 {
			freOff = l.freBase + int(l.order.Uint32(b[at+12:]))
			info = int(b[freOff+2])
			freOff += 5
		} else {
			freOff = l.freBase + int(l.order.Uint32(b[at+8:]))
			info = int(b[at+16])
		}
		addrSize := []int{1, 2, 4, 0}[info&0xf%4]
		p := freOff + addrSize
		if addrSize == 0 || p >= len(b) || (b[p]>>1)&0xf == 0 {
			continue
		}
		old := (b[p] >> 5) & 3
		next := (old + 1) % 3
		b[p] = b[p]&^0x60 | next<<5
		return &mutant{img: img, desc: fmt.Sprintf("FDE %d first FRE data-word size code %d -> %d", i, old, next)}, true
	}
	return nil, false
}

// fieldByteOrder stores one executed FDE's function start field in the
// wrong byte order.
func fieldByteOrder(in *mutationInput) (*mutant, bool) {
	l := sectionLayout(in.img.SFrame)
	fdes := executedFDEs(in, l)
	if len(fdes) == 0 {
		return nil, false
	}
	i := fdes[int(uint64(in.seed)%uint64(len(fdes)))]
	img := cloneImage(in.img)
	at := l.fdeBase + i*l.fdeSize
	n := 4
	if img.SFrame[2] == 3 {
		n = 8
	}
	f := img.SFrame[at : at+n]
	for a, z := 0, n-1; a < z; a, z = a+1, z-1 {
		f[a], f[z] = f[z], f[a]
	}
	return &mutant{img: img, desc: fmt.Sprintf("FDE %d function start field byte-swapped", i)}, true
}
