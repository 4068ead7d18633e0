package gen_test

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/sframe"
)

// The interpreter's AArch64 instructions, in the disassembler's syntax.

// Pointer authentication, modelled by a deterministic stand-in for the
// real code (QARMA over a secret key): the signature is a hash of the key
// and the modifier (SP at signing) in bits 48-54 and 56-63, the bits a
// user address with 48 virtual address bits leaves free (bit 55 selects
// the address half and stays). Authenticating with another key or SP
// poisons the pointer, as hardware does, so a return through it fails.
const (
	pacMask    = 0xff7f_0000_0000_0000
	pacAddress = 1<<48 - 1
	pacPoison  = 1 << 62
)

func pacSign(ptr uint64, key sframe.PAuthKey, modifier uint64) uint64 {
	h := (modifier ^ 0x5f3759df<<uint(key)) * 0x9e3779b97f4a7c15
	h ^= h >> 29
	sig := h & pacMask
	if sig == 0 {
		sig = 1 << 48
	}
	return ptr&pacAddress | sig
}

// pacAuth returns ptr stripped if it carries key's signature for modifier.
func pacAuth(ptr uint64, key sframe.PAuthKey, modifier uint64) (uint64, error) {
	plain := ptr & pacAddress
	if want := pacSign(plain, key, modifier); ptr != want {
		return plain | pacPoison, fmt.Errorf("0x%x is not 0x%x signed with key %c and modifier 0x%x (that is 0x%x)", ptr, plain, 'A'+rune(key), modifier, want)
	}
	return plain, nil
}

// arm64Hints are the pointer authentication instructions in the hint space,
// which the disassembler prints by number.
var arm64Hints = map[string]string{"#0x19": "paciasp", "#0x1d": "autiasp", "#0x1b": "pacibsp", "#0x1f": "autibsp", "#0x7": "xpaclri"}

func (m *machine) stepARM64(mn, rest string, ops []string, next uint64) (control, uint64) {
	reg := func(s string) string {
		if strings.HasPrefix(s, "w") {
			return "x" + s[1:]
		}
		return s
	}
	// memory operand: everything after the register list
	mem := func(nregs int) (addr uint64, writeback func()) {
		mm := arm64Mem.FindStringSubmatch(strings.Join(ops[nregs:], ","))
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
	if mn == "hint" {
		mn = arm64Hints[rest]
	}
	key := sframe.PAuthKeyA
	if mn == "pacibsp" || mn == "autibsp" {
		key = sframe.PAuthKeyB
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
	case mn == "paciasp" || mn == "pacibsp":
		if m.reg["x30"]&^pacAddress != 0 {
			panic(fmt.Sprintf("%s of x30 = 0x%x, which is signed already", mn, m.reg["x30"]))
		}
		m.reg["x30"] = pacSign(m.reg["x30"], key, m.reg["sp"])
	case mn == "autiasp" || mn == "autibsp":
		m.reg["x30"], _ = pacAuth(m.reg["x30"], key, m.reg["sp"])
	case mn == "xpaclri":
		m.reg["x30"] &= pacAddress
	case mn == "nop":
	case mn == "brk":
		return ctlHalt, 0
	case mn == "ret":
		return ctlRet, m.reg["x30"]
	case mn == "bl":
		m.reg["x30"] = next
		return ctlCall, num(ops[0])
	case mn == "blr":
		m.reg["x30"] = next
		return ctlCall, m.reg[ops[0]]
	case mn == "movk":
		shift := uint64(0)
		if len(ops) == 3 {
			shift = num(strings.TrimPrefix(ops[2], "lsl"))
		}
		m.reg[ops[0]] = m.reg[ops[0]]&^(0xffff<<shift) | num(ops[1])<<shift
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
	case mn == "":
		panic("aarch64 hint the interpreter does not know: " + rest)
	default:
		panic("aarch64 instruction the interpreter does not know: " + mn + " " + rest)
	}
	return ctlNext, 0
}

// unsign checks that a row's signed RA value carries the signature of the
// function's key, made at entry with SP (= the CFA) as the modifier, and
// returns it stripped.
func (m *machine) unsign(ra uint64, key sframe.PAuthKey, cfa uint64) (uint64, error) {
	return pacAuth(ra, key, cfa)
}
