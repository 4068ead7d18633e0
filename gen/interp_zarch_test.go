package gen_test

import (
	"fmt"
	"strconv"
	"strings"
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

func (m *machine) stepS390x(mn string, ops []string, next uint64) (control, uint64) {
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
		m.reg[r(ops[0])] = m.mem[addr(ops[1])]
	case "stmg", "lmg":
		a := addr(ops[2])
		for i := rnum(ops[0]); i <= rnum(ops[1]); i++ {
			name := fmt.Sprintf("r%d", i)
			if mn == "stmg" {
				m.mem[a] = m.reg[name]
			} else {
				m.reg[name] = m.mem[a]
			}
			a += 8
		}
	default:
		panic("s390x instruction the interpreter does not know: " + mn)
	}
	return ctlNext, 0
}
