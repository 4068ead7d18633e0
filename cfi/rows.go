package cfi

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// RuleKind classifies a register or CFA rule (DWARF 5, 6.4.1).
type RuleKind uint8

const (
	Unspecified   RuleKind = iota // never mentioned: the ABI's default (callee-saved: same value)
	Undefined                     // DW_CFA_undefined
	SameValue                     // DW_CFA_same_value
	Offset                        // saved at CFA+N
	ValOffset                     // the value is CFA+N
	Register                      // in register Reg
	Expression                    // saved at the address Expr computes (CFA pushed first)
	ValExpression                 // the value Expr computes (CFA pushed first)
	RegOffset                     // CFA only: Reg + N
	CFAExpression                 // CFA only: the value Expr computes
)

// Rule is the rule of one register, or of the CFA.
type Rule struct {
	Kind   RuleKind
	Reg    uint64
	Offset int64
	Expr   []byte
}

// Row is the state at one location: it holds from Loc to the next row.
type Row struct {
	Loc uint64
	CFA Rule
	// Regs holds the rules of the tracked registers, in the order given to
	// Rows.
	Regs []Rule
	// RASigned: AArch64 DW_CFA_AARCH64_negate_ra_state has toggled (an odd
	// number of times): the return address is signed.
	RASigned bool
}

// maxStack bounds DW_CFA_remember_state nesting.
const maxStack = 64

// Rows interprets the CIE's initial instructions and the FDE's, giving one
// row per location at which a rule of the CFA or of a tracked register
// changes (and the first row, at Start). aarch64 selects the meaning of
// opcode 0x2d (DW_CFA_AARCH64_negate_ra_state rather than
// DW_CFA_GNU_window_save).
func (f *FDE) Rows(track []uint64, aarch64 bool, order binary.ByteOrder) ([]Row, error) {
	in := &interp{track: track, aarch64: aarch64, fde: f}
	in.cur.Loc = f.Start
	in.cur.Regs = make([]Rule, len(track))
	if err := in.run(f.CIE.Initial, f.CIE.initialOffset, order, true); err != nil {
		return nil, err
	}
	in.initial = in.cur.clone()
	in.rows = nil
	if err := in.run(f.Instructions, f.instrOffset, order, false); err != nil {
		return in.finish(), err
	}
	return in.finish(), nil
}

type interp struct {
	track   []uint64
	aarch64 bool
	fde     *FDE
	cur     Row
	initial Row
	rows    []Row
	stack   []Row
	started bool
}

func (r Row) clone() Row {
	r.Regs = append([]Rule(nil), r.Regs...)
	return r
}

func (in *interp) finish() []Row {
	in.emit()
	return in.rows
}

// emit records the current row (replacing a row at the same location).
func (in *interp) emit() {
	row := in.cur.clone()
	if n := len(in.rows); n > 0 && in.rows[n-1].Loc == row.Loc {
		in.rows[n-1] = row
		return
	}
	in.rows = append(in.rows, row)
}

func (in *interp) advance(loc uint64) {
	in.emit()
	in.cur.Loc = loc
}

func (in *interp) reg(r uint64) *Rule {
	for i, t := range in.track {
		if t == r {
			return &in.cur.Regs[i]
		}
	}
	return nil
}

func (in *interp) set(r uint64, rule Rule) {
	if p := in.reg(r); p != nil {
		*p = rule
	}
}

func (in *interp) restore(r uint64) {
	for i, t := range in.track {
		if t == r {
			in.cur.Regs[i] = in.initial.Regs[i]
		}
	}
}

