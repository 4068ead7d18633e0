package sframe

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Cross-checks of Dump against GNU objdump --sframe: small programs are
// assembled with --gsframe and linked by each GNU toolchain found, and the
// tool's dump of the executable and of the object must equal Dump of
// ReadELF's table, byte for byte, from "Contents of the SFrame section" on.
//
// Toolchains: the host's binutils (x86_64-linux-gnu-as, -ld, -objdump, ...) and
// every $SFCONFORM_TOOLCHAINS/binutils-<version>/bin/<triple>-{as,ld,objdump}
// (default /var/cache/sfconform/toolchains).

type extToolchain struct {
	name       string
	as, ld, od func(triple string) string // "" when missing
}

func lookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

func existing(p string) string {
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// toolchainRoot is where setup provisions the toolchains:
// $SFCONFORM_TOOLCHAINS, else $SFCONFORM_CACHE/toolchains, else the
// default cache (the toolchain package reads the same variables).
func toolchainRoot() string {
	if root := os.Getenv("SFCONFORM_TOOLCHAINS"); root != "" {
		return root
	}
	cache := os.Getenv("SFCONFORM_CACHE")
	if cache == "" {
		cache = "/var/cache/sfconform"
	}
	return filepath.Join(cache, "toolchains")
}

// missingTool ends a test for lack of a tool that setup provides: a skip
// for a bare go test, a failure once SFCONFORM_REQUIRE_SETUP=1 says setup
// has run (make test sets it). The sframe package imports nothing of the
// project, so this is its own copy of internal/testenv's rule.
func missingTool(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	switch v := os.Getenv("SFCONFORM_REQUIRE_SETUP"); v {
	case "", "0":
		t.Skipf("%s: run 'make setup' for this test; skipping", msg)
	case "1":
		t.Fatalf("%s, although SFCONFORM_REQUIRE_SETUP=1 says setup has run: run 'make setup'", msg)
	default:
		t.Fatalf("%s; and SFCONFORM_REQUIRE_SETUP=%q: want 1 or unset", msg, v)
	}
}

func extToolchains() []extToolchain {
	var tcs []extToolchain
	if lookPath("objdump") != "" {
		tcs = append(tcs, extToolchain{
			name: "host",
			as:   func(tr string) string { return lookPath(tr + "-as") },
			ld:   func(tr string) string { return lookPath(tr + "-ld") },
			// The triple's own objdump: the host's plain objdump may read a
			// foreign object only as generic ELF, its relocations unapplied.
			od: func(tr string) string { return lookPath(tr + "-objdump") },
		})
	}
	root := toolchainRoot()
	dirs, _ := filepath.Glob(filepath.Join(root, "binutils-*", "bin"))
	sort.Strings(dirs)
	for _, d := range dirs {
		tool := func(name string) func(string) string {
			return func(tr string) string { return existing(filepath.Join(d, tr+"-"+name)) }
		}
		tcs = append(tcs, extToolchain{name: filepath.Base(filepath.Dir(d)), as: tool("as"), ld: tool("ld"), od: tool("objdump")})
	}
	return tcs
}

type extTarget struct {
	name, triple string
	flags        []string // for as and ld
}

var extTargets = []extTarget{
	{"x86-64", "x86_64-linux-gnu", nil},
	{"aarch64", "aarch64-linux-gnu", nil},
	{"aarch64_be", "aarch64-linux-gnu", []string{"-EB"}},
	{"s390x", "s390x-linux-gnu", nil},
}

// extSources are assembly programs per target family; each defines
// _start.
var extSources = map[string]map[string]string{
	"x86_64-linux-gnu": {
		"frames": `
	.text
	.globl _start
	.type _start,@function
_start:
	.cfi_startproc
	.cfi_undefined rip
	xorl %ebp, %ebp
	call f1
	hlt
	.cfi_endproc
	.size _start, .-_start

	.type f1,@function
f1:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	call f2
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size f1, .-f1

	.type f2,@function
f2:
	.cfi_startproc
	subq $24, %rsp
	.cfi_def_cfa_offset 32
	addq $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size f2, .-f2

	.type big,@function
big:
	.cfi_startproc
	pushq %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	subq $4096, %rsp
	.cfi_def_cfa_offset 4112
	.rept 300
	nop
	.endr
	addq $4096, %rsp
	.cfi_def_cfa_offset 16
	popq %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size big, .-big
`,
		"signal": `
	.text
	.globl _start
_start:
	.cfi_startproc
	.cfi_signal_frame
	nop
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	popq %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
`,
	},
	"aarch64-linux-gnu": {
		"frames": `
	.text
	.globl _start
	.type _start,@function
_start:
	.cfi_startproc
	.cfi_undefined x30
	bl f1
	b .
	.cfi_endproc
	.size _start, .-_start

	.type f1,@function
f1:
	.cfi_startproc
	.cfi_b_key_frame
	hint 27
	.cfi_negate_ra_state
	stp x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	.cfi_def_cfa_register 29
	bl f2
	ldp x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	hint 31
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size f1, .-f1

	.type f2,@function
f2:
	.cfi_startproc
	hint 25
	.cfi_negate_ra_state
	sub sp, sp, #16
	.cfi_def_cfa_offset 16
	str x30, [sp, 8]
	.cfi_offset 30, -8
	ldr x30, [sp, 8]
	.cfi_restore 30
	add sp, sp, #16
	.cfi_def_cfa_offset 0
	hint 29
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size f2, .-f2
`,
	},
	"s390x-linux-gnu": {
		"frames": `
	.text
	.globl _start
	.type _start,@function
_start:
	.cfi_startproc
	.cfi_undefined 14
	brasl %r14,fn
	j .
	.cfi_endproc
	.size _start, .-_start

	.type fn,@function
fn:
	.cfi_startproc
	stmg %r11,%r15,88(%r15)
	.cfi_offset 11,-72
	.cfi_offset 14,-48
	.cfi_offset 15,-40
	aghi %r15,-160
	.cfi_def_cfa_offset 320
	lgr %r11,%r15
	.cfi_def_cfa_register 11
	brasl %r14,leaf
	lmg %r11,%r15,248(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa 15,160
	br %r14
	.cfi_endproc
	.size fn, .-fn

	.type leaf,@function
leaf:
	.cfi_startproc
	ldgr %f8,%r14
	.cfi_register 14, 24
	ldgr %f9,%r11
	.cfi_register 11, 28
	lgdr %r11,%f9
	.cfi_restore 11
	lgdr %r14,%f8
	.cfi_restore 14
	br %r14
	.cfi_endproc
	.size leaf, .-leaf
`,
	},
}

// runObjdumpSFrame returns objdump's output from "Contents of the SFrame
// section" on.
func runObjdumpSFrame(t *testing.T, od, exe string) string {
	t.Helper()
	out, err := exec.Command(od, "--sframe", exe).CombinedOutput()
	if err != nil {
		t.Fatalf("%s --sframe %s: %v\n%s", od, exe, err, out)
	}
	i := bytes.Index(out, []byte("Contents of the SFrame section"))
	if i < 0 {
		t.Fatalf("%s --sframe %s printed no SFrame section:\n%s", od, exe, out)
	}
	return string(out[i:])
}

func TestDumpMatchesObjdump(t *testing.T) {
	t.Parallel()
	tcs := extToolchains()
	if len(tcs) == 0 {
		missingTool(t, "no GNU binutils found (objdump, <triple>-as, <triple>-ld) for the cross-check with objdump --sframe (ci/setup.sh steps 1 and 4)")
	}
	ran := 0
	for _, tc := range tcs {
		for _, tg := range extTargets {
			as, ld, od := tc.as(tg.triple), tc.ld(tg.triple), tc.od(tg.triple)
			if as == "" || ld == "" || od == "" {
				if tc.name != "host" && os.Getenv("SFCONFORM_REQUIRE_SETUP") == "1" {
					t.Errorf("%s lacks the assembler, linker or objdump for %s (as %q ld %q objdump %q): run 'make setup'", tc.name, tg.triple, as, ld, od)
				}
				continue
			}
			names := make([]string, 0, len(extSources[tg.triple]))
			for n := range extSources[tg.triple] {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				src := extSources[tg.triple][name]
				t.Run(tc.name+"/"+tg.name+"/"+name, func(t *testing.T) {
					dir := t.TempDir()
					s, o, exe := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o"), filepath.Join(dir, "p")
					if err := os.WriteFile(s, []byte(src), 0o644); err != nil {
						t.Fatal(err)
					}
					args := append(append([]string{"--gsframe"}, tg.flags...), "-o", o, s)
					if out, err := exec.Command(as, args...).CombinedOutput(); err != nil {
						if bytes.Contains(out, []byte("not supported")) {
							t.Skipf("%s: SFrame not supported for %s: %s", as, tg.name, bytes.TrimSpace(out))
						}
						t.Fatalf("%s %v: %v\n%s", as, args, err, out)
					}
					args = append(append([]string{}, tg.flags...), "-e", "_start", "-o", exe, o)
					if out, err := exec.Command(ld, args...).CombinedOutput(); err != nil {
						t.Fatalf("%s %v: %v\n%s", ld, args, err, out)
					}
					// The executable, and the object with its relocations.
					for _, file := range []string{exe, o} {
						want := runObjdumpSFrame(t, od, file)
						tab, err := ReadELF(file)
						if err != nil {
							t.Fatal(err)
						}
						var b bytes.Buffer
						if err := Dump(&b, tab, ".sframe"); err != nil {
							t.Fatal(err)
						}
						if got := b.String(); got != want {
							t.Errorf("%s: Dump differs from %s --sframe:\n%s\nobjdump:\n%s", filepath.Base(file), od, dumpLineDiff(got, want), want)
						}
					}
				})
				ran++
			}
		}
	}
	if ran == 0 {
		missingTool(t, "no toolchain has an assembler, linker and objdump for any target (ci/setup.sh steps 1 and 4)")
	}
}

func TestReadELFErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notELF := filepath.Join(dir, "not-elf")
	if err := os.WriteFile(notELF, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadELF(notELF)
	if err == nil || !strings.Contains(err.Error(), notELF) || !strings.Contains(err.Error(), "ELF") {
		t.Errorf("not an ELF file: %v", err)
	}
	_, err = ReadELF(filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
	as, ld := lookPath("x86_64-linux-gnu-as"), lookPath("x86_64-linux-gnu-ld")
	if as == "" || ld == "" {
		missingTool(t, "x86_64-linux-gnu-as/ld absent for the ELF cases (ci/setup.sh step 1)")
	}
	s, o := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o")
	if err := os.WriteFile(s, []byte(".text\n.globl _start\n_start:\n.cfi_startproc\nret\n.cfi_endproc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without --gsframe: no .sframe.
	if out, err := exec.Command(as, "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	_, err = ReadELF(o)
	if !errors.Is(err, ErrNoSection) || !strings.Contains(err.Error(), o) {
		t.Errorf("no .sframe: %v", err)
	}

	// A bad version byte (offset 2 of the section): the error gives the
	// offset in the section and in the file.
	exe := filepath.Join(dir, "p")
	for _, c := range [][]string{{as, "--gsframe", "-o", o, s}, {ld, "-o", exe, o}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	secOff := ef.Section(".sframe").Offset
	ef.Close()
	img, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	img[secOff+2] = 0x7f
	if err := os.WriteFile(exe, img, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadELF(exe)
	var ee *ELFError
	if !errors.As(err, &ee) || !errors.Is(err, ErrBadVersion) {
		t.Fatalf("bad version: %v", err)
	}
	if ee.FileOff != int64(secOff)+2 || !strings.Contains(err.Error(), exe) ||
		!strings.Contains(err.Error(), "section byte offset 2 ") ||
		!strings.Contains(err.Error(), fmt.Sprintf("file offset %d ", secOff+2)) {
		t.Errorf("bad version at file offset %d: %v", secOff+2, err)
	}
}

// TestDumpMatchesObjdumpLLVM dumps the version 2 objects of LLVM's
// assembler (llvm-mc --gsframe, x86-64; PC-relative starts) and compares
// with the newest binutils objdump found, the only kind that reads them.
func TestDumpMatchesObjdumpLLVM(t *testing.T) {
	t.Parallel()
	root := toolchainRoot()
	mcs, _ := filepath.Glob(filepath.Join(root, "llvm-*", "bin", "llvm-mc"))
	ods, _ := filepath.Glob(filepath.Join(root, "binutils-2.4[5-9]*", "bin", "x86_64-linux-gnu-objdump"))
	if len(mcs) == 0 || len(ods) == 0 {
		if os.Getenv("SFCONFORM_SKIP_LLVM") == "1" {
			t.Skip("SFCONFORM_SKIP_LLVM=1: setup left llvm-mc out")
		}
		missingTool(t, "no llvm-mc or no objdump 2.45+ under %s (ci/setup.sh steps 4 and 5)", root)
	}
	sort.Strings(ods)
	od := ods[len(ods)-1]
	for _, mc := range mcs {
		for _, name := range []string{"frames", "signal"} {
			t.Run(filepath.Base(filepath.Dir(filepath.Dir(mc)))+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				s, o := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o")
				if err := os.WriteFile(s, []byte(extSources["x86_64-linux-gnu"][name]), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(mc, "-triple=x86_64-linux-gnu", "-filetype=obj", "--gsframe", "-o", o, s).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", mc, err, out)
				}
				want := runObjdumpSFrame(t, od, o)
				tab, err := ReadELF(o)
				if err != nil {
					t.Fatal(err)
				}
				if v := tab.Sections[0].Header.Version; v != Version2 {
					t.Logf("llvm-mc wrote version %d", v)
				}
				var b bytes.Buffer
				if err := Dump(&b, tab, ".sframe"); err != nil {
					t.Fatal(err)
				}
				if got := b.String(); got != want {
					t.Errorf("Dump differs from %s --sframe:\n%s\nobjdump:\n%s", od, dumpLineDiff(got, want), want)
				}
			})
		}
	}
}
