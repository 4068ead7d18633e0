package disasm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/target"
	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/s390x/s390xasm"
	"golang.org/x/arch/x86/x86asm"
)

// ErrTruncated means code ended before a whole instruction.
var ErrTruncated = errors.New("disasm: truncated instruction")

// Instruction decodes the instruction at the start of code, which sits at
// address pc, and returns its GNU-syntax text and length in bytes.
func Instruction(abi target.Target, code []byte, pc uint64) (text string, length int, err error) {
	if len(code) == 0 {
		return "", 0, fmt.Errorf("%w: no bytes at pc 0x%x", ErrTruncated, pc)
	}
	switch abi {
	case target.X86_64:
		if text, ok := endbr(code); ok {
			return text, 4, nil
		}
		inst, err := x86asm.Decode(hintNOPAsNOP(code), 64)
		if err != nil {
			return "", 0, fmt.Errorf("disasm: x86-64 at pc 0x%x (% x): %w", pc, head(code, 8), err)
		}
		if inst.Op == 0 {
			// x86asm reports a cut-off instruction as a bare prefix.
			return "", 0, fmt.Errorf("%w: x86-64 at pc 0x%x (% x)", ErrTruncated, pc, head(code, 8))
		}
		return x86asm.GNUSyntax(inst, pc, nil), inst.Len, nil
	case target.AArch64, target.AArch64BE:
		if len(code) < 4 {
			return "", 0, fmt.Errorf("%w: aarch64 needs 4 bytes at pc 0x%x, have %d", ErrTruncated, pc, len(code))
		}
		inst, err := arm64asm.Decode(code[:4])
		if err != nil {
			return "", 0, fmt.Errorf("disasm: aarch64 at pc 0x%x (% x): %w", pc, code[:4], err)
		}
		return arm64Text(inst, pc), 4, nil
	case target.S390X:
		// s390xasm indexes past short input; the length is in the first
		// two bits of the opcode.
		if n := [4]int{2, 4, 4, 6}[code[0]>>6]; len(code) < n {
			return "", 0, fmt.Errorf("%w: s390x needs %d bytes at pc 0x%x, have %d", ErrTruncated, n, pc, len(code))
		}
		inst, err := s390xasm.Decode(code)
		if err != nil {
			return "", 0, fmt.Errorf("disasm: s390x at pc 0x%x (% x): %w", pc, head(code, 6), err)
		}
		return s390xasm.GNUSyntax(inst, pc), inst.Len, nil
	}
	return "", 0, fmt.Errorf("disasm: unsupported ABI %v", abi)
}

// arm64Text prints the instruction with PC-relative operands resolved to
// absolute addresses (arm64asm prints them relative to ".").
func arm64Text(inst arm64asm.Inst, pc uint64) string {
	text := strings.TrimSpace(arm64asm.GNUSyntax(inst))
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		if rel, ok := a.(arm64asm.PCRel); ok {
			text = strings.Replace(text, rel.String(), fmt.Sprintf("0x%x", pc+uint64(rel)), 1)
		}
	}
	return text
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Length returns the length of the instruction at the start of code, for
// walking instruction boundaries: x86-64 by x86asm's decoder; AArch64 is
// always 4 bytes (also for words arm64asm cannot decode: literal pools stay
// 4-byte aligned); s390x from the two top bits of the opcode (z/Architecture
// Principles of Operation, "Instruction formats"), which is all the
// boundary needs.
func Length(abi target.Target, code []byte) (int, error) {
	if len(code) == 0 {
		return 0, ErrTruncated
	}
	switch abi {
	case target.X86_64:
		if _, ok := endbr(code); ok {
			return 4, nil
		}
		inst, err := x86asm.Decode(hintNOPAsNOP(code), 64)
		if err != nil {
			return 0, fmt.Errorf("disasm: x86-64 (% x): %w", head(code, 8), err)
		}
		if inst.Op == 0 {
			return 0, fmt.Errorf("%w: x86-64 (% x)", ErrTruncated, head(code, 8))
		}
		return inst.Len, nil
	case target.AArch64, target.AArch64BE:
		if len(code) < 4 {
			return 0, ErrTruncated
		}
		return 4, nil
	case target.S390X:
		n := [4]int{2, 4, 4, 6}[code[0]>>6]
		if len(code) < n {
			return 0, ErrTruncated
		}
		return n, nil
	}
	return 0, fmt.Errorf("disasm: unsupported ABI %v", abi)
}

// hintNOPAsNOP gives x86asm an instruction it can measure for the reserved
// hint NOPs 0f 19..0f 1e (endbr64 is f3 0f 1e fa, in every function of a
// binary built with -fcf-protection), which it does not decode: they take
// a ModRM operand exactly as nop Ev (0f 1f) does, so the same bytes with
// the opcode's second byte replaced by 1f have the same length. Code of any
// other shape is returned as it is.
func hintNOPAsNOP(code []byte) []byte {
	i := 0
	for i < len(code) && i < 14 && (code[i] == 0x66 || code[i] == 0xf2 || code[i] == 0xf3 || code[i]&0xf0 == 0x40) {
		i++
	}
	if i+1 >= len(code) || code[i] != 0x0f || code[i+1] < 0x19 || code[i+1] > 0x1e {
		return code
	}
	c := append([]byte(nil), head(code, 15)...)
	c[i+1] = 0x1f
	return c
}

// endbr recognises endbr64 and endbr32 (f3 0f 1e fa/fb), which x86asm
// cannot decode even as the hint NOP they are.
func endbr(code []byte) (string, bool) {
	if len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && (code[3] == 0xfa || code[3] == 0xfb) {
		return [2]string{"endbr64", "endbr32"}[code[3]-0xfa], true
	}
	return "", false
}
