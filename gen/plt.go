package gen

import (
	"cmp"
	"fmt"
	"slices"
)

// The PLT rendering (AsmOptions.PLT): the calls to a block of PLT-like
// stubs go through a PLT the linker makes instead, so that a real
// linker's own SFrame description of its .plt is what gets judged.
//
// A stub's job is to jump on to its target. In the PLT rendering every
// direct call to stub S calls S.ext through the PLT (call S.ext@PLT,
// brasl %r14,S.ext@PLT, bl S.ext), where S.ext is a global symbol of
// default visibility equal to S's target; a program linked as a shared
// object then binds those calls through one PLT entry per stub, whose GOT
// slot the loader fills with S.ext's address: the call enters the PLT
// entry, which jumps on to the target, exactly as the call entered the
// stub and the stub jumped on. Everything else is unchanged, the stubs
// included: tail jumps and far calls still reach them, and the code keeps
// its layout but for the displacements of the calls that now reach the
// PLT (CodeWithCalls). The symbols gen's own code branches to stay local,
// so nothing else binds through the PLT or needs a dynamic relocation.

// PLTName is the global symbol a call to the stub named stub binds
// through in the PLT rendering: the stub's target under another name.
func PLTName(stub string) string { return stub + ".ext" }

// PLTStubs returns the stubs some direct call reaches, in address order:
// in the PLT rendering each one gets a PLT entry, and the calls to it
// reach that entry instead.
func (p *Program) PLTStubs() []string {
	var out []string
	for _, f := range p.Funcs {
		for _, o := range f.ops {
			if p.pltCall(o) && !slices.Contains(out, o.br.target) {
				out = append(out, o.br.target)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(p.funcNamed(a).Addr, p.funcNamed(b).Addr) })
	return out
}

// pltCall reports whether o is a call the PLT rendering sends through the
// PLT: a direct call (not a far call through a register) to a stub.
func (p *Program) pltCall(o *op) bool {
	if !o.call || o.br == nil || o.br.textAt != nil {
		return false
	}
	f := p.funcNamed(o.br.target)
	return f != nil && f.StubBlock != ""
}

func (p *Program) funcNamed(name string) *Func {
	for _, f := range p.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// StubTarget is the function the stub named stub jumps on to, the one its
// PLT name stands for; "" when stub is no stub of the program.
func (p *Program) StubTarget(stub string) string {
	f := p.funcNamed(stub)
	if f == nil || f.StubBlock == "" {
		return ""
	}
	return stubTarget(f)
}

// stubTarget is where the stub f jumps on to: the target of its last
// branch.
func stubTarget(f *Func) string {
	for i := len(f.ops) - 1; i >= 0; i-- {
		if br := f.ops[i].br; br != nil {
			return br.target
		}
	}
	panic(fmt.Sprintf("gen: stub %s has no jump", f.Name))
}

// pltSuffix is what follows a symbol called through the PLT: GNU as for
// x86-64 and s390x needs the @PLT operator for a call to a symbol another
// object may define; AArch64's bl takes the symbol alone (R_AARCH64_CALL26,
// which the linker routes through the PLT).
func (t *isa) pltSuffix() string {
	if t.abi.IsAArch64() {
		return ""
	}
	return "@PLT"
}

// pltAlias is the text that defines the stub f's PLT name, appended to
// the line that ends f (';' separates statements on every target), so
// that the rendering keeps Assembly's lines.
func (t *isa) pltAlias(f *Func, name func(string) string) string {
	a := name(PLTName(f.Name))
	return fmt.Sprintf("; .globl %s; .type %s, %s; .set %s, %s", a, a, t.typeDirective, a, name(stubTarget(f)))
}

// CodeWithCalls returns the program's code (Code, not the far segment)
// with every direct call to a function named in to encoded as a call to
// that address instead: what a linker makes of the PLT rendering, given
// each stub's PLT entry. A call that cannot reach its new target is an
// error.
func (p *Program) CodeWithCalls(to map[string]uint64) ([]byte, error) {
	code := slices.Clone(p.Code)
	for _, f := range p.Funcs {
		if f.Far {
			continue
		}
		for _, o := range f.ops {
			if !o.call || o.br == nil || o.br.textAt != nil {
				continue
			}
			tgt, ok := to[o.br.target]
			if !ok {
				continue
			}
			pc := f.Addr + uint64(o.off)
			b, err := o.br.enc(pc, tgt, o.br.short)
			if err != nil {
				return nil, fmt.Errorf("gen: %s+0x%x %s to 0x%x: %w", f.Name, o.off, o.text, tgt, err)
			}
			if len(b) != o.size() {
				return nil, fmt.Errorf("gen: %s+0x%x %s to 0x%x takes %d bytes, not %d", f.Name, o.off, o.text, tgt, len(b), o.size())
			}
			copy(code[pc-p.Base:], b)
		}
	}
	return code, nil
}
