package gen

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
)

// Layout places the functions from base, in order, each followed by its Gap
// (gaps.go), and encodes
// every instruction; Far functions go contiguously from base + FarOffset
// instead. Control flow is PC-relative but for calls to and from far
// functions, which load the absolute address: laying out again at another
// base relocates the program, re-encoding those.
func (p *Program) Layout(base uint64) error { return p.LayoutAt(base, base+FarOffset) }

// LayoutAt is Layout with the far functions placed from farBase: programs
// linked together each get a far range of their own. farBase must be more
// than 4 GiB above base, as FarOffset is.
func (p *Program) LayoutAt(base, farBase uint64) error {
	if p.t == nil {
		return fmt.Errorf("gen: Layout of a Program that Generate did not make")
	}
	if a := uint64(p.t.codeAlign); base%a != 0 || farBase%a != 0 {
		return fmt.Errorf("gen: layout base 0x%x or far base 0x%x is not %d-byte aligned for %s", base, farBase, a, p.Target.Name())
	}
	if farBase < base || farBase-base <= 1<<32 {
		return fmt.Errorf("gen: far base 0x%x is not more than 4 GiB above base 0x%x", farBase, base)
	}
	for _, f := range p.Funcs {
		for _, o := range f.ops {
			if o.br != nil {
				o.br.short = o.br.relax
			}
		}
	}
	// Grow short branches whose displacement does not fit until nothing
	// changes, as GNU as relaxes them.
	addrs := make(map[string]uint64, len(p.Funcs))
	for {
		p.place(addrs, base, farBase)
		changed := false
		for _, f := range p.Funcs {
			for _, o := range f.ops {
				if o.br == nil || !o.br.short {
					continue
				}
				pc := f.Addr + uint64(o.off)
				tgt, ok := addrs[o.br.target]
				if !ok {
					return fmt.Errorf("gen: %s: branch to undefined %q", f.Name, o.br.target)
				}
				if _, err := o.br.enc(pc, tgt, true); err != nil {
					o.br.short, changed = false, true
				}
			}
		}
		if !changed {
			break
		}
	}
	p.Base = base
	// One array each for every function's instructions and rows, and the
	// code sized to fit: growing them function by function was most of
	// generation's allocated bytes. Each function gets a clipped window,
	// so that appending to one never writes into the next.
	nearSize, nops, nrows := 0, 0, 0
	for _, f := range p.Funcs {
		if !f.Far {
			nearSize += int(f.Size)
		}
		if !f.Idle {
			nops += len(f.ops)
			nrows += countRows(f.ops)
		}
	}
	p.Code = p.Code[:0]
	if cap(p.Code) < nearSize {
		p.Code = make([]byte, 0, nearSize)
	}
	p.FarBase, p.FarCode = 0, p.FarCode[:0]
	if cap(p.insnBuf) < nops {
		p.insnBuf = make([]Insn, nops)
	}
	if cap(p.rowBuf) < nrows {
		p.rowBuf = make([]sframe.Row, nrows)
	}
	insnBuf, rowBuf := p.insnBuf[:nops], p.rowBuf[:nrows]
	// Idle functions share their bodies' ops (idle.go), and so their
	// laid-out instructions and rows: a large table lays out each body
	// once.
	type laidOut struct {
		insns []Insn
		rows  []sframe.Row
	}
	idle := map[*op]laidOut{}
	for _, f := range p.Funcs {
		if f.Idle {
			if l, ok := idle[f.ops[0]]; ok {
				f.Insns, f.Rows = l.insns, l.rows
				for _, in := range l.insns {
					p.Code = append(p.Code, in.Bytes...)
				}
				continue
			}
			f.Insns, f.Rows = nil, nil // shared: never appended to in place
		} else {
			n, r := len(f.ops), countRows(f.ops)
			f.Insns, insnBuf = insnBuf[:0:n], insnBuf[n:]
			f.Rows, rowBuf = rowBuf[:0:r], rowBuf[r:]
		}
		if f.Far && p.FarBase == 0 {
			p.FarBase = f.Addr
		}
		for _, o := range f.ops {
			pc := f.Addr + uint64(o.off)
			bytes := o.bytes
			if o.br != nil {
				var err error
				bytes, err = o.br.enc(pc, addrs[o.br.target], o.br.short)
				if err != nil {
					return fmt.Errorf("gen: %s+0x%x %s: %w", f.Name, o.off, o.text, err)
				}
				if o.br.textAt != nil {
					o.text = o.br.textAt(addrs[o.br.target])
				}
			}
			row := o.row
			row.Start = o.off
			f.Insns = append(f.Insns, Insn{Off: o.off, Bytes: bytes, Text: o.text, Row: row, Call: o.call, Pad: o.pad})
			if n := len(f.Rows); n == 0 || !sameRule(f.Rows[n-1], row) {
				f.Rows = append(f.Rows, row)
			}
			if o.exit {
				p.Exit = pc
			}
			if f.Far {
				p.FarCode = append(p.FarCode, bytes...)
			} else {
				p.Code = append(p.Code, bytes...)
			}
		}
		f.Insns, f.Rows = slices.Clip(f.Insns), slices.Clip(f.Rows)
		if f.Idle {
			idle[f.ops[0]] = laidOut{f.Insns, f.Rows}
		}
		if f.Far {
			p.FarCode = append(p.FarCode, f.Gap...)
		} else {
			p.Code = append(p.Code, f.Gap...)
		}
	}
	p.Entry = p.Funcs[0].Addr
	return nil
}

