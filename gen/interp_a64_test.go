package gen_test

import (
	"strings"
)

// The interpreter's AArch64 instructions, in the disassembler's syntax.

func (m *machine) stepA64(mn, rest string, ops []string, next uint64) (control, uint64) {
	reg := func(s string) string {
		if strings.HasPrefix(s, "w") {
			return "x" + s[1:]
		}
		return s
	}
	// memory operand: everything after the register list
	mem := func(nregs int) (addr uint64, writeback func()) {
		mm := a64Mem.FindStringSubmatch(strings.Join(ops[nregs:], ","))
		if mm == nil {
			panic("aarch64 memory operand: " + rest)
		}
		base := mm[1]
		var off, post uint64
		if mm[2] != "" {
			off = num(mm[2])
		}
		if mm[4] != "" {
			post = num(mm[4])
		}
		addr = m.reg[base] + off
		return addr, func() {
			if mm[3] == "!" {
				m.reg[base] += off
			}
			m.reg[base] += post
		}
	}
	// operand returns an immediate (#imm, or #imm, lsl #12) or a register.
	operand := func(ops []string) uint64 {
		if !strings.HasPrefix(ops[0], "#") {
			return m.reg[reg(ops[0])]
		}
		v := num(ops[0])
		if len(ops) > 1 {
			if ops[1] != "lsl#12" {
				panic("aarch64 shifted immediate: " + rest)
			}
			v <<= 12
		}
		return v
	}
	switch {
	case mn == "nop":
	case mn == "brk":
		return ctlHalt, 0
	case mn == "ret":
		return ctlRet, m.reg["x30"]
	case mn == "bl":
		m.reg["x30"] = next
		return ctlCall, num(ops[0])
	case mn == "b":
		return ctlJump, num(ops[0])
	case mn == "b.ne":
		if !m.zf {
			return ctlJump, num(ops[0])
		}
	case mn == "tbz" || mn == "tbnz":
		bit := m.reg[reg(ops[0])] >> num(ops[1]) & 1
		if (bit == 1) == (mn == "tbnz") {
			return ctlJump, num(ops[2])
		}
	case mn == "stp" || mn == "ldp":
		a, wb := mem(2)
		if mn == "stp" {
			m.mem[a], m.mem[a+8] = m.reg[ops[0]], m.reg[ops[1]]
		} else {
			m.reg[ops[0]], m.reg[ops[1]] = m.mem[a], m.mem[a+8]
		}
		wb()
	case mn == "str" || mn == "ldr":
		a, wb := mem(1)
		if mn == "str" {
			m.mem[a] = m.reg[ops[0]]
		} else {
			m.reg[ops[0]] = m.mem[a]
		}
		wb()
	case mn == "mov" && strings.HasPrefix(ops[1], "#"):
		m.reg[ops[0]] = num(ops[1])
	case mn == "mov":
		m.reg[ops[0]] = m.reg[ops[1]]
	case mn == "add" || mn == "sub" || mn == "subs" || mn == "and":
		v := m.reg[ops[1]]
		switch mn {
		case "add":
			v += operand(ops[2:])
		case "and":
			v &= operand(ops[2:])
		default:
			v -= operand(ops[2:])
		}
		if mn == "subs" {
			m.zf = v == 0
		}
		m.reg[ops[0]] = v
	default:
		panic("aarch64 instruction the interpreter does not know: " + mn + " " + rest)
	}
	return ctlNext, 0
}
