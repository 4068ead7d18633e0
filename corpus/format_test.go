package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/verdict"
)

// fullCase is a case with every field of the current version set.
func fullCase() *Case {
	c := &Case{Consumer: "libsframe", Seed: 7, Step: 3, PC: 0x10000006, Insn: "br %r14", Function: "_start+0x6",
		Verdict: verdict.Wrong, Frame: 1, Field: "pc", Detail: "frame 1 pc",
		Expected:    []frame.Frame{{PC: 0x10000006, CFA: 0x70fff0a0, SP: 0x70fff000}, {PC: 0x10000002, Outermost: true}},
		Got:         []frame.Frame{{PC: 0x10000006, CFA: 0x70fff0a0, SP: 0x70fff000}, {PC: 0x10000004, Outermost: true}},
		ExpectedCBF: Hex{0x02, 0x1b, 0x10, 0, 0, 6, 0x20, 0xfc, 0}, GotCBF: Hex{0x02, 0},
		Assembly: "\t.text\n_start:\n\tbr %r14\n", ProducerVersion: "as 2.47.50", ConsumerVersion: "libsframe 2.47.50-1",
		Build:     []string{"s390x-linux-gnu-as --gsframe -o repro.o repro.s", "s390x-linux-gnu-ld -Ttext=0x10000000 -e 0x10000000 -o repro repro.o"},
		Generator: &Generator{Seed: 7, Patterns: []string{"leaf"}, Paths: 4, Reductions: []Reduction{{Op: "keep-path", N: 2}, {Op: "drop-call", Func: "f1", Callee: "f2", N: 1}}},
		Minimization: &Minimization{Signature: "WRONG pc at frame 1", Original: Size{9, 150, 600, 4}, Minimized: Size{2, 5, 12, 1},
			OriginalSteps: 300, MinimizedSteps: 4, Attempts: 12, Seconds: 0.5},
		Machine: &Machine{PC: 0x10000006, Regs: map[string]Addr{"15": 0x70fff000, "11": 0}, StackAddr: 0x70ffef00, StackSize: 0x200,
			Words: []Word{{Addr: 0x70fff008, Value: 0x10000004}}, BigEndian: true},
		Expect: &Expectation{Fails: true, Finding: "docs/findings/008-gas-mid-function-undefined-ra-ignored.md", Note: "gas 2.44"},
	}
	c.SetImage(sampleImage(), 0)
	return c
}

func saved(t *testing.T) []byte {
	t.Helper()
	p, err := Save(t.TempDir(), fullCase())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVersion2RoundTrip(t *testing.T) {
	t.Parallel()
	b := saved(t)
	got, err := Parse("full.json", b)
	if err != nil {
		t.Fatal(err)
	}
	want := fullCase()
	want.Format, want.Replay = FormatName, got.Replay
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if !strings.HasPrefix(got.Replay, "sfconform repro ") {
		t.Errorf("replay command %q", got.Replay)
	}
}

// A file cut at any byte is refused with the field and the byte offset
// where it stops, never read as a smaller case and never a panic.
func TestTruncatedAtEveryOffset(t *testing.T) {
	t.Parallel()
	b := saved(t)
	whole := len(strings.TrimRight(string(b), "\n"))
	fields := map[string]bool{}
	for n := 0; n < whole; n++ {
		_, err := Parse("cut.json", b[:n])
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: %v, want a *FormatError", n, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(n) || fe.Field == "" || fe.File != "cut.json" {
			t.Fatalf("cut at %d: %+v: want the field and an offset within the %d bytes", n, fe, n)
		}
		fields[fe.Field] = true
	}
	for _, f := range []string{"code", "symbols[1].name", "generator.reductions[1].callee", "machine.stack_words[0].value", "expect.note"} {
		if !fields[f] {
			t.Errorf("no cut was reported in field %s (reported: %d fields)", f, len(fields))
		}
	}
	if _, err := Parse("whole.json", b[:whole]); err != nil {
		t.Errorf("the whole document without its newline: %v", err)
	}
}