// place assigns offsets and addresses with the current branch sizes and
// puts every symbol and label address in addrs, emptied first.
func (p *Program) place(addrs map[string]uint64, base, farBase uint64) {
	clear(addrs)
	near, far := base, farBase
	for _, f := range p.Funcs {
		pc := &near
		if f.Far {
			pc = &far
		}
		f.Addr = *pc
		if !f.Idle { // nothing branches to an idle function
			addrs[f.Name] = *pc
		}
		off := uint32(0)
		for _, o := range f.ops {
			o.off = off
			for _, l := range o.labels {
				addrs[l] = *pc + uint64(off)
			}
			off += uint32(o.size())
		}
		f.Size = off
		*pc += uint64(off) + uint64(len(f.Gap))
	}
}

// countRows is how many rows ops make: one per change of rule.
func countRows(ops []*op) int {
	n := 0
	for i, o := range ops {
		if i == 0 || !sameRule(ops[i-1].row, o.row) {
			n++
		}
	}
	return n
}

// sameRule compares rows ignoring Start.
func sameRule(a, b sframe.Row) bool {
	a.Start, b.Start = 0, 0
	return a == b
}

// FDEs returns the FDEs a producer writes for the program, with
// compressed rows: one per function, the entry stub included, except that
// a block of PLT-like stubs (Func.StubBlock) is one PCMASK FDE whose rows
// repeat every stub; the FDE of an EmptyFDE function has no rows.
func (p *Program) FDEs() []sframe.FDE {
	var out []sframe.FDE
	rows := p.rowArray()
	for i, f := range p.Funcs {
		if f.StubBlock != "" && i > 0 && p.Funcs[i-1].StubBlock == f.StubBlock {
			last := &out[len(out)-1]
			if f.Size != uint32(last.RepSize) || !slices.Equal(f.Rows, last.Rows) {
				panic(fmt.Sprintf("gen: stub %s differs from the first of its block %s", f.Name, f.StubBlock))
			}
			last.Size += f.Size
			continue
		}
		fde := sframe.FDE{Start: f.Addr, Size: f.Size, PCType: sframe.PCInc, PAuthKey: f.pauthKey(), Signal: f.signal()}
		if !f.EmptyFDE {
			fde.Rows, rows = copyRows(rows, f.Rows)
		}
		if f.StubBlock != "" {
			fde.PCType, fde.RepSize = sframe.PCMask, uint8(f.Size)
		}
		out = append(out, fde)
	}
	return out
}

