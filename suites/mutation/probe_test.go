package mutation_test

import (
	"fmt"

	"github.com/sfconform/sfconform/image"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// view is one way of seeing the original and the mutant side by side:
// the suite's reader over both sections' bytes, or the rows themselves
// before encoding.
type view struct {
	name      string
	orig, mut *frameTable
	mutErr    error // the mutant's bytes do not read
	// origW and mutW walk the two tables with the suite's unwinder.
	origW, mutW *walker
}

// probeConsumer is the builtin consumer on the mutant, plus a witness of
// equivalence: at every step it unwinds, in every view, the whole
// backtrace by the original table and by the mutant with the suite's own
// reader and unwinder (never the decoder or unwinder under test), and
// records the first step where they differ. It also keeps the older,
// weaker judgement (the row covering the topmost PC evaluated alone), to
// count the faults that differ only deeper down.
type probeConsumer struct {
	views []view
	inner *consumer.Builtin

	abi       target.Target
	differs   bool
	firstStep int
	firstPC   uint64
	firstWhy  string
	// topDiffers: the topmost frame's row yields something else at some
	// step.
	topDiffers bool

	bufA, bufB []frame.Frame
}

// newProbe builds the views of a mutant. Every mutant is seen through the
// reader; a row-level mutant (rows != nil) also at the row level, so that
// neither the encoder nor the reader can hide a change it was asked for.
func newProbe(in *mutationInput, m *mutant) (*probeConsumer, error) {
	p := &probeConsumer{abi: in.abi, inner: consumer.NewBuiltin()}
	orig, err := readSFrame(in.img.SFrame, in.img.SFrameAddr)
	if err != nil {
		return nil, fmt.Errorf("the suite's reader cannot read the original section: %w", err)
	}
	bytesView := view{name: "section bytes", orig: orig}
	bytesView.mut, bytesView.mutErr = readSFrame(m.img.SFrame, m.img.SFrameAddr)
	p.views = append(p.views, bytesView)
	if m.rows != nil {
		p.views = append(p.views, view{name: "rows before encoding",
			orig: tableFromRows(in.abi, in.v, in.prog.FDEs()), mut: tableFromRows(in.abi, in.v, m.rows)})
	}
	for i := range p.views {
		v := &p.views[i]
		v.origW = newWalker(v.orig, in.abi, intact)
		if v.mut != nil {
			v.mutW = newWalker(v.mut, in.abi, intact)
		}
	}
	return p, nil
}

func (p *probeConsumer) Name() string   { return "builtin" }
func (p *probeConsumer) BatchSize() int { return 1 }
func (p *probeConsumer) Close() error   { return nil }

func (p *probeConsumer) Supports(t target.Target, v int) error { return p.inner.Supports(t, v) }

func (p *probeConsumer) Load(img *image.Image) error {
	for _, v := range p.views {
		if v.mutErr != nil {
			// A section that no longer reads differs at every step.
			p.differs, p.topDiffers, p.firstStep, p.firstPC = true, true, 0, img.Entry
			p.firstWhy = "mutant section does not read: " + v.mutErr.Error()
		}
	}
	return p.inner.Load(img)
}

func (p *probeConsumer) Unwind(steps []consumer.Step, out []consumer.Result) error {
	for i := range steps {
		s := &steps[i]
		for _, v := range p.views {
			if v.mut == nil {
				continue // does not read: differs already
			}
			if !p.topDiffers && evaluate(p.abi, v.orig, s.Regs, s.Mem) != evaluate(p.abi, v.mut, s.Regs, s.Mem) {
				p.topDiffers = true
			}
			if p.differs {
				continue
			}
			var a, b consumer.Result
			p.bufA, a.Err = v.origW.backtrace(s.Regs, s.Mem, p.bufA[:0])
			p.bufB, b.Err = v.mutW.backtrace(s.Regs, s.Mem, p.bufB[:0])
			a.Frames, b.Frames = p.bufA, p.bufB
			if why := backtraceDiff(a, b); why != "" {
				p.differs, p.firstStep, p.firstPC = true, s.Index, s.Regs.PC
				p.firstWhy = fmt.Sprintf("%s: the backtraces by the original and by the mutant differ: %s", v.name, why)
			}
		}
	}
	return p.inner.Unwind(steps, out)
}

// evaluate applies the row covering the PC to the machine state and says
// what it yields for the caller: CFA, RA and FP values, or why none.
func evaluate(abi target.Target, t *frameTable, regs *machine.Registers, mem machine.Memory) string {
	row, ok := t.find(regs.PC)
	if !ok {
		return "no row"
	}
	if row.signal {
		// The rows of a signal trampoline are not what unwinds it: its
		// caller is the interrupted context in the signal frame.
		return "signal frame"
	}
	if row.outermost {
		return "outermost"
	}
	cfa, ok := value(row.cfa, 0, -1, regs, mem)
	if !ok {
		return "CFA unreadable"
	}
	lr := -1 // x86-64 keeps no return address in a register
	switch abi {
	case target.AArch64, target.AArch64BE:
		lr = target.RegAArch64LR
	case target.S390X:
		lr = target.RegS390XRA
	}
	ra, rok := value(row.ra, cfa, lr, regs, mem)
	fp, fok := value(row.fp, cfa, abi.FP(), regs, mem)
	return fmt.Sprintf("cfa=%#x ra=%#x/%v fp=%#x/%v", cfa, ra, rok, fp, fok)
}

// value evaluates one rule; home is the register a sameReg value is still
// in (-1: none). A CFA rule has no CFA to be relative to (cfa is 0 then,
// and never used: a CFA rule always names a register).
func value(r rule, cfa uint64, home int, regs *machine.Registers, mem machine.Memory) (uint64, bool) {
	switch r.kind {
	case sameReg:
		return regs.Get(home)
	case atAddr:
		base := cfa
		if r.reg != atCFA {
			v, ok := regs.Get(r.reg)
			if !ok {
				return 0, false
			}
			base = v
		}
		addr := base + uint64(r.off)
		if !r.deref {
			return addr, true
		}
		return mem.ReadWord(addr)
	}
	return 0, false
}

// tableFromRows is the row-level view: gen's rows (or a mutant's) as the
// reader's table, mapped rule for rule from the sframe package's
// vocabulary types. Nothing here decodes or looks up.
func tableFromRows(abi target.Target, v sframe.Version, fdes []sframe.FDE) *frameTable {
	t := &frameTable{abi: abi, version: byte(v)}
	conv := func(r sframe.Rule) rule {
		switch r.Kind {
		case sframe.RuleSame:
			return rule{kind: sameReg}
		case sframe.RuleExpr:
			x := rule{kind: atAddr, reg: r.Reg, off: r.Offset, deref: r.Deref}
			if r.Reg == sframe.RegCFA {
				x.reg = atCFA
			}
			return x
		}
		return rule{kind: undefined}
	}
	for _, f := range fdes {
		fn := function{start: f.Start, size: f.Size, mask: f.PCType == sframe.PCMask, rep: f.RepSize, flex: f.Type == sframe.FDETypeFlex,
			signal: f.Signal && v == sframe.Version3}
		for _, r := range f.Rows {
			fn.rows = append(fn.rows, row{start: r.Start, outermost: r.RA.Kind == sframe.RuleUndefined, mangled: r.MangledRA,
				cfa: conv(r.CFA), ra: conv(r.RA), fp: conv(r.FP), signal: fn.signal})
		}
		t.fns = append(t.fns, fn)
	}
	return t
}
