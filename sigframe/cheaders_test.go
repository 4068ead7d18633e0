package sigframe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
)

// A fact is one value the layout relies on and the C expression that
// computes it from the target's headers.
type fact struct {
	name   string
	c      string // a C constant expression
	want   uint64
	kernel bool // from the kernel's uapi headers, compiled apart from the C library's
}

// bias keeps every value away from 0, which gcc may fold into .zero.
const bias = 1 << 20

// cFacts lists, per target, the facts: offsets
// inside glibc's ucontext_t (counted from the ucontext, as the layout's
// slots minus UContext) and sizes and constants of the kernel's uapi
// headers.
func cFacts(l *Layout) (facts []fact) {
	uc := func(off uint64) uint64 { return off - l.UContext }
	reg := func(d int) uint64 {
		off, ok := l.Reg(d)
		if !ok {
			panic(fmt.Sprintf("%s has no slot for DWARF %d", l.Target.Name(), d))
		}
		return uc(off)
	}
	facts = []fact{
		{"sizeof(siginfo_t)", "sizeof(siginfo_t)", 128, false},
		{"uc_mcontext", "offsetof(ucontext_t, uc_mcontext)", uc(l.MContext), false},
		{"uc_stack.ss_flags", "offsetof(ucontext_t, uc_stack.ss_flags)", uc(l.ucStack + 8), false},
		{"SS_DISABLE", "SS_DISABLE", stackDisabled, false},
		{"SI_USER", "SI_USER", SIUser, false},
		{"__NR_rt_sigreturn", "__NR_rt_sigreturn", uint64(l.Sigreturn), false},
		{"kernel uc_sigmask", "offsetof(struct ucontext, uc_sigmask)", uc(l.sigmask), true},
	}
	switch l.Target {
	case target.X86_64:
		for d, name := range []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"} {
			facts = append(facts, fact{"gregs[REG_" + name + "]", "offsetof(ucontext_t, uc_mcontext.gregs[REG_" + name + "])", reg(d), false})
		}
		facts = append(facts,
			fact{"gregs[REG_RIP]", "offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP])", uc(l.PC), false},
			fact{"gregs[REG_EFL]", "offsetof(ucontext_t, uc_mcontext.gregs[REG_EFL])", uc(l.Flags), false},
			fact{"gregs[REG_CSGSFS]", "offsetof(ucontext_t, uc_mcontext.gregs[REG_CSGSFS])", uc(l.MContext + 8*x86RegCSGSFS), false},
			fact{"fpregs", "offsetof(ucontext_t, uc_mcontext.fpregs)", uc(l.fpPtr), false},
			fact{"kernel sizeof(struct ucontext)", "sizeof(struct ucontext)", l.Info - l.UContext, true},
			fact{"kernel fxsave image", "sizeof(struct _fpstate_64)", l.fpSize, true},
			fact{"UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS", "UC_SIGCONTEXT_SS|UC_STRICT_RESTORE_SS", l.UCFlags, true},
		)
	case target.AArch64, target.AArch64BE:
		for r := 0; r <= 30; r++ {
			facts = append(facts, fact{fmt.Sprintf("regs[%d]", r), fmt.Sprintf("offsetof(ucontext_t, uc_mcontext.regs[%d])", r), reg(r), false})
		}
		facts = append(facts,
			fact{"sp", "offsetof(ucontext_t, uc_mcontext.sp)", reg(target.RegAArch64SP), false},
			fact{"pc", "offsetof(ucontext_t, uc_mcontext.pc)", uc(l.PC), false},
			fact{"pstate", "offsetof(ucontext_t, uc_mcontext.pstate)", uc(l.Flags), false},
			fact{"__reserved", "offsetof(ucontext_t, uc_mcontext.__reserved)", uc(l.fpsimd), false},
			fact{"kernel sizeof(struct ucontext)", "sizeof(struct ucontext)", l.Size - l.UContext, true},
			fact{"sizeof(struct fpsimd_context)", "sizeof(struct fpsimd_context)", a64FPSIMDSize, true},
			fact{"FPSIMD_MAGIC", "FPSIMD_MAGIC", a64FPSIMDMagic, true},
			fact{"sizeof(struct _aarch64_ctx)", "sizeof(struct _aarch64_ctx)", 8, true},
		)
	case target.S390X:
		for r := 0; r < 16; r++ {
			facts = append(facts, fact{fmt.Sprintf("gregs[%d]", r), fmt.Sprintf("offsetof(ucontext_t, uc_mcontext.gregs[%d])", r), reg(r), false})
		}
		for i, f := range S390XFPROfDwarf {
			facts = append(facts, fact{fmt.Sprintf("fprs[%d]", f), fmt.Sprintf("offsetof(ucontext_t, uc_mcontext.fpregs.fprs[%d])", f), reg(16 + i), false})
		}
		facts = append(facts,
			fact{"psw.mask", "offsetof(ucontext_t, uc_mcontext.psw.mask)", uc(l.Flags), false},
			fact{"psw.addr", "offsetof(ucontext_t, uc_mcontext.psw.addr)", uc(l.PC), false},
			fact{"aregs", "offsetof(ucontext_t, uc_mcontext.aregs)", uc(l.access), false},
			fact{"glibc uc_sigmask", "offsetof(ucontext_t, uc_sigmask)", uc(l.sigmask), false},
			fact{"kernel sizeof(struct ucontext_extended)", "sizeof(struct ucontext_extended)", l.Size - l.UContext, true},
			fact{"UC_VXRS", "UC_VXRS", l.UCFlags, true},
		)
	}
	return facts
}