// funcFDEs returns one PCINC FDE per function, stubs included: what GNU as
// makes of the assembly, where every stub is a function of its own.
func (p *Program) funcFDEs() []sframe.FDE {
	out := make([]sframe.FDE, len(p.Funcs))
	rows := p.rowArray()
	for i, f := range p.Funcs {
		out[i] = sframe.FDE{Start: f.Addr, Size: f.Size, PCType: sframe.PCInc, PAuthKey: f.pauthKey(), Signal: f.signal()}
		if !f.EmptyFDE {
			out[i].Rows, rows = copyRows(rows, f.Rows)
		}
	}
	return out
}

// rowArray is an empty slice with room for every function's rows: the
// FDEs' copies share it instead of one allocation each.
func (p *Program) rowArray() []sframe.Row {
	n := 0
	for _, f := range p.Funcs {
		n += len(f.Rows)
	}
	return make([]sframe.Row, 0, n)
}

// copyRows copies rows to the end of buf and returns the copy, clipped
// (nil for no rows, as appending to nil gives), and buf grown by it.
func copyRows(buf, rows []sframe.Row) (cp, grown []sframe.Row) {
	if len(rows) == 0 {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, rows...)
	return buf[start:len(buf):len(buf)], buf
}

// Segments returns the code placed apart from Code: the far segment, if
// some function is Far.
func (p *Program) Segments() []image.Segment {
	if len(p.FarCode) == 0 {
		return nil
	}
	return []image.Segment{{Addr: p.FarBase, Code: p.FarCode}}
}

// CodeAt returns the code from pc to the end of the segment holding it
// (Code or FarCode), or nil.
func (p *Program) CodeAt(pc uint64) []byte {
	switch {
	case pc >= p.Base && pc-p.Base < uint64(len(p.Code)):
		return p.Code[pc-p.Base:]
	case len(p.FarCode) > 0 && pc >= p.FarBase && pc-p.FarBase < uint64(len(p.FarCode)):
		return p.FarCode[pc-p.FarBase:]
	}
	return nil
}

// Stacks returns the fresh stacks the program's new-stack functions switch
// to, as symbols of kind stack: the oracle reads from them that a frame
// became the outermost one. They are absolute, the same wherever the code
// is laid out.
func (p *Program) Stacks() []image.Symbol {
	return slices.Clone(p.stacks)
}

// PathRegs returns, for every path, the initial argument registers by
// DWARF number.
func (p *Program) PathRegs() []map[int]uint64 {
	out := make([]map[int]uint64, len(p.ArgSets))
	for k, args := range p.ArgSets {
		m := make(map[int]uint64, len(p.ArgRegs))
		for i, r := range p.ArgRegs {
			m[r] = args[i]
		}
		out[k] = m
	}
	return out
}

// RuleRegs lists, in increasing order, the DWARF registers other than SP,
// FP and the return-address register that some row refers to.
func (p *Program) RuleRegs() []int {
	var out []int
	for _, f := range p.Funcs {
		out = sframe.RuleRegs(sframe.ABI(p.Target), f.Rows, out)
	}
	return out
}

// Symbols returns the function symbols in address order.
func (p *Program) Symbols() []image.Symbol {
	out := make([]image.Symbol, len(p.Funcs))
	for i, f := range p.Funcs {
		out[i] = image.Symbol{Name: f.Name, Addr: f.Addr, Size: f.Size, PartOf: f.PartOf, Kind: f.Kind}
	}
	// Far functions come after the rest in address order, not in Funcs.
	slices.SortStableFunc(out, func(a, b image.Symbol) int { return cmp.Compare(a.Addr, b.Addr) })
	return out
}

