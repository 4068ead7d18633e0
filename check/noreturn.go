package check

import (
	"encoding/binary"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// NoReturn names the functions that never return to their caller: the C
// library's exits, aborts, long jumps and fortify failures, the C++
// runtime's throws and unwinder entries, and the process start. The
// dynamic check ends a path at a call to one (a PLT slot or GOT entry of
// an undefined one is bound to the exit stand-in; a defined one's first
// instruction jumps there, except when it is the function being run):
// without this the lenient emulation would return from it and run on into
// whatever bytes follow the call, judging states no process reaches. The
// file's DWARF noreturn attributes are not read. Names match without their
// symbol version (exit@GLIBC_2.2.5); libstdc++'s std::__throw_* helpers
// match by their mangled prefix (isNoReturn).
var NoReturn = []string{
	"exit", "_exit", "_Exit", "quick_exit", "abort",
	"__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_pure_virtual",
	"__cxa_deleted_virtual", "__cxa_throw_bad_array_new_length", "__cxa_call_terminate", "__cxa_call_unexpected",
	"_Unwind_Resume", "_ZSt9terminatev", "_ZSt10unexpectedv",
	"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "__libc_longjmp", "__libc_siglongjmp",
	"__stack_chk_fail", "__stack_chk_fail_local", "__chk_fail", "__fortify_fail",
	"__assert_fail", "__assert_perror_fail", "__assert", "__libc_fatal",
	"pthread_exit", "thrd_exit", "err", "errx", "verr", "verrx",
	"__libc_start_main",
}

var noReturn = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range NoReturn {
		m[n] = true
	}
	return m
}()

// isNoReturn reports whether the function called name never returns.
func isNoReturn(name string) bool {
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	if noReturn[name] {
		return true
	}
	// std::__throw_logic_error(char const*) and its kin:
	// _ZSt19__throw_logic_errorPKc.
	if rest, ok := strings.CutPrefix(name, "_ZSt"); ok {
		rest = strings.TrimLeft(rest, "0123456789")
		return strings.HasPrefix(rest, "__throw_")
	}
	return false
}

// exitCode is the exit stand-in: the exit system call, which ends a
// lenient run (emu.ErrExit).
func exitCode(t target.Target) []byte {
	switch t {
	case target.X86_64:
		return []byte{0xb8, 60, 0, 0, 0, 0x0f, 0x05} // mov $60,%eax; syscall
	case target.S390X:
		return []byte{0x0a, 0x01} // svc 1 (exit)
	}
	return []byte{0xa8, 0x0b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4} // mov x8,#93; svc #0
}

// jumpCode is one instruction at at that jumps to to.
func jumpCode(t target.Target, at, to uint64) []byte {
	rel := int64(to - at)
	switch t {
	case target.X86_64: // jmp rel32
		b := []byte{0xe9, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(b[1:], uint32(rel-5))
		return b
	case target.S390X: // brcl 15, rel32 (halfwords)
		b := []byte{0xc0, 0xf4, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[2:], uint32(rel/2))
		return b
	}
	b := make([]byte, 4) // b imm26 (words), little-endian in both byte orders
	binary.LittleEndian.PutUint32(b, 0x14000000|uint32(rel/4)&0x3ffffff)
	return b
}
