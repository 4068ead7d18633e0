package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
)

// The golden fixtures of the sframe package: bare sections copied out by
// objcopy, their addresses and GNU objdump's dump of them.
const fixtureDir = "../../sframe/testdata/gas-2.40"

func runDumpCmd(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = runDump(args, &o, &e)
	return o.String(), e.String(), code
}

func TestDumpRawMatchesObjdump(t *testing.T) {
	t.Parallel()
	stems, err := filepath.Glob("../../sframe/testdata/gas-*/*/prologues.sframe")
	if err != nil || len(stems) == 0 {
		t.Fatalf("no fixtures found (%v)", err)
	}
	for _, sec := range stems {
		stem := strings.TrimSuffix(sec, ".sframe")
		addr, err := os.ReadFile(stem + ".sframe.addr")
		if err != nil {
			t.Fatalf("fixture missing: %v", err)
		}
		want, err := os.ReadFile(stem + ".objdump.txt")
		if err != nil {
			t.Fatalf("fixture missing: %v", err)
		}
		// Flags after FILE work too.
		out, errOut, code := runDumpCmd("--raw", sec, "--base", strings.TrimSpace(string(addr)))
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", stem, code, errOut)
		}
		if out != string(want) {
			t.Errorf("%s: dump differs from objdump's:\n got: %q\nwant: %q", stem, out, want)
		}
	}
}

func TestDumpJSON(t *testing.T) {
	t.Parallel()
	stem := filepath.Join(fixtureDir, "x86-64", "prologues")
	out, errOut, code := runDumpCmd("--json", "--raw", "--base", "0x1000", stem+".sframe")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Sections []struct {
			Version   int    `json:"version"`
			ABI       string `json:"abi"`
			Functions []struct {
				Rows []json.RawMessage `json:"rows"`
			} `json:"functions"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(v.Sections) != 1 || v.Sections[0].Version != 1 || v.Sections[0].ABI != "x86-64" || len(v.Sections[0].Functions) == 0 {
		t.Errorf("unexpected JSON: %s", out)
	}
}

func TestDumpELF(t *testing.T) {
	t.Parallel()
	as := testenv.LookPath(t, "x86_64-linux-gnu-as", testenv.HostPackages)
	ld := testenv.LookPath(t, "x86_64-linux-gnu-ld", testenv.HostPackages)
	objdump := testenv.LookPath(t, "objdump", testenv.HostPackages)
	dir := t.TempDir()
	s, o, exe := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o"), filepath.Join(dir, "p")
	src := ".text\n.globl _start\n_start:\n.cfi_startproc\npushq %rbp\n.cfi_def_cfa_offset 16\n.cfi_offset %rbp, -16\npopq %rbp\n.cfi_def_cfa_offset 8\nret\n.cfi_endproc\n"
	if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{as, "--gsframe", "-o", o, s}, {ld, "-o", exe, o}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	od, err := exec.Command(objdump, "--sframe", exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := string(od[bytes.Index(od, []byte("Contents of")):])
	out, errOut, code := runDumpCmd(exe)
	if code != exitOK || out != want {
		t.Errorf("exit %d (%s); got\n%s\nwant\n%s", code, errOut, out, want)
	}
}

func TestDumpErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short.sframe")
	// A v2 x86-64 header cut after 12 bytes.
	if err := os.WriteFile(short, []byte{0xe2, 0xde, 2, 1, 3, 0, 0xf8, 0, 1, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	notELF := filepath.Join(dir, "text")
	if err := os.WriteFile(notELF, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string // in stderr
	}{
		{[]string{}, []string{"exactly 1 argument"}},
		{[]string{"--raw", short}, []string{"--base"}},
		{[]string{"--base", "0x10", short}, []string{"--raw"}},
		{[]string{"--raw", "--base", "zz", short}, []string{"zz"}},
		{[]string{"--raw", "--base", "0", short}, []string{short, "offset"}},
		{[]string{"--raw", "--base", "0", filepath.Join(dir, "absent")}, []string{"absent"}},
		{[]string{notELF}, []string{notELF, "ELF"}},
	} {
		out, errOut, code := runDumpCmd(c.args...)
		if code != exitSetup {
			t.Errorf("%v: exit %d, want %d", c.args, code, exitSetup)
		}
		if out != "" {
			t.Errorf("%v: printed on stdout: %q", c.args, out)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not mention %q", c.args, errOut, w)
			}
		}
	}
}

// dump --elf wraps a bare section in the dumper consumers' ELF file: it
// reads back as the same section at the same address, and dumps as the
// bare section does.
func TestDumpWritesELF(t *testing.T) {
	t.Parallel()
	for _, sec := range []string{"../../sframe/testdata/gas-2.47.50/s390x/prologues.sframe", "../../sframe/testdata/gas-2.44/x86-64/plt.sframe"} {
		addr, err := os.ReadFile(strings.TrimSuffix(sec, ".sframe") + ".sframe.addr")
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSpace(string(addr))
		out := filepath.Join(t.TempDir(), "s.elf")
		if _, stderr, code := runDumpCmd("--raw", "--base", base, "--elf", out, sec); code != exitOK {
			t.Fatalf("%s: exit %d: %s", sec, code, stderr)
		}
		fromELF, stderr, code := runDumpCmd(out)
		if code != exitOK {
			t.Fatalf("dump of the written ELF file: exit %d: %s", code, stderr)
		}
		fromRaw, _, _ := runDumpCmd("--raw", "--base", base, sec)
		if fromELF != fromRaw || !strings.Contains(fromELF, "func idx [0]") {
			t.Errorf("%s: the ELF file dumps as\n%s\nthe bare section as\n%s", sec, fromELF, fromRaw)
		}
	}
	for _, args := range [][]string{
		{"--elf", "x.elf", "f"},                                   // no --raw
		{"--raw", "--base", "0", "--elf", "x.elf", "--json", "f"}, // nothing to print JSON of
	} {
		if _, _, code := runDumpCmd(args...); code != exitSetup {
			t.Errorf("dump %v: exit %d, want %d", args, code, exitSetup)
		}
	}
}
