package gen_test

import (
	"fmt"
	"strings"
)

// The interpreter's x86-64 instructions, in the disassembler's AT&T syntax.

func (m *machine) stepAMD64(mn string, ops []string, next uint64) (control, uint64) {
	switch mn {
	case "nop":
	case "hlt":
		return ctlHalt, 0
	case "push", "pushq":
		m.push(m.amd64Src(ops[0]))
	case "pop":
		r, _ := amd64Reg(ops[0])
		m.reg[r] = m.pop()
	case "leave", "leaveq":
		m.reg["rsp"] = m.reg["rbp"]
		m.reg["rbp"] = m.pop()
	case "ret", "retq":
		return ctlRet, m.pop()
	case "call", "callq":
		m.push(next)
		if r, ok := strings.CutPrefix(ops[0], "*"); ok {
			r, _ = amd64Reg(r)
			return ctlCall, m.reg[r]
		}
		return ctlCall, num(ops[0])
	case "jmp", "jmpq":
		if r, ok := strings.CutPrefix(ops[0], "*"); ok {
			// gen's only indirect jump returns through the register the
			// return address was popped into; run checks that it goes to
			// the return address.
			return ctlRet, m.amd64Src(r)
		}
		return ctlJump, num(ops[0])
	case "je", "jne":
		if m.zf == (mn == "je") {
			return ctlJump, num(ops[0])
		}
	case "lea":
		dst, _ := amd64Reg(ops[1])
		m.reg[dst] = m.amd64Addr(ops[0])
	case "mov", "add", "sub", "and", "xor", "test":
		src := m.amd64Src(ops[0])
		if memRef.MatchString(ops[1]) {
			if mn != "mov" {
				panic("x86-64 memory destination the interpreter does not know: " + mn)
			}
			if r, half := amd64Reg(ops[0]); half || !strings.HasPrefix(ops[0], "%") {
				panic(fmt.Sprintf("x86-64 store of a 32-bit or immediate value (%s) to the interpreter's 64-bit words", r))
			}
			m.mem[m.amd64Addr(ops[1])] = src
			return ctlNext, 0
		}
		dst, half := amd64Reg(ops[1])
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

// amd64Addr is the address a memory operand disp(%base) names. The
// interpreter's memory holds 64-bit words at 8-byte aligned addresses, as
// every stack access gen makes is; anything else would alias silently.
func (m *machine) amd64Addr(op string) uint64 {
	mm := memRef.FindStringSubmatch(op)
	if mm == nil {
		panic("not an x86-64 memory operand: " + op)
	}
	var disp uint64
	if mm[1] != "" {
		disp = num(mm[1])
	}
	a := m.reg[mm[2]] + disp
	if a%8 != 0 {
		panic(fmt.Sprintf("x86-64 memory access at 0x%x (%s), not 8-byte aligned", a, op))
	}
	return a
}

// amd64Src is the value of a source operand: immediate, memory or register
// (a 32-bit register reads its low half).
func (m *machine) amd64Src(op string) uint64 {
	switch {
	case strings.HasPrefix(op, "$"):
		return num(op)
	case memRef.MatchString(op):
		return m.mem[m.amd64Addr(op)]
	}
	r, half := amd64Reg(op)
	if half {
		return m.reg[r] & 0xffffffff
	}
	return m.reg[r]
}