func (in *interp) run(code []byte, base int, order binary.ByteOrder, initial bool) error {
	c := &cursor{b: code, o: order}
	cie := in.fde.CIE
	caf, daf := cie.CodeAlign, cie.DataAlign
	for c.off < len(code) {
		at := base + c.off
		op := c.u8()
		fail := func(msg string) error { return &FormatError{at, msg, ErrTruncated} }
		switch op >> 6 {
		case 1: // DW_CFA_advance_loc
			in.advance(in.cur.Loc + uint64(op&0x3f)*caf)
			continue
		case 2: // DW_CFA_offset
			r := uint64(op & 0x3f)
			in.set(r, Rule{Kind: Offset, Offset: int64(c.uleb()) * daf})
			if c.err != nil {
				return fail("DW_CFA_offset operand")
			}
			continue
		case 3: // DW_CFA_restore
			in.restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x01: // set_loc
			loc := c.pointer(cie.FDEEncoding, 0)
			if cie.FDEEncoding&0x70 == pePCRel {
				return &FormatError{at, "DW_CFA_set_loc with a PC-relative encoding", ErrBadEncoding}
			}
			in.advance(loc)
		case 0x02:
			in.advance(in.cur.Loc + uint64(c.u8())*caf)
		case 0x03:
			in.advance(in.cur.Loc + uint64(c.u16())*caf)
		case 0x04:
			in.advance(in.cur.Loc + uint64(c.u32())*caf)
		case 0x05: // offset_extended
			r := c.uleb()
			in.set(r, Rule{Kind: Offset, Offset: int64(c.uleb()) * daf})
		case 0x06: // restore_extended
			in.restore(c.uleb())
		case 0x07:
			in.set(c.uleb(), Rule{Kind: Undefined})
		case 0x08:
			in.set(c.uleb(), Rule{Kind: SameValue})
		case 0x09:
			r := c.uleb()
			in.set(r, Rule{Kind: Register, Reg: c.uleb()})
		case 0x0a: // remember_state
			if len(in.stack) >= maxStack {
				return &FormatError{at, fmt.Sprintf("more than %d nested DW_CFA_remember_state", maxStack), ErrStack}
			}
			in.stack = append(in.stack, in.cur.clone())
		case 0x0b: // restore_state
			if len(in.stack) == 0 {
				return &FormatError{at, "DW_CFA_restore_state without DW_CFA_remember_state", ErrStack}
			}
			top := in.stack[len(in.stack)-1]
			in.stack = in.stack[:len(in.stack)-1]
			loc := in.cur.Loc
			in.cur = top
			in.cur.Loc = loc
		case 0x0c: // def_cfa
			r := c.uleb()
			in.cur.CFA = Rule{Kind: RegOffset, Reg: r, Offset: int64(c.uleb())}
		case 0x0d: // def_cfa_register
			r := c.uleb()
			if in.cur.CFA.Kind != RegOffset {
				in.cur.CFA = Rule{Kind: RegOffset}
			}
			in.cur.CFA.Reg = r
		case 0x0e: // def_cfa_offset
			o := int64(c.uleb())
			if in.cur.CFA.Kind != RegOffset {
				in.cur.CFA = Rule{Kind: RegOffset}
			}
			in.cur.CFA.Offset = o
		case 0x0f: // def_cfa_expression
			in.cur.CFA = Rule{Kind: CFAExpression, Expr: c.block()}
		case 0x10: // expression
			r := c.uleb()
			in.set(r, Rule{Kind: Expression, Expr: c.block()})
		case 0x11: // offset_extended_sf
			r := c.uleb()
			in.set(r, Rule{Kind: Offset, Offset: c.sleb() * daf})
		case 0x12: // def_cfa_sf
			r := c.uleb()
			in.cur.CFA = Rule{Kind: RegOffset, Reg: r, Offset: c.sleb() * daf}
		case 0x13: // def_cfa_offset_sf
			o := c.sleb() * daf
			if in.cur.CFA.Kind != RegOffset {
				in.cur.CFA = Rule{Kind: RegOffset}
			}
			in.cur.CFA.Offset = o
		case 0x14: // val_offset
			r := c.uleb()
			in.set(r, Rule{Kind: ValOffset, Offset: int64(c.uleb()) * daf})
		case 0x15: // val_offset_sf
			r := c.uleb()
			in.set(r, Rule{Kind: ValOffset, Offset: c.sleb() * daf})
		case 0x16: // val_expression
			r := c.uleb()
			in.set(r, Rule{Kind: ValExpression, Expr: c.block()})
		case 0x2c, 0x2d: // AArch64 negate_ra_state(_with_pc); GNU_window_save elsewhere
			if !in.aarch64 {
				if op == 0x2c {
					return &FormatError{at, fmt.Sprintf("opcode 0x%02x", op), ErrBadOpcode}
				}
				break // SPARC register windows: nothing an SFrame target has
			}
			in.cur.RASigned = !in.cur.RASigned
		case 0x2e: // GNU_args_size
			c.uleb()
		case 0x2f: // GNU_negative_offset_extended
			r := c.uleb()
			in.set(r, Rule{Kind: Offset, Offset: -int64(c.uleb()) * daf})
		default:
			return &FormatError{at, fmt.Sprintf("opcode 0x%02x", op), ErrBadOpcode}
		}
		if c.err != nil {
			return fail(fmt.Sprintf("operands of opcode 0x%02x", op))
		}
	}
	return nil
}