// A byte changed anywhere is a clean error naming a field and an offset,
// or a case that still reads (a changed hex digit, a letter of a note):
// never a panic.
func TestCorruptAtEveryOffset(t *testing.T) {
	t.Parallel()
	b := saved(t)
	refused := 0
	for i := range b {
		for _, x := range []byte{'#', '"', '9', '{'} {
			if b[i] == x {
				continue
			}
			bad := append([]byte(nil), b...)
			bad[i] = x
			c, err := Parse("bad.json", bad)
			var fe *FormatError
			switch {
			case err == nil:
				if _, err := c.Image(); err != nil {
					t.Fatalf("byte %d = %q: read, but its image fails: %v", i, x, err)
				}
			case errors.As(err, &fe) && fe.Field != "" && fe.Offset >= -1 && fe.Offset <= int64(len(bad)):
				refused++
			default:
				t.Fatalf("byte %d = %q: %v", i, x, err)
			}
		}
	}
	if refused < len(b) {
		t.Errorf("only %d of %d corruptions refused", refused, 4*len(b))
	}
}

func TestErrorsNameFieldAndOffset(t *testing.T) {
	t.Parallel()
	b := string(saved(t))
	for _, tc := range []struct{ name, from, to, field string }{
		{"bad hex", `"code": "c0e5`, `"code": "zz`, "code"},
		{"bad address", `"entry": "0x10000000"`, `"entry": "banana"`, "entry"},
		{"bad verdict", `"verdict": "WRONG"`, `"verdict": "MAYBE"`, "verdict"},
		{"bad frame", `"frame": 1`, `"frame": "one"`, "frame"},
		{"unknown field", `"target"`, `"targte"`, "targte"},
		{"bad target", `"target": "s390x"`, `"target": "vax"`, "target"},
		{"entry outside code", `"entry": "0x10000000"`, `"entry": "0x20000000"`, "entry"},
		{"bad machine register", `"15": "0x70fff000"`, `"51": "0x70fff000"`, "machine.registers.51"},
		{"word outside the stack", `"addr": "0x70fff008"`, `"addr": "0x71fff008"`, "machine.stack_words[0].addr"},
		{"bad symbol", `"name": "_start"`, `"name": 5`, "symbols[0].name"},
		{"bad reduction", `"n": 2`, `"n": "two"`, "generator.reductions[0].n"},
		{"unknown nested field", `"callee": "f2"`, `"calee": "f2"`, "generator.reductions[1].calee"},
		{"bad word", `"value": "0x10000004"`, `"value": "0x1g"`, "machine.stack_words[0].value"},
		{"trailing data", "", "", "the document"},
	} {
		bad := strings.Replace(b, tc.from, tc.to, 1)
		if tc.from == "" {
			bad = b + "{}"
		}
		if bad == b {
			t.Fatalf("%s: %q not in the file", tc.name, tc.from)
		}
		_, err := Parse("f.json", []byte(bad))
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Offset < 0 {
			t.Errorf("%s: %v, want field %s and an offset", tc.name, err, tc.field)
			continue
		}
		// The offset points into the field the error names.
		key := `"` + lastKey(tc.field) + `"`
		at := strings.LastIndex(bad[:min(int(fe.Offset)+len(key), len(bad))], key)
		if tc.field != "the document" && (at < 0 || int(fe.Offset)-at > 40) {
			t.Errorf("%s: offset %d is not at field %s: %q", tc.name, fe.Offset, tc.field, bad[max(0, fe.Offset-30):min(len(bad), int(fe.Offset)+10)])
		}
	}
}

func lastKey(path string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 && path[i] == '.' {
		return path[i+1:]
	}
	if i := strings.IndexByte(path, '['); i >= 0 {
		return path[:i]
	}
	return path
}