// Assembly renders the program as GNU as source. Its CFI directives are
// derived from the rows, so `as --gsframe` describes the same rules; the
// stub marks the RA column undefined (outermost frame). Function symbols
// are local, so GNU as resolves every branch itself.
func (p *Program) Assembly() string { return p.AssemblyWith(AsmOptions{}) }

// AsmOptions change how AssemblyWith renders a program, so that the text
// of several programs can make one source file.
type AsmOptions struct {
	// Prefix goes before every symbol and label name of the program (after
	// the ".L" of a local label): "p3_" renders f1_fp_frame as
	// p3_f1_fp_frame and .Lexit as .Lp3_exit. Two programs with distinct
	// prefixes define no name twice.
	Prefix string
	// InFile: the text goes into a file that says .cfi_sections itself
	// (it must come before any CFI of the file) and ends with
	// NoExecStack: the program renders those lines as comments, so that
	// the text keeps the lines of Assembly.
	InFile bool
	// PLT: the direct calls to PLT-like stubs call each stub's PLTName
	// through the PLT a linker makes, a global symbol defined as the
	// stub's target on the line that ends the stub (plt.go).
	PLT bool
}

// CFISections is the directive that sends the CFI to .debug_frame, which
// Assembly puts at the top of a program with far code: .eh_frame's 32-bit
// PC-relative function addresses cannot reach the far section (ld:
// "relocation truncated to fit"); .debug_frame's addresses are absolute,
// and --gsframe still builds .sframe from the CFI.
const CFISections = ".cfi_sections .debug_frame"

// AssemblyWith renders the program like Assembly, with o's changes. Its
// lines are Assembly's, one for one, whatever o says.
func (p *Program) AssemblyWith(o AsmOptions) string {
	t := p.t
	name := func(s string) string { return s }
	if o.Prefix != "" {
		name = func(s string) string {
			if rest, ok := strings.CutPrefix(s, ".L"); ok {
				return ".L" + o.Prefix + rest
			}
			return o.Prefix + s
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# sfconform program: target %s, seed %d\n", p.Target.Name(), p.Seed)
	if len(p.FarCode) > 0 {
		if o.InFile {
			sb.WriteString("# " + CFISections + " (at the top of the file)\n")
		} else {
			sb.WriteString("\t" + CFISections + "\n")
		}
	}
	sb.WriteString("\t.text\n")
	for _, f := range p.Funcs {
		if f.Far {
			fmt.Fprintf(&sb, "\t.pushsection %s,\"ax\",%cprogbits\n", FarSection, t.typeDirective[0])
		}
		startproc := ".cfi_startproc"
		if f.EmptyFDE {
			// No initial CFA rule and no directives: GNU as 2.47 writes
			// an FDE without FREs (2.40 and 2.44 write no FDE at all).
			startproc = ".cfi_startproc simple"
		}
		fn := name(f.Name)
		fmt.Fprintf(&sb, "\t.type %s, %s\n%s:\n\t%s\n", fn, t.typeDirective, fn, startproc)
		prev := t.initialRow()
		if len(f.ops) > 0 && f.ops[0].row.Signal {
			// An empty FDE keeps the flag: a trampoline's.
			sb.WriteString("\t.cfi_signal_frame\n")
		}
		if len(f.ops) > 0 && !f.EmptyFDE {
			first := f.ops[0].row
			if first.PAuthKey == sframe.PAuthKeyB {
				sb.WriteString("\t.cfi_b_key_frame\n")
			}
			prev.Signal, prev.PAuthKey = first.Signal, first.PAuthKey
		}
		for _, op := range f.ops {
			for _, l := range op.labels {
				fmt.Fprintf(&sb, "%s:\n", name(l))
			}
			if !f.EmptyFDE {
				for _, d := range t.cfiDiff(prev, op.row) {
					fmt.Fprintf(&sb, "\t%s\n", d)
				}
			}
			prev = op.row
			text := op.text
			switch {
			case o.PLT && p.pltCall(op):
				text = renameToken(text, op.br.target, name(PLTName(op.br.target))+t.pltSuffix())
			case op.br != nil && op.br.textAt == nil && o.Prefix != "":
				text = renameToken(text, op.br.target, name(op.br.target))
			}
			if op.pad > 1 {
				fmt.Fprintf(&sb, "\t.rept %d\n\t%s\n\t.endr\n", op.pad, text)
				continue
			}
			fmt.Fprintf(&sb, "\t%s\n", text)
		}
		alias := ""
		if o.PLT && f.StubBlock != "" {
			alias = t.pltAlias(f, name)
		}
		fmt.Fprintf(&sb, "\t.cfi_endproc\n\t.size %s, .-%s%s\n", fn, fn, alias)
		if len(f.Gap) > 0 {
			fmt.Fprintf(&sb, "# %s after %s, in no function\n\t.byte %s\n", f.After, fn, byteList(f.Gap))
		}
		if f.Far {
			sb.WriteString("\t.popsection\n")
		}
	}
	// The fresh stacks, as absolute data symbols a loader can read.
	for _, s := range p.stacks {
		sn := name(s.Name)
		fmt.Fprintf(&sb, "\t.set %s, 0x%x\n\t.type %s, %cobject\n\t.size %s, %d\n", sn, s.Addr, sn, t.typeDirective[0], sn, s.Size)
	}
	// The code needs no executable stack; saying so keeps ld quiet. A file
	// says it once (GNU as warns about the section type the second time).
	if o.InFile {
		sb.WriteString("# " + p.NoExecStack() + " (at the end of the file)\n")
	} else {
		fmt.Fprintf(&sb, "\t%s\n", p.NoExecStack())
	}
	return sb.String()
}

// byteList is b as .byte's operands.
func byteList(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "0x%02x", c)
	}
	return sb.String()
}