func (c *cursor) block() []byte {
	n := c.uleb()
	if c.err != nil || n > uint64(len(c.b)-c.off) {
		c.err = ErrTruncated
		return nil
	}
	b := c.b[c.off : c.off+int(n)]
	c.off += int(n)
	return b
}

// At returns the row that holds at pc (the last with Loc <= pc), or false
// when pc is before the first.
func At(rows []Row, pc uint64) (Row, bool) {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Loc > pc }) - 1
	if i < 0 {
		return Row{}, false
	}
	return rows[i], true
}

// DWARF expression opcodes Simple reads.
const (
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConstu     = 0x10
	opConsts     = 0x11
	opMinus      = 0x1c
	opPlus       = 0x22
	opPlusUconst = 0x23
	opLit0       = 0x30
	opLit31      = 0x4f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opBregx      = 0x92
	opCFA        = 0x9c // DW_OP_call_frame_cfa
)

// Simple reads an expression of the form an SFrame rule can express:
// base + offset, optionally dereferenced, where base is a register
// (DW_OP_bregN, DW_OP_bregx) or, with cfaPushed (DW_CFA_expression,
// DW_CFA_val_expression push the CFA first) or DW_OP_call_frame_cfa, the
// CFA (reg -1). Constants may be added with DW_OP_plus_uconst or a
// constant and DW_OP_plus/DW_OP_minus. ok is false for anything else.
func Simple(expr []byte, cfaPushed bool, order binary.ByteOrder) (reg int64, off int64, deref bool, ok bool) {
	c := &cursor{b: expr, o: order}
	haveBase := cfaPushed
	implicit := cfaPushed // the CFA pushed for us, not yet used: a register may replace it
	reg = -1
	var pending *int64
	for c.off < len(expr) {
		op := c.u8()
		if implicit && (op >= opBreg0 && op <= opBreg31 || op == opBregx || op == opCFA) {
			haveBase = false
		}
		implicit = false
		switch {
		case op >= opBreg0 && op <= opBreg31 && !haveBase:
			reg, off, haveBase = int64(op-opBreg0), c.sleb(), true
		case op == opBregx && !haveBase:
			reg = int64(c.uleb())
			off, haveBase = c.sleb(), true
		case op == opCFA && !haveBase:
			reg, haveBase = -1, true
		case op == opPlusUconst && haveBase && !deref:
			off += int64(c.uleb())
		case op >= opLit0 && op <= opLit31 && pending == nil:
			v := int64(op - opLit0)
			pending = &v
		case (op == opConstu || op == opConst1u || op == opConst2u || op == opConst4u) && pending == nil:
			var v int64
			switch op {
			case opConstu:
				v = int64(c.uleb())
			case opConst1u:
				v = int64(c.u8())
			case opConst2u:
				v = int64(c.u16())
			default:
				v = int64(c.u32())
			}
			pending = &v
		case (op == opConsts || op == opConst1s || op == opConst2s || op == opConst4s) && pending == nil:
			var v int64
			switch op {
			case opConsts:
				v = c.sleb()
			case opConst1s:
				v = int64(int8(c.u8()))
			case opConst2s:
				v = int64(int16(c.u16()))
			default:
				v = int64(int32(c.u32()))
			}
			pending = &v
		case (op == opPlus || op == opMinus) && pending != nil && haveBase && !deref:
			if op == opPlus {
				off += *pending
			} else {
				off -= *pending
			}
			pending = nil
		case op == opDeref && haveBase && !deref && pending == nil:
			deref = true
		default:
			return 0, 0, false, false
		}
		if c.err != nil {
			return 0, 0, false, false
		}
	}
	return reg, off, deref, haveBase && pending == nil
}
