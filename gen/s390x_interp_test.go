package gen_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/target"
)

// The interpreter's s390x instructions, in the disassembler's syntax.

// s390xFPRs is the s390x ELF ABI's DWARF order of the floating-point
// registers: DWARF 16+i is f<s390xFPRs[i]>.
var s390xFPRs = [16]int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}

func s390xDwarfName(r int) string {
	if r >= 16 && r < 32 {
		return fmt.Sprintf("f%d", s390xFPRs[r-16])
	}
	return fmt.Sprintf("r%d", r)
}

func (m *machine) stepS390X(mn string, ops []string, next uint64) (control, uint64) {
	r := func(s string) string { return strings.TrimPrefix(s, "%") }
	rnum := func(s string) int { n, _ := strconv.Atoi(strings.TrimPrefix(s, "%r")); return n }
	// addr evaluates a D(B) operand.
	addr := func(s string) uint64 {
		mm := memRef.FindStringSubmatch(s)
		if mm == nil {
			panic("s390x operand is not D(B): " + s)
		}
		var d uint64
		if mm[1] != "" {
			d = num(mm[1])
		}
		return m.reg[mm[2]] + d
	}
	// load reads a word a store of this run wrote: a load from anywhere
	// else is a wrong displacement, not a zero.
	load := func(a uint64) uint64 {
		v, ok := m.mem[a]
		if !ok {
			panic(fmt.Sprintf("s390x %s loads from 0x%x, which nothing stored to", mn, a))
		}
		return v
	}
	switch mn {
	case "nopr":
	case "svc":
		return ctlHalt, 0
	case "br":
		return ctlRet, m.reg[r(ops[0])]
	case "brasl":
		m.reg[r(ops[0])] = next
		return ctlCall, num(ops[1])
	case "jg", "j":
		return ctlJump, num(ops[0])
	case "je", "jne":
		if m.zf == (mn == "je") {
			return ctlJump, num(ops[0])
		}
	case "brctg":
		m.reg[r(ops[0])]--
		if m.reg[r(ops[0])] != 0 {
			return ctlJump, num(ops[1])
		}
	case "tmll":
		m.zf = m.reg[r(ops[0])]&num(ops[1])&0xffff == 0
	case "lghi", "lgfi":
		m.reg[r(ops[0])] = num(ops[1])
	case "llihf":
		m.reg[r(ops[0])] = num(ops[1]) << 32
	case "iilf":
		m.reg[r(ops[0])] = m.reg[r(ops[0])]&^0xffffffff | num(ops[1])&0xffffffff
	case "basr":
		m.reg[r(ops[0])] = next
		return ctlCall, m.reg[r(ops[1])]
	case "aghi":
		m.reg[r(ops[0])] += num(ops[1])
	case "slgfi":
		m.reg[r(ops[0])] -= num(ops[1]) & 0xffffffff
	case "algfi":
		m.reg[r(ops[0])] += num(ops[1]) & 0xffffffff
	case "lgr", "ldgr", "lgdr":
		// ldgr and lgdr copy the 64 bits between a GPR and an FPR.
		m.reg[r(ops[0])] = m.reg[r(ops[1])]
	case "ngr":
		m.reg[r(ops[0])] &= m.reg[r(ops[1])]
	case "la", "lay":
		m.reg[r(ops[0])] = addr(ops[1])
	case "stg", "std":
		m.mem[addr(ops[1])] = m.reg[r(ops[0])]
	case "lg":
		m.reg[r(ops[0])] = load(addr(ops[1]))
	case "stmg", "lmg":
		a := addr(ops[2])
		for i := rnum(ops[0]); i <= rnum(ops[1]); i++ {
			name := fmt.Sprintf("r%d", i)
			if mn == "stmg" {
				m.mem[a] = m.reg[name]
			} else {
				m.reg[name] = load(a)
			}
			a += 8
		}
	default:
		panic("s390x instruction the interpreter does not know: " + mn)
	}
	return ctlNext, 0
}

// TestS390XStackFits runs deep s390x programs, whose frames reach 256
// KiB, and requires their stack to fit the room the emulator's stack
// region leaves the stack a run starts on: from the initial SP
// (emu.InitialSP, 0x70fff000) down to the fresh stacks of new-stack
// functions (gen.AltStackTop) and the 64 KiB gap above them.
func TestS390XStackFits(t *testing.T) {
	t.Parallel()
	const room = 0x70fff000 - (gen.AltStackTop + 64<<10)
	deepest := uint64(0)
	for _, seed := range testSeeds(t, 10) {
		for _, opt := range []gen.Options{
			{Funcs: 40, MaxDepth: 40},
			{Funcs: 40, MaxDepth: 40, Patterns: []string{"lay"}},
			{Funcs: 12, MaxDepth: 6, Patterns: []string{"lay", "cfa-edges"}},
		} {
			p, err := gen.Generate(target.S390X, seed, opt)
			if err != nil {
				t.Fatal(err)
			}
			used := stackTop - 0x24 - run(t, p, p.Args).minSP
			deepest = max(deepest, used)
			if used > room {
				t.Errorf("seed %d %+v: the stack reaches %d bytes below the initial SP, the emulator has %d", seed, opt, used, room)
			}
		}
	}
	t.Logf("deepest stack: %d bytes", deepest)
}
