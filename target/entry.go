package target

import "fmt"

// CFAAtEntry is the CFA's offset from the SP at a function's entry. What
// the psABIs fix at a function's first instruction, after the call and
// before the callee has run any of its own code:
//
//	x86-64:  CFA = SP+8,   RA = [SP] = [CFA-8], caller SP = SP+8 (call pushed the RA)
//	AArch64: CFA = SP,     RA = x30,            caller SP = SP
//	s390x:   CFA = SP+160, RA = r14,            caller SP = SP   (the caller's register save area lies above SP)
func (t Target) CFAAtEntry() int64 {
	switch t {
	case X86_64:
		return WordSize
	case S390X:
		return CallerSaveArea
	}
	return 0
}

// CallerSPAtEntry is the caller's SP (its value after the call returns)
// as an offset from the SP at the callee's entry: the return address
// popped on x86-64, nothing on the targets with a link register.
func (t Target) CallerSPAtEntry() int64 {
	if t.HasLinkRegister() {
		return 0
	}
	return WordSize
}

// CallerSaveArea is the size of the register save area an s390x caller
// reserves above its SP for the callee (s390x ELF ABI, "Stack frame"):
// the s390x CFA lies that far above the SP at entry.
const CallerSaveArea = 160

// RAOnStackAtEntry is where the return address lies at entry on a target
// without a link register: at CFA-8. The other targets hold it in RA().
const RAOnStackAtEntry = -WordSize

// ArgRegs are the DWARF numbers of the registers that pass a function's
// integer and pointer arguments, in order (x86-64 rdi, rsi, rdx, rcx, r8,
// r9; AArch64 x0-x7; s390x r2-r6).
func (t Target) ArgRegs() []int {
	switch t {
	case X86_64:
		return []int{5, 4, 1, 2, 8, 9}
	case AArch64, AArch64BE:
		return []int{0, 1, 2, 3, 4, 5, 6, 7}
	case S390X:
		return []int{2, 3, 4, 5, 6}
	}
	return nil
}

// RetReg is the DWARF number of the register an integer result is
// returned in (x86-64 rax, AArch64 x0, s390x r2).
func (t Target) RetReg() int {
	if t == S390X {
		return 2
	}
	return 0
}

// PLTSizes are the sizes GNU ld gives a PLT's header entry (PLT0) and each
// later entry on the target: .plt.sec and .plt.got entries are the later
// entries' size.
func (t Target) PLTSizes() (first, entry uint64) {
	switch t {
	case AArch64, AArch64BE:
		return 32, 16
	case S390X:
		return 32, 32
	}
	return 16, 16
}

// RegName is the assembler name of DWARF register r (%rbp, x29, sp,
// %r15, %f0), or reg<r> for a number the target does not use.
func (t Target) RegName(r int) string {
	switch t {
	case X86_64:
		names := []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"}
		switch {
		case r >= 0 && r < len(names):
			return "%" + names[r]
		case r >= 0 && r <= 15:
			return fmt.Sprintf("%%r%d", r)
		case r == RegX86RA:
			return "%rip"
		}
	case AArch64, AArch64BE:
		switch {
		case r == RegAArch64SP:
			return "sp"
		case r >= 0 && r < 31:
			return fmt.Sprintf("x%d", r)
		}
	case S390X:
		// DWARF 16-31 are f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,f14,f9,f11,f13,f15.
		fprs := []int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}
		switch {
		case r >= 0 && r < 16:
			return fmt.Sprintf("%%r%d", r)
		case r >= 16 && r < 32:
			return fmt.Sprintf("%%f%d", fprs[r-16])
		}
	}
	return fmt.Sprintf("reg%d", r)
}