// NoExecStack is the directive that says the code needs no executable
// stack, in the target's syntax.
func (p *Program) NoExecStack() string {
	return fmt.Sprintf(".section .note.GNU-stack,\"\",%cprogbits", p.t.typeDirective[0])
}

// renameToken replaces the symbol old where it stands as a whole name in an
// instruction's text: not inside a longer name (f1 in f12), not a register
// (%r1).
func renameToken(text, old, new string) string {
	isName := func(c byte) bool {
		return c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	var sb strings.Builder
	i := 0
	for {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		j += i
		end := j + len(old)
		whole := (j == 0 || !isName(text[j-1]) && text[j-1] != '%') && (end == len(text) || !isName(text[end]))
		if whole {
			sb.WriteString(text[i:j])
			sb.WriteString(new)
		} else {
			sb.WriteString(text[i:end])
		}
		i = end
	}
	sb.WriteString(text[i:])
	return sb.String()
}

// initialRow is the rule at a function's first instruction, as the CIE
// GNU as writes for .cfi_startproc states it.
func (t *isa) initialRow() sframe.Row {
	return sframe.Row{
		CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: t.sp, Offset: t.entrySPOff},
		RA:  t.entryRA,
		FP:  sframe.Rule{Kind: sframe.RuleSame},
	}
}

// DWARF expression opcodes for a dereferenced CFA, and for a register
// saved at an address computed from another register.
const (
	dwCFADefCFAExpression = 0x0f
	dwCFAExpression       = 0x10
	dwOpBreg0             = 0x70
	dwOpDeref             = 0x06
)

// cfiEscape renders bytes as a .cfi_escape directive.
func cfiEscape(bytes ...byte) string {
	esc := make([]string, len(bytes))
	for i, x := range bytes {
		esc[i] = fmt.Sprintf("%#x", x)
	}
	return ".cfi_escape " + strings.Join(esc, ",")
}

