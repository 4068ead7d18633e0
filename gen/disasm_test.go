package gen

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/target"
)

var (
	spaceRun   = regexp.MustCompile(`\s+`)
	numberTok  = regexp.MustCompile(`(^|[^0-9a-z_.%])(-?)(0x[0-9a-f]+|[0-9]+)\b`)
	mnemAlias  = map[string]string{"callq": "call", "retq": "ret", "leaveq": "leave", "jmpq": "jmp", "movabs": "mov"}
	commaSpace = regexp.MustCompile(`,\s+`)
	amd64Imm32 = regexp.MustCompile(`^(mov )\$-(0x[0-9a-f]+),(%e[a-z]+|%r[0-9]+d)$`)
	// x/arch prints AArch64's pointer authentication hints by number.
	arm64Hints = map[string]string{"hint #0x19": "paciasp", "hint #0x1d": "autiasp", "hint #0x1b": "pacibsp", "hint #0x1f": "autibsp", "hint #0x7": "xpaclri"}
)

// normalise brings gen's text and the disassembler's text to one form:
// symbols and labels replaced by their addresses, numbers in decimal,
// no spaces after commas, AT&T suffixed mnemonics unsuffixed.
func normalise(text string, names []string, addrs map[string]uint64) string {
	s := strings.TrimSpace(spaceRun.ReplaceAllString(text, " "))
	// GNU as pseudo prefixes ({disp32}) choose an encoding; the
	// disassembly shows the encoding.
	s = strings.TrimPrefix(s, "{disp32} ")
	for _, n := range names {
		if strings.Contains(s, n) {
			s = strings.ReplaceAll(s, n, fmt.Sprintf("0x%x", addrs[n]))
		}
	}
	s = strings.ToLower(s)
	s = commaSpace.ReplaceAllString(s, ",")
	if m, rest, ok := strings.Cut(s, " "); ok {
		if a, ok := mnemAlias[m]; ok {
			s = a + " " + rest
		}
	} else if a, ok := mnemAlias[s]; ok {
		s = a
	}
	if a, ok := arm64Hints[s]; ok {
		s = a
	}
	// x86asm prints a 32-bit immediate moved into a 32-bit register as
	// signed, GNU objdump as unsigned.
	if m := amd64Imm32.FindStringSubmatch(s); m != nil {
		if v, err := strconv.ParseUint(strings.TrimPrefix(m[2], "0x"), 16, 64); err == nil && v <= 1<<31 {
			s = fmt.Sprintf("%s$0x%x,%s", m[1], (1<<32)-v, m[3])
		}
	}
	return numberTok.ReplaceAllStringFunc(s, func(tok string) string {
		m := numberTok.FindStringSubmatch(tok)
		v, err := strconv.ParseUint(strings.TrimPrefix(m[3], "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(m[3], "0x")], 64)
		if err != nil {
			return tok
		}
		if m[2] == "-" {
			return m[1] + "-" + strconv.FormatUint(v, 10)
		}
		return m[1] + strconv.FormatUint(v, 10)
	})
}

func TestNormalise(t *testing.T) {
	t.Parallel()
	addrs := map[string]uint64{"f1": 0x10, ".Lf1_1": 0x20, ".Lf1_10": 0x30}
	names := []string{".Lf1_10", ".Lf1_1", "f1"}
	for _, c := range [][2]string{
		{"callq  0x10", "call f1"},
		{"jne .Lf1_10", "jne 0x30"},
		{"stp x29, x30, [sp, #-48]!", "stp x29,x30,[sp,#-0x30]!"},
		{"and $-0x10,%rsp", "and $-16,%rsp"},
		{"lmg %r6,%r15,224(%r15)", "lmg %r6,%r15,0xe0(%r15)"},
		{"nop ", "nop"},
		{"mov $-0x2cc56b93,%ebx", "mov $0xd33a946d,%ebx"},
		{"jmpq 0x10", "{disp32} jmp f1"},
		{"hint #0x1b", "pacibsp"},
	} {
		if a, b := normalise(c[0], names, addrs), normalise(c[1], names, addrs); a != b {
			t.Errorf("normalise(%q) = %q, normalise(%q) = %q", c[0], a, c[1], b)
		}
	}
	for _, c := range [][2]string{
		{"jne .Lf1_10", "jne .Lf1_1"},
		{"push %r12", "push %r13"},
		{"add sp, sp, #0x20", "add sp, sp, #0x2"},
		{"aghi %r15,-160", "aghi %r15,160"},
		{"hint #0x19", "pacibsp"},
	} {
		if a, b := normalise(c[0], names, addrs), normalise(c[1], names, addrs); a == b {
			t.Errorf("normalise made %q and %q equal (%q)", c[0], c[1], a)
		}
	}
}

// TestDisassemblyMatchesText decodes every instruction of many programs
// with the disasm package and compares it with gen's text and length.
func TestDisassemblyMatchesText(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			n := 0
			for seed := int64(1); seed <= 50; seed++ {
				for _, opt := range []Options{{}, {Funcs: 30, MaxDepth: 7}} {
					p, err := Generate(abi, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					addrs := map[string]uint64{}
					var names []string
					for _, f := range p.Funcs {
						addrs[f.Name] = f.Addr
						names = append(names, f.Name)
						for _, o := range f.ops {
							for _, l := range o.labels {
								addrs[l] = f.Addr + uint64(o.off)
								names = append(names, l)
							}
						}
					}
					slices.SortFunc(names, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
					for _, f := range p.Funcs {
						for _, in := range f.Insns {
							pc := f.Addr + uint64(in.Off)
							got, l, err := disasm.Instruction(abi, p.CodeAt(pc), pc)
							if err != nil {
								t.Fatalf("seed %d %s+0x%x %q: %v", seed, f.Name, in.Off, in.Text, err)
							}
							// Padding is one Insn: Pad copies of its
							// instruction.
							copies := max(in.Pad, 1)
							if l*copies != len(in.Bytes) || !bytes.Equal(in.Bytes, bytes.Repeat(in.Bytes[:l], copies)) {
								t.Fatalf("seed %d %s+0x%x %q: disassembler length %d, %d copies, gen %d bytes", seed, f.Name, in.Off, in.Text, l, copies, len(in.Bytes))
							}
							if a, b := normalise(got, names, addrs), normalise(in.Text, names, addrs); a != b {
								t.Fatalf("seed %d %s+0x%x: disassembler %q (%q), gen %q (%q)", seed, f.Name, in.Off, got, a, in.Text, b)
							}
							n++
						}
					}
				}
			}
			t.Logf("%d instructions agree", n)
		})
	}
}
