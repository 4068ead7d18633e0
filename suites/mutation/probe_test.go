package mutation_test

import (
	"fmt"

	"github.com/sfconform/sfconform/image"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// probeConsumer is the builtin consumer on the mutant, plus a witness of
// equivalence: at every step it evaluates the row the original table and
// the row the mutant table give for the PC on the live machine state, with
// its own small evaluator (not the unwinder under test), and records the
// first step where they disagree.
type probeConsumer struct {
	orig  *image.Image
	inner *consumer.Builtin

	abi       target.Target
	origT     *sframe.Table
	mutT      *sframe.Table
	mutErr    error
	differs   bool
	firstStep int
	firstPC   uint64
	firstWhy  string
}

func (p *probeConsumer) Name() string   { return "builtin" }
func (p *probeConsumer) BatchSize() int { return 1 }
func (p *probeConsumer) Close() error   { return nil }

func (p *probeConsumer) Supports(t target.Target, v int) error { return p.inner.Supports(t, v) }

func (p *probeConsumer) Load(img *image.Image) error {
	p.abi = img.Target
	var err error
	if p.origT, err = sframe.Decode(p.orig.SFrame, p.orig.SFrameAddr); err != nil {
		return fmt.Errorf("original section: %w", err)
	}
	p.mutT, p.mutErr = sframe.Decode(img.SFrame, img.SFrameAddr)
	if p.mutErr != nil {
		// A section that no longer decodes differs at every step.
		p.differs, p.firstStep, p.firstPC = true, 0, img.Entry
		p.firstWhy = "mutant section does not decode: " + p.mutErr.Error()
	}
	return p.inner.Load(img)
}

func (p *probeConsumer) Unwind(steps []consumer.Step, out []consumer.Result) error {
	for i := range steps {
		if p.differs {
			break
		}
		s := &steps[i]
		a := evaluate(p.abi, p.origT, s.Regs, s.Mem)
		b := "mutant section does not decode: " + fmt.Sprint(p.mutErr)
		if p.mutT != nil {
			b = evaluate(p.abi, p.mutT, s.Regs, s.Mem)
		}
		if a != b {
			p.differs, p.firstStep, p.firstPC = true, s.Index, s.Regs.PC
			p.firstWhy = fmt.Sprintf("original row gives %s; mutant gives %s", a, b)
		}
	}
	return p.inner.Unwind(steps, out)
}

// evaluate applies the row covering the PC to the machine state and says
// what it yields for the caller: CFA, RA and FP values, or why none.
func evaluate(abi target.Target, t *sframe.Table, regs *machine.Registers, mem machine.Memory) string {
	_, row, err := t.FindRow(regs.PC)
	if err != nil {
		return "no row"
	}
	if row.RA.Kind == sframe.RuleUndefined {
		return "outermost"
	}
	cfa, ok := value(row.CFA, 0, -1, regs, mem)
	if !ok {
		return "CFA unreadable"
	}
	lr := target.RegAArch64LR
	if abi == target.S390X {
		lr = target.RegS390XRA
	}
	ra, rok := value(row.RA, cfa, lr, regs, mem)
	fp, fok := value(row.FP, cfa, abi.FP(), regs, mem)
	return fmt.Sprintf("cfa=%#x ra=%#x/%v fp=%#x/%v", cfa, ra, rok, fp, fok)
}

// value evaluates one rule; home is the register a RuleSame value is
// still in (-1: none).
func value(r sframe.Rule, cfa uint64, home int, regs *machine.Registers, mem machine.Memory) (uint64, bool) {
	switch r.Kind {
	case sframe.RuleSame:
		return regs.Get(home)
	case sframe.RuleExpr:
		base := cfa
		if r.Reg != sframe.RegCFA {
			v, ok := regs.Get(r.Reg)
			if !ok {
				return 0, false
			}
			base = v
		}
		addr := base + uint64(r.Offset)
		if !r.Deref {
			return addr, true
		}
		return mem.ReadWord(addr)
	}
	return 0, false
}
