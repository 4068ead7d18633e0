package target

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The facts below are written out from the GNU triples, the ELF
// specification's e_machine list, the psABIs and GNU ld's PLT layouts,
// independently of the switches that implement them: one row per target.
func TestPlatformFacts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tg                Target
		aarch64           bool
		arch, triple      string
		toolTriple        string
		toolFlags         []string
		machine           elf.Machine
		data              elf.Data
		cfaAtEntry        int64
		callerSPAtEntry   int64
		pltFirst, pltNext uint64
		argRegs           []int
		retReg            int
	}{
		{X86_64, false, "x86_64", "x86_64-linux-gnu", "x86_64-linux-gnu", nil, elf.EM_X86_64, elf.ELFDATA2LSB, 8, 8, 16, 16, []int{5, 4, 1, 2, 8, 9}, 0},
		{AArch64, true, "aarch64", "aarch64-linux-gnu", "aarch64-linux-gnu", nil, elf.EM_AARCH64, elf.ELFDATA2LSB, 0, 0, 32, 16, []int{0, 1, 2, 3, 4, 5, 6, 7}, 0},
		{AArch64BE, true, "aarch64_be", "aarch64_be-linux-gnu", "aarch64-linux-gnu", []string{"-EB"}, elf.EM_AARCH64, elf.ELFDATA2MSB, 0, 0, 32, 16, []int{0, 1, 2, 3, 4, 5, 6, 7}, 0},
		{S390X, false, "s390x", "s390x-linux-gnu", "s390x-linux-gnu", nil, elf.EM_S390, elf.ELFDATA2MSB, 160, 0, 32, 32, []int{2, 3, 4, 5, 6}, 2},
	}
	if len(cases) != len(All) {
		t.Fatalf("%d targets, %d rows of facts: a new target needs its row here", len(All), len(cases))
	}
	for _, c := range cases {
		t.Run(c.tg.Name(), func(t *testing.T) {
			t.Parallel()
			tg := c.tg
			if tg.IsAArch64() != c.aarch64 {
				t.Errorf("IsAArch64 = %v", tg.IsAArch64())
			}
			if tg.Arch() != c.arch || tg.Triple() != c.triple || tg.ToolTriple() != c.toolTriple || !slices.Equal(tg.ToolFlags(), c.toolFlags) {
				t.Errorf("Arch, Triple, ToolTriple, ToolFlags = %q, %q, %q, %q; want %q, %q, %q, %q",
					tg.Arch(), tg.Triple(), tg.ToolTriple(), tg.ToolFlags(), c.arch, c.triple, c.toolTriple, c.toolFlags)
			}
			if tg.ELFMachine() != c.machine || tg.ELFData() != c.data {
				t.Errorf("ELF machine, data = %v, %v; want %v, %v", tg.ELFMachine(), tg.ELFData(), c.machine, c.data)
			}
			if tg.CFAAtEntry() != c.cfaAtEntry || tg.CallerSPAtEntry() != c.callerSPAtEntry {
				t.Errorf("CFA, caller SP at entry = SP%+d, SP%+d; want SP%+d, SP%+d", tg.CFAAtEntry(), tg.CallerSPAtEntry(), c.cfaAtEntry, c.callerSPAtEntry)
			}
			if !slices.Equal(tg.ArgRegs(), c.argRegs) || tg.RetReg() != c.retReg {
				t.Errorf("argument registers %v, result in %d; want %v, %d", tg.ArgRegs(), tg.RetReg(), c.argRegs, c.retReg)
			}
			if f, e := tg.PLTSizes(); f != c.pltFirst || e != c.pltNext {
				t.Errorf("PLT sizes = %d, %d; want %d, %d", f, e, c.pltFirst, c.pltNext)
			}
			// The reverse maps give the target back.
			if got, err := FromELF(elf.FileHeader{Class: elf.ELFCLASS64, Data: c.data, Machine: c.machine}); err != nil || got != tg {
				t.Errorf("FromELF(%v, %v) = %v, %v", c.machine, c.data, got, err)
			}
			for _, spelling := range []string{c.triple, c.arch + "-unknown-linux-gnu", c.arch + "-pc-linux-gnu"} {
				if got, err := ParseTriple(spelling); err != nil || got != tg {
					t.Errorf("ParseTriple(%q) = %v, %v", spelling, got, err)
				}
			}
			if !slices.Contains(ServedBy(c.toolTriple), tg) || !slices.Contains(ToolTriples(), c.toolTriple) {
				t.Errorf("tool triple %s is not listed or does not serve %v: ToolTriples %q, ServedBy %v", c.toolTriple, tg, ToolTriples(), ServedBy(c.toolTriple))
			}
		})
	}
}