// A file of a newer format is refused for its version, whatever fields
// it has; an older one still reads.
func TestFormatVersions(t *testing.T) {
	t.Parallel()
	b := string(saved(t))
	newer := strings.Replace(b, `"format": "sfconform-case/3"`, `"format": "sfconform-case/4",
  "field_of_the_future": {"x": 1}`, 1)
	_, err := Parse("new.json", []byte(newer))
	if !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "needs a reader of version 4") || !strings.Contains(err.Error(), "field format") {
		t.Errorf("version 4: %v", err)
	}
	for _, f := range []string{"sfconform-case/0", "sfconform-case/x", "other/2"} {
		if _, err := Parse("f.json", []byte(strings.Replace(b, FormatName, f, 1))); err == nil || !strings.Contains(err.Error(), "field format") {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Version 1, as sfconform wrote it before version 2 existed.
	old := filepath.Join("testdata", "v1-x86-64-gas-2.44-builtin-seed11-step0.json")
	c, err := Load(old)
	if err != nil {
		t.Fatal(err)
	}
	img, err := c.Image()
	if err != nil {
		t.Fatal(err)
	}
	if c.Format != "sfconform-case/1" || c.Producer != "gas-2.44" || c.Verdict != verdict.Wrong || len(img.Code) == 0 || c.Record == nil || c.Generator != nil {
		t.Errorf("version 1 case read as %+v", c)
	}
	// Version 2, as sfconform wrote it before modules (a stored matrix
	// case): one section, no modules.
	c, err = Load(filepath.Join("testdata", "v2-aarch64-builtin-v2-glibc-fp-frame-ERROR.json"))
	if err != nil {
		t.Fatal(err)
	}
	if img, err = c.Image(); err != nil {
		t.Fatal(err)
	}
	if c.Format != "sfconform-case/2" || len(img.SFrame) == 0 || img.Modules != nil || len(img.Sections()) != 1 {
		t.Errorf("version 2 case read as format %s, %d section bytes, %d modules", c.Format, len(img.SFrame), len(img.Modules))
	}
}

// TestModulesRoundTrip: a case of a multi-module image keeps every
// module (v3), and a case whose modules overlap is refused naming the
// field.
func TestModulesRoundTrip(t *testing.T) {
	t.Parallel()
	c := fullCase()
	img := sampleImage()
	img.Modules = []image.Module{
		{Name: "exe", Start: img.CodeAddr, End: img.CodeAddr + 4, SFrame: img.SFrame, SFrameAddr: img.SFrameAddr},
		{Name: "lib1.so", Start: img.CodeAddr + 4, End: img.CodeAddr + uint64(len(img.Code)), SFrame: []byte{0xe2, 0xde}, SFrameAddr: 0x20000000},
	}
	img.SFrame, img.SFrameAddr = nil, 0
	c.SetImage(img, 0)
	p, err := Save(t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := got.Image()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Modules, img.Modules) || len(back.SFrame) != 0 {
		t.Errorf("modules after a round trip: %+v, want %+v", back.Modules, img.Modules)
	}
	b, _ := os.ReadFile(p)
	bad := strings.Replace(string(b), `"name": "lib1.so"`, `"name": "lib 1"`, 1)
	if _, err := Parse("bad.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), "field modules") {
		t.Errorf("a module name with a space: %v", err)
	}
}

// A write that fails half way (a full disk) leaves no file behind, under
// the case's name or any other.
func TestSaveIsAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := func(f *os.File, b []byte) error {
		f.Write(b[:len(b)/2])
		return syscall.ENOSPC
	}
	if _, err := save(dir, fullCase(), full); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a full disk: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed save left %v", left)
	}
	// Saves of one case racing: each gets a name of its own, whole.
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := Save(dir, fullCase())
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			t.Errorf("two saves wrote %s", p)
		}
		seen[p] = true
		if _, err := Load(p); err != nil {
			t.Error(err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != len(paths) {
		t.Errorf("%d files after %d saves", len(left), len(paths))
	}
}

func TestMachineRoundTrip(t *testing.T) {
	t.Parallel()
	for _, be := range []bool{false, true} {
		s := &machine.Snapshot{StackAddr: 0x70ffef00, Stack: make([]byte, 64), BigEndian: be}
		s.Regs.PC = 0x10000004
		s.Regs.Set(7, 0x70ffef10)
		s.Regs.Set(6, 0)
		s.Stack[16], s.Stack[23], s.Stack[40] = 0x24, 0x10, 0xff
		back := MachineOf(s).Snapshot()
		if !reflect.DeepEqual(back, s) {
			t.Errorf("big endian %v: %+v, want %+v", be, back, s)
		}
	}
}