// cfiDiff returns the directives that turn rule prev into next.
func (t *isa) cfiDiff(prev, next sframe.Row) []string {
	var out []string
	if next.CFA.Kind == sframe.RuleExpr && prev.CFA != next.CFA {
		switch {
		case next.CFA.Deref:
			// DW_CFA_def_cfa_expression: DW_OP_breg<reg> <off>; DW_OP_deref,
			// what compilers emit for a DRAP frame.
			expr := append([]byte{dwOpBreg0 + byte(next.CFA.Reg)}, sleb128(next.CFA.Offset)...)
			expr = append(expr, dwOpDeref)
			esc := []string{fmt.Sprintf("%#x", dwCFADefCFAExpression), fmt.Sprintf("%#x", len(expr))}
			for _, x := range expr {
				esc = append(esc, fmt.Sprintf("%#x", x))
			}
			out = append(out, ".cfi_escape "+strings.Join(esc, ","))
		case prev.CFA.Kind == sframe.RuleExpr && !prev.CFA.Deref && prev.CFA.Offset == next.CFA.Offset && !next.Signal:
			// (A signal trampoline's CFI says the CFA in full, as the
			// kernel's and glibc's trampolines write it.)
			out = append(out, fmt.Sprintf(".cfi_def_cfa_register %s", t.regName(next.CFA.Reg)))
		case prev.CFA.Kind == sframe.RuleExpr && !prev.CFA.Deref && prev.CFA.Reg == next.CFA.Reg:
			out = append(out, fmt.Sprintf(".cfi_def_cfa_offset %d", next.CFA.Offset))
		default:
			out = append(out, fmt.Sprintf(".cfi_def_cfa %s, %d", t.regName(next.CFA.Reg), next.CFA.Offset))
		}
	}
	col := func(reg int, a, b sframe.Rule) {
		if a == b {
			return
		}
		switch {
		case b.Kind == sframe.RuleUndefined:
			out = append(out, fmt.Sprintf(".cfi_undefined %s", t.regName(reg)))
		case b.Kind == sframe.RuleSame:
			out = append(out, fmt.Sprintf(".cfi_restore %s", t.regName(reg)))
		case b.Reg == sframe.RegCFA && b.Deref:
			out = append(out, fmt.Sprintf(".cfi_offset %s, %d", t.regName(reg), b.Offset))
		case b.Reg == sframe.RegCFA:
			out = append(out, fmt.Sprintf(".cfi_val_offset %s, %d", t.regName(reg), b.Offset))
		case !b.Deref && b.Offset == 0:
			out = append(out, fmt.Sprintf(".cfi_register %s, %s", t.regName(reg), t.regName(b.Reg)))
		case b.Deref && b.Reg < 32 && reg < 128:
			// DW_CFA_expression reg: DW_OP_breg<base> <off>, the value saved
			// at an address no fixed distance from the CFA (GCC's frame
			// pointer in a DRAP frame: DW_OP_breg6 0).
			expr := append([]byte{dwOpBreg0 + byte(b.Reg)}, sleb128(b.Offset)...)
			out = append(out, cfiEscape(append([]byte{dwCFAExpression, byte(reg), byte(len(expr))}, expr...)...))
		default:
			panic(fmt.Sprintf("gen: no CFI directive for rule %+v of %s", b, t.regName(reg)))
		}
	}
	col(t.ra, prev.RA, next.RA)
	col(t.fp, prev.FP, next.FP)
	if prev.MangledRA != next.MangledRA {
		out = append(out, ".cfi_negate_ra_state")
	}
	return out
}

// sleb128 encodes v as a DWARF signed LEB128.
func sleb128(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// signal is the function's signal flag: function-wide (builder.signal), so
// every row carries it.
func (f *Func) signal() bool { return len(f.Rows) > 0 && f.Rows[0].Signal }

// pauthKey is the key that signs the function's RA: function-wide
// (builder.key), so every row carries it.
func (f *Func) pauthKey() sframe.PAuthKey {
	if len(f.Rows) > 0 {
		return f.Rows[0].PAuthKey
	}
	return sframe.PAuthKeyA
}
