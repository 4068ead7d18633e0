package gen_test

import (
	"fmt"
	"strconv"
	"strings"
)

// The interpreter's s390x instructions, in the disassembler's syntax.

func (m *machine) stepS390x(mn string, ops []string, next uint64) (control, uint64) {
	r := func(s string) string { return strings.TrimPrefix(s, "%") }
	rnum := func(s string) int { n, _ := strconv.Atoi(strings.TrimPrefix(s, "%r")); return n }
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
	case "lgr":
		m.reg[r(ops[0])] = m.reg[r(ops[1])]
	case "ngr":
		m.reg[r(ops[0])] &= m.reg[r(ops[1])]
	case "stmg", "lmg":
		mm := memRef.FindStringSubmatch(ops[2])
		a := m.reg[mm[2]] + num(mm[1])
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
