package disasm

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
)

var (
	spaces    = regexp.MustCompile(`\s+`)
	afterComa = regexp.MustCompile(`,\s*`)
	x86Suffix = map[string]string{"callq": "call", "retq": "ret", "leaveq": "leave"}
)

// canon removes the differences between objdump's and x/arch's spelling
// that carry no meaning: spacing, AT&T q suffixes on suffix-free
// mnemonics, and a negative immediate printed as its 64-bit pattern.
func canon(s string) string {
	s = afterComa.ReplaceAllString(strings.TrimSpace(spaces.ReplaceAllString(s, " ")), ",")
	m, rest, _ := strings.Cut(s, " ")
	if a, ok := x86Suffix[m]; ok {
		m = a
	}
	if strings.HasPrefix(rest, "$0xffffffff") {
		if v, err := strconv.ParseUint(rest[3:strings.IndexByte(rest, ',')], 16, 64); err == nil {
			rest = "$-0x" + strconv.FormatUint(-v, 16) + rest[strings.IndexByte(rest, ','):]
		}
	}
	return strings.TrimSpace(m + " " + rest)
}

func TestObjdumpGolden(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/objdump-2.40.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		fields := strings.Split(l, "|")
		if len(fields) != 4 {
			t.Fatalf("line %d: want 4 fields: %q", line, l)
		}
		abi, err := target.Parse(strings.TrimSpace(fields[0]))
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		pc, err := strconv.ParseUint(strings.TrimSpace(fields[1]), 16, 64)
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		code, err := hex.DecodeString(strings.ReplaceAll(fields[2], " ", ""))
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		want := strings.TrimSpace(fields[3])
		for _, a := range []target.Target{abi, target.AArch64BE} {
			if a == target.AArch64BE && abi != target.AArch64 {
				continue
			}
			// Trailing bytes must not change the result.
			text, length, err := Instruction(a, append(code, 0, 0, 0, 0), pc)
			if err != nil {
				t.Errorf("line %d %s: %v", line, a.Name(), err)
				continue
			}
			if length != len(code) {
				t.Errorf("line %d %s: length %d, objdump %d", line, a.Name(), length, len(code))
			}
			if canon(text) != canon(want) {
				t.Errorf("line %d %s: got %q, objdump %q", line, a.Name(), text, want)
			}
			n++
		}
	}
	if n < 40 {
		t.Fatalf("only %d golden instructions", n)
	}
}

func TestTruncated(t *testing.T) {
	t.Parallel()
	if _, _, err := Instruction(target.AArch64, []byte{0xc0, 0x03, 0x5f}, 0x100); !errors.Is(err, ErrTruncated) {
		t.Errorf("3 bytes of aarch64: err = %v, want ErrTruncated", err)
	}
	if _, _, err := Instruction(target.X86_64, nil, 0); !errors.Is(err, ErrTruncated) {
		t.Errorf("no bytes: err = %v, want ErrTruncated", err)
	}
	if _, _, err := Instruction(target.S390X, []byte{0xc0, 0xe5, 0x00}, 0); err == nil {
		t.Error("half a brasl decoded without error")
	}
	if _, _, err := Instruction(target.X86_64, []byte{0xe8, 0x00}, 0); err == nil {
		t.Error("half a call decoded without error")
	}
}

// FuzzInstruction: any bytes give text and a length within the input, or
// an error; never a panic.
func FuzzInstruction(f *testing.F) {
	f.Add([]byte{0xe8, 0x9d, 0xff, 0xff, 0xff}, uint64(0x5e), uint8(0))
	f.Add([]byte{0xfd, 0x7b, 0xbd, 0xa9}, uint64(4), uint8(1))
	f.Add([]byte{0xeb, 0x6f, 0xf0, 0x30, 0x00, 0x24}, uint64(10), uint8(3))
	f.Fuzz(func(t *testing.T, code []byte, pc uint64, tgt uint8) {
		abi := target.All[int(tgt)%len(target.All)]
		text, n, err := Instruction(abi, code, pc)
		if err != nil {
			return
		}
		if n <= 0 || n > len(code) || text == "" {
			t.Fatalf("%s % x: text %q length %d", abi.Name(), code, text, n)
		}
	})
}

// The reserved hint NOPs (0f 19..0f 1e), which x86asm does not decode, have
// the length of nop Ev: endbr64 starts every function built with
// -fcf-protection, and a function's instruction boundaries must not end
// there. Lengths from the Intel SDM's encodings (ModRM, SIB, displacement).
func TestHintNOPLength(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code []byte
		n    int
		text string
	}{
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55}, 4, "endbr64"},
		{[]byte{0xf3, 0x0f, 0x1e, 0xfb}, 4, "endbr32"},
		{[]byte{0x0f, 0x1e, 0x44, 0x00, 0x00, 0xc3}, 5, ""},             // ModRM + SIB + disp8
		{[]byte{0x66, 0x0f, 0x19, 0x84, 0x00, 0, 0, 0, 0, 0xc3}, 9, ""}, // prefix, ModRM + SIB + disp32
		{[]byte{0x0f, 0x1f, 0x00}, 3, "nopl (%rax)"},                    // nop Ev itself, unchanged
	} {
		n, err := Length(target.X86_64, tc.code)
		if err != nil || n != tc.n {
			t.Errorf("Length(% x) = %d, %v; want %d", tc.code, n, err, tc.n)
		}
		text, n, err := Instruction(target.X86_64, tc.code, 0)
		if err != nil || n != tc.n || tc.text != "" && text != tc.text {
			t.Errorf("Instruction(% x) = %q, %d, %v; want %q, %d", tc.code, text, n, err, tc.text, tc.n)
		}
	}
	if _, err := Length(target.X86_64, []byte{0xf3, 0x0f, 0x1e}); err == nil {
		t.Error("a cut-off endbr64 has a length")
	}
}
