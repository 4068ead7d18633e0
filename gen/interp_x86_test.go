package gen_test

import (
	"strings"
)

// The interpreter's x86-64 instructions, in the disassembler's AT&T syntax.

func (m *machine) stepX86(mn string, ops []string, next uint64) (control, uint64) {
	switch mn {
	case "nop":
	case "hlt":
		return ctlHalt, 0
	case "push":
		r, _ := x86Reg(ops[0])
		m.push(m.reg[r])
	case "pop":
		r, _ := x86Reg(ops[0])
		m.reg[r] = m.pop()
	case "leave", "leaveq":
		m.reg["rsp"] = m.reg["rbp"]
		m.reg["rbp"] = m.pop()
	case "ret", "retq":
		return ctlRet, m.pop()
	case "call", "callq":
		m.push(next)
		if r, ok := strings.CutPrefix(ops[0], "*"); ok {
			r, _ = x86Reg(r)
			return ctlCall, m.reg[r]
		}
		return ctlCall, num(ops[0])
	case "jmp", "jmpq":
		return ctlJump, num(ops[0])
	case "je", "jne":
		if m.zf == (mn == "je") {
			return ctlJump, num(ops[0])
		}
	case "mov", "add", "sub", "and", "xor", "test":
		dst, half := x86Reg(ops[1])
		var src uint64
		switch {
		case strings.HasPrefix(ops[0], "$"):
			src = num(ops[0])
		case memRef.MatchString(ops[0]):
			mm := memRef.FindStringSubmatch(ops[0])
			var disp uint64
			if mm[1] != "" {
				disp = num(mm[1])
			}
			src = m.mem[m.reg[mm[2]]+disp]
		default:
			r, _ := x86Reg(ops[0])
			src = m.reg[r]
		}
		v := m.reg[dst]
		switch mn {
		case "mov":
			v = src
		case "add":
			v += src
		case "sub":
			v -= src
		case "and":
			v &= src
		case "xor":
			v ^= src
		case "test":
			m.zf = v&src&0xffffffff == 0
			return ctlNext, 0
		}
		if half {
			v &= 0xffffffff
		}
		m.zf = v == 0
		m.reg[dst] = v
	default:
		panic("x86-64 instruction the interpreter does not know: " + mn)
	}
	return ctlNext, 0
}
