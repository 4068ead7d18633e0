package gen

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// isa is everything gen knows about one ABI: registers, the state at a
// function's entry, the call discipline, the instruction helpers the
// patterns share, and the pattern catalog.
type isa struct {
	abi        target.Target
	sp, fp, ra int // DWARF numbers; ra is the return-address column
	entrySPOff int64
	entryRA    sframe.Rule
	argRegs    []int // DWARF numbers
	testBits   int   // bits a conditional branch may test
	codeAlign  int

	typeDirective string
	regName       func(dwarf int) string

	// callOK says whether a call is legal in this frame state.
	callOK func(st *frame) error
	// testBranch emits a test of bit of argument register arg and a
	// branch to label taken when the bit is set (set) or clear (!set).
	testBranch func(b *builder, arg, bit int, set bool, label string)
	call       func(b *builder, fn string)
	stub       func(b *builder, root string)
	filler     func(b *builder)
	loop       func(b *builder, n int)

	patterns []*pattern
}

// pattern is one catalog entry: a way to build a function. Adding a pattern
// is adding an entry to a target's catalog.
type pattern struct {
	name          string
	calls         bool // may call other functions
	tail          bool // leaves through a tail call
	epilogueCalls bool // has a legal call position inside the epilogue
	earlyExit     bool // may return before its posBody calls
	build         func(b *builder, f *plan)
}

var isas = []*isa{amd64Target(), arm64Target(target.AArch64), arm64Target(target.AArch64BE), s390xTarget()}

func isaFor(abi target.Target) *isa {
	for _, t := range isas {
		if t.abi == abi {
			return t
		}
	}
	return nil
}

// calls emits the plan's calls at position pos, each conditional one
// skipped by a branch on an argument bit.
func (b *builder) calls(pos callPos) {
	for _, c := range b.plan.calls {
		if c.pos != pos {
			continue
		}
		if c.cond {
			skip := b.newLabel()
			b.cond(skip)
			b.checkCall()
			b.t.call(b, c.target)
			b.place(skip)
			continue
		}
		b.checkCall()
		b.t.call(b, c.target)
	}
}

// body emits the plan's filler instructions and loop.
func (b *builder) body() {
	for i := 0; i < b.plan.fillers; i++ {
		b.t.filler(b)
	}
	if b.plan.loop > 0 {
		b.t.loop(b, b.plan.loop)
	}
}

var errNoRA = errors.New("the return address is only in the link register")

func alignErr(spOff int64, align int64) error {
	if spOff%align != 0 {
		return fmt.Errorf("CFA-SP = %d is not a multiple of %d", spOff, align)
	}
	return nil
}