func TestToolTriples(t *testing.T) {
	t.Parallel()
	want := []string{"x86_64-linux-gnu", "aarch64-linux-gnu", "s390x-linux-gnu"}
	if got := ToolTriples(); !slices.Equal(got, want) {
		t.Errorf("ToolTriples = %q, want %q", got, want)
	}
	if got := ServedBy("aarch64-linux-gnu"); !slices.Equal(got, []Target{AArch64, AArch64BE}) {
		t.Errorf("ServedBy(aarch64-linux-gnu) = %v", got)
	}
	if got := ServedBy("mips-linux-gnu"); got != nil {
		t.Errorf("ServedBy(mips-linux-gnu) = %v", got)
	}
}

// Headers that name no target are refused with ErrNotATarget and an error
// that names what the header holds.
func TestFromELFRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    elf.FileHeader
		want string
	}{
		{"32-bit x86", elf.FileHeader{Class: elf.ELFCLASS32, Data: elf.ELFDATA2LSB, Machine: elf.EM_386}, "ELFCLASS32"},
		{"32-bit class of a 64-bit machine", elf.FileHeader{Class: elf.ELFCLASS32, Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64}, "ELFCLASS32"},
		{"riscv", elf.FileHeader{Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Machine: elf.EM_RISCV}, "EM_RISCV"},
		{"big-endian x86-64", elf.FileHeader{Class: elf.ELFCLASS64, Data: elf.ELFDATA2MSB, Machine: elf.EM_X86_64}, "ELFDATA2MSB"},
		{"little-endian s390x", elf.FileHeader{Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Machine: elf.EM_S390}, "EM_S390"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromELF(c.h)
			if !errors.Is(err, ErrNotATarget) {
				t.Fatalf("FromELF = %v, %v; want ErrNotATarget", got, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %s", err, c.want)
			}
		})
	}
	for _, bad := range []string{"", "mips-linux-gnu", "x86-64-linux-gnu", "aarch64be-linux-gnu"} {
		if got, err := ParseTriple(bad); !errors.Is(err, ErrNotATarget) {
			t.Errorf("ParseTriple(%q) = %v, %v; want ErrNotATarget", bad, got, err)
		}
	}
	if Target(9).Triple() != "" || Target(9).ELFMachine() != elf.EM_NONE {
		t.Error("an invalid target has a triple or an ELF machine")
	}
}

func TestRegName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tg      Target
		names   map[int]string
		notAReg int
	}{
		{X86_64, map[int]string{0: "%rax", 1: "%rdx", 6: "%rbp", 7: "%rsp", 10: "%r10", 16: "%rip"}, 17},
		{AArch64, map[int]string{0: "x0", 29: "x29", 30: "x30", 31: "sp"}, 32},
		{AArch64BE, map[int]string{29: "x29", 31: "sp"}, 32},
		{S390X, map[int]string{11: "%r11", 15: "%r15", 16: "%f0", 17: "%f2", 20: "%f1", 31: "%f15"}, 32},
	}
	for _, c := range cases {
		t.Run(c.tg.Name(), func(t *testing.T) {
			t.Parallel()
			for r, want := range c.names {
				if got := c.tg.RegName(r); got != want {
					t.Errorf("RegName(%d) = %q, want %q", r, got, want)
				}
			}
			for _, r := range []int{-1, c.notAReg} {
				if got, want := c.tg.RegName(r), "reg"+itoa(r); got != want {
					t.Errorf("RegName(%d) = %q, want %q", r, got, want)
				}
			}
			// The stack, frame and return-address registers have names.
			for _, r := range []int{c.tg.SP(), c.tg.FP(), c.tg.RA()} {
				if name := c.tg.RegName(r); name == "reg"+itoa(r) {
					t.Errorf("register %d has no name", r)
				}
			}
		})
	}
}

func itoa(n int) string { return fmt.Sprint(n) }