// The headers of the two translation units: the C library's and the
// kernel's definitions of the same structures cannot meet in one.
const (
	glibcHeaders  = "#define _GNU_SOURCE\n#include <stddef.h>\n#include <signal.h>\n#include <ucontext.h>\n#include <asm/unistd.h>\n"
	kernelHeaders = "#include <stddef.h>\n#include <asm/signal.h>\n#include <asm/sigcontext.h>\n#include <asm/ucontext.h>\n"
)

var compilers = map[target.Target]string{
	target.X86_64:  "gcc",
	target.AArch64: "aarch64-linux-gnu-gcc",
	target.S390X:   "s390x-linux-gnu-gcc",
}

// valueLine matches the data gcc -S writes for an unsigned long array.
var valueLine = regexp.MustCompile(`^\s*\.(quad|xword|dword|8byte)\s+(\d+)\s*$`)

// TestLayoutAgainstCHeaders compiles, for each target with its gcc, a
// table of offsetof and sizeof values from glibc's <ucontext.h> and
// <signal.h> and the kernel's uapi <asm/ucontext.h> and <asm/unistd.h>,
// and requires the layout to agree with every one. AArch64 big-endian has
// the little-endian layout (byte order changes no offset): it is checked
// through the same table.
func TestLayoutAgainstCHeaders(t *testing.T) {
	t.Parallel()
	for abi, cc := range compilers {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			path, err := exec.LookPath(cc)
			if err != nil {
				testenv.Missing(t, testenv.HostPackages, "cannot check the %s signal frame against the C headers: %v", abi.Name(), err)
			}
			var glibc, kernel []fact
			for _, f := range cFacts(Of(abi)) {
				if f.kernel {
					kernel = append(kernel, f)
				} else {
					glibc = append(glibc, f)
				}
			}
			facts := append(compileFacts(t, path, glibcHeaders, glibc), compileFacts(t, path, kernelHeaders, kernel)...)
			for _, f := range facts {
				if f.got != f.want {
					t.Errorf("%s: %s = %d in the headers, the layout has %d", abi.Name(), f.name, f.got, f.want)
				}
			}
			t.Logf("%d facts of the %s signal frame checked against %s's headers", len(facts), abi.Name(), cc)
		})
	}
}

// checked is a fact with the value the compiler computed.
type checked struct {
	fact
	got uint64
}

// compileFacts compiles facts after headers with cc -S and reads the
// values back from the assembly.
func compileFacts(t *testing.T, cc, headers string, facts []fact) []checked {
	t.Helper()
	var src strings.Builder
	src.WriteString(headers)
	src.WriteString("const unsigned long facts[] = {\n")
	for _, f := range facts {
		fmt.Fprintf(&src, "\t%d + (%s), /* %s */\n", bias, f.c, f.name)
	}
	src.WriteString("};\n")
	file := filepath.Join(t.TempDir(), "facts.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cc, "-S", "-O0", "-o", "-", file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -S: %v\n%s\n--- source ---\n%s", cc, err, out, src.String())
	}
	var got []uint64
	for _, line := range strings.Split(string(out), "\n") {
		if m := valueLine.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseUint(m[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v-bias)
		}
	}
	if len(got) != len(facts) {
		t.Fatalf("%s wrote %d values for %d facts:\n%s", cc, len(got), len(facts), out)
	}
	out2 := make([]checked, len(facts))
	for i, f := range facts {
		out2[i] = checked{f, got[i]}
	}
	return out2
}
