package gen

import (
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/image"
)

// The new-stack pattern: outermost rows in the middle of a function's
// life. The function sets up a frame and makes its first calls as usual;
// then, on two argument bits, instead of returning it switches SP to a fresh
// stack of its own (as a thread start or a clone child runs on a stack
// nobody returns through), marks the RA undefined from there on
// (.cfi_undefined of the RA column: SFrame rows without data words,
// version 2 erratum 2 and version 3), clears the frame pointer, makes its
// remaining calls on the new stack, and ends the program with a jump to
// the entry stub's exit instruction.
//
// The stacks live in the emulator's stack region, below the stack every
// run starts on. There is one per call level: a function at level L
// switches to stack L, which no other active function can be using (calls
// only go to deeper levels, so at most one function of a level is active,
// and a nested switch is always to a deeper level's stack). Each is
// AltStackSize, as much as the deepest chain of large frames needs (s390x
// frames of 256 KiB among them), and a gap lies between them so that an
// overrun lands nowhere rather than in the next stack, where it would read
// as a switch to it. The image declares each stack used as a symbol of
// kind stack (Program.Stacks), which is all the oracle needs to see the
// frame become the outermost one.

const (
	// AltStackTop is the empty end of the level 1 stack, 2 MiB below the
	// SP every run starts with (emu.InitialSP), inside the emulator's 16
	// MiB stack region.
	AltStackTop = 0x70e0_0000
	// AltStackSize is the size of each fresh stack.
	AltStackSize = 1 << 20
	// maxAltStacks is the deepest call level a new-stack function may
	// have (the planner places none deeper).
	maxAltStacks   = 8
	altStackStride = AltStackSize + 64<<10
	// AltStackBottom is the lowest address a fresh stack may use.
	AltStackBottom = AltStackTop - maxAltStacks*altStackStride
)

var newStackSkeleton = &pattern{
	name: "new-stack",
	doc: "on two argument bits, switches to a fresh stack (thread start, clone child): the RA is undefined from there on, " +
		"calls run on the new stack, then the program exits",
	calls:         true,
	epilogueCalls: true,
	earlyExit:     true, // the chain call goes before the switch
	switchesStack: true,
	build:         buildNewStack,
}

// buildNewStack: the switch happens when two argument bits say so, on a
// quarter of the paths: a run that takes it ends there, and skips what the
// callers would have done after, so taking it on every other path would
// cost the default mix a fifth of its executed instructions.
//
// The code on the new stack comes last in the function: GNU as 2.47 for
// x86-64 keeps the RA undefined after ".cfi_undefined %rip" whatever
// follows (".cfi_offset %rip, -8" and ".cfi_restore %rip" do not bring it
// back; only ".cfi_restore_state" does), so rows that describe a frame
// again after the outermost ones would read wrong through it.
func buildNewStack(b *builder, f *plan) {
	p := &b.t.prims
	p.fpSetup(b)
	b.calls(posPrologue)
	b.body()
	stay, away := b.newLabel(), b.newLabel()
	b.cond(stay)
	b.cond(away)
	b.place(stay)
	saved := b.st
	b.calls(posBody)
	b.calls(posEpilogue)
	p.fpTeardowns[b.rng.IntN(len(p.fpTeardowns))](b)
	p.ret(b)

	b.st = saved
	b.place(away)
	p.newStack(b, b.prog.newStack(b.plan.level))
	b.t.filler(b)
	b.calls(posBody)
	b.calls(posEpilogue)
	p.tailJump(b, b.prog.exitLabel())
}

// newStack returns the top of the fresh stack of call level level,
// declaring it once.
func (p *Program) newStack(level int) uint64 {
	if level < 1 || level > maxAltStacks {
		panic(fmt.Sprintf("a new-stack function at level %d: only levels 1..%d have stacks", level, maxAltStacks))
	}
	top := uint64(AltStackTop - (level-1)*altStackStride)
	name := fmt.Sprintf("stack_level%d", level)
	if !slices.ContainsFunc(p.stacks, func(s image.Symbol) bool { return s.Name == name }) {
		p.stacks = append(p.stacks, image.Symbol{Name: name, Addr: top - AltStackSize, Size: AltStackSize, Kind: image.KindStack})
	}
	return top
}

// exitLabel names the entry stub's exit instruction, for a jump that ends
// the program; the first call defines it.
func (p *Program) exitLabel() string {
	const name = ".L_start_exit"
	for _, o := range p.Funcs[0].ops {
		if o.exit {
			for _, l := range o.labels {
				if l == name {
					return name
				}
			}
			o.labels = append(o.labels, name)
			return name
		}
	}
	panic("the entry stub has no exit instruction")
}
