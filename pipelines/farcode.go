package pipelines

import (
	"debug/elf"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// farCode: code and .sframe far apart. SFrame versions 1 and 2 hold an
// FDE's function start as a 32-bit offset, version 3 as a 64-bit one
// (spec: sfde_func_start_address / _offset), so a .sframe placed more
// than 2 GiB (and 4 GiB) from the code it describes is what tells them
// apart. Cases (excpt, -O2 -g, no PIE):
//   - -mcmodel=large with the default layout (x86-64, aarch64; s390x's
//     gcc has no -mcmodel);
//   - .sframe 2 GiB and 4 GiB above the end of the program, by ld's own
//     default linker script with only .sframe moved (appended after the
//     end of the data);
//   - large code model with one object's .text renamed .ltext (the large
//     model's text section), placed by ld, and placed 4 GiB above the
//     rest (a link that fails without --gsframe too is not possible: gcc
//     12's .eh_frame and its jumps into .text.unlikely are 32-bit
//     PC-relative even in the large model).
func (b *build) farCode() []Row {
	var rows []Row
	large := b.tg != target.S390X
	opts := []string{"-O2", "-g", "-no-pie"}
	if large {
		out := b.out("large")
		c, err := b.compile(true, out, append([]string{"-mcmodel=large", "-fno-pie"}, opts...), "excpt.cc", "excpt2.cc")
		rows = append(rows, b.farRow("excpt: -mcmodel=large, default layout", out, []string{c}, err))
	} else {
		rows = append(rows, Row{Scenario: FarCode, Case: "excpt: -mcmodel=large", Toolchain: b.tc.Name, Target: b.tg.Name(),
			Status: NotPossible, Detail: b.cc + " has no -mcmodel option (s390x code reaches ±4 GiB PC-relative)"})
	}
	tmpl, cmd, err := b.defaultScript()
	if err != nil {
		return append(rows, b.fail(FarCode, "linker script", []string{cmd}, err))
	}
	for _, d := range []struct {
		name string
		dist uint64
	}{{"2 GiB", 1 << 31}, {"4 GiB", 1 << 32}} {
		script := b.out("far-sframe-" + strings.Fields(d.name)[0] + ".ld")
		s := afterEnd(withoutSFrame(tmpl), fmt.Sprintf("  . = ALIGN(0x1000) + 0x%x;\n  .sframe : { KEEP (*(.sframe)) *(.sframe.*) }", d.dist))
		if err := os.WriteFile(script, []byte(s), 0o644); err != nil {
			return append(rows, b.fail(FarCode, "linker script", nil, err))
		}
		out := b.out("far-sframe-" + strings.Fields(d.name)[0])
		c, err := b.compile(true, out, append(append([]string(nil), opts...), "-Wl,-T,"+script), "excpt.cc", "excpt2.cc")
		rows = append(rows, b.farRow("excpt: .sframe "+d.name+" above the code (ld's default script, .sframe moved)", out, []string{cmd, c}, err))
	}
	if !large {
		return append(rows, Row{Scenario: FarCode, Case: "excpt: .ltext 4 GiB away", Toolchain: b.tc.Name, Target: b.tg.Name(),
			Status: NotPossible, Detail: b.cc + " has no large code model: calls between code 4 GiB apart cannot be linked"})
	}
	o1, o2, o2l := b.out("ltext-excpt.o"), b.out("ltext-excpt2.o"), b.out("ltext-excpt2-ltext.o")
	lopts := []string{"-O2", "-g", "-mcmodel=large", "-fno-pie", "-c"}
	c1, err1 := b.compile(true, o1, lopts, "excpt.cc")
	c2, err2 := b.compile(true, o2, lopts, "excpt2.cc")
	cmds := []string{cmd, c1, c2}
	if err := firstErr(err1, err2); err != nil {
		return append(rows, b.fail(FarCode, "excpt: .ltext", cmds, err))
	}
	c3, _, err := b.run(b.objcopy, "--rename-section", ".text=.ltext", o2, o2l)
	cmds = append(cmds, c3)
	if err != nil {
		return append(rows, b.fail(FarCode, "excpt: .ltext", cmds, err))
	}
	// ld places .ltext as an orphan next to .text: the large model's
	// section, linked as usual.
	near := b.out("ltext-near")
	c4, err := b.compile(true, near, []string{"-no-pie"}, o1, o2l)
	rows = append(rows, b.farRow("excpt: -mcmodel=large, excpt2.o's .text renamed .ltext (placed by ld)", near, append(cmds, c4), err))
	// .ltext 4 GiB above the rest, by ld's default script: the link must
	// work without SFrame for the case to say anything about SFrame.
	script := b.out("far-ltext.ld")
	s := afterEnd(tmpl, "  . = ALIGN(0x1000) + 0x100000000;\n  .ltext : { *(.ltext .ltext.*) }")
	if err := os.WriteFile(script, []byte(s), 0o644); err != nil {
		return append(rows, b.fail(FarCode, "linker script", nil, err))
	}
	const far = "excpt: -mcmodel=large, excpt2.o's .text renamed .ltext, 4 GiB above the rest"
	out := b.out("far-ltext")
	c5, err := b.compile(true, out, []string{"-no-pie", "-Wl,-T," + script}, o1, o2l)
	if err == nil {
		return append(rows, b.farRow(far, out, append(cmds, c5), nil))
	}
	// The same objects assembled without --gsframe.
	n1, n2, n2l, nout := b.out("ltext-nosf-excpt.o"), b.out("ltext-nosf-excpt2.o"), b.out("ltext-nosf-excpt2-ltext.o"), b.out("far-ltext-nosf")
	var ncmds []string
	var nerr error
	for _, a := range [][]string{
		append([]string{b.cxx, "-B" + b.bdir + "/", "-o", n1}, append(lopts, b.src("excpt.cc"))...),
		append([]string{b.cxx, "-B" + b.bdir + "/", "-o", n2}, append(lopts, b.src("excpt2.cc"))...),
		{b.objcopy, "--rename-section", ".text=.ltext", n2, n2l},
		{b.cxx, "-B" + b.bdir + "/", "-no-pie", "-Wl,-T," + script, "-o", nout, n1, n2l},
	} {
		c, _, err := b.run(a[0], a[1:]...)
		ncmds = append(ncmds, c)
		if err != nil {
			nerr = err
			break
		}
	}
	if nerr != nil {
		rw := b.fail(FarCode, far, append(append(cmds, c5), ncmds...), nerr)
		rw.Detail = "the link fails without --gsframe too: " + oneLine(nerr.Error())
		return append(rows, rw)
	}
	return append(rows, b.farRow(far, out, append(cmds, c5), err))
}

// endMark is the statement of ld's default script after which sections
// are appended: the end of the program's data ("_end = .;", s390x's
// "_end = ALIGN(2);").
var endMark = regexp.MustCompile(`(?m)^\s*_end = [^;]*;`)

// afterEnd inserts text on a line of its own after script's endMark.
func afterEnd(script, text string) string {
	loc := endMark.FindStringIndex(script)
	return script[:loc[1]] + "\n" + text + "\n" + script[loc[1]:]
}

var scriptBody = regexp.MustCompile(`(?s)\n=+\n(.*)\n=+\n`)

// defaultScript is the ld's default linker script for a program without
// PIE (ld --verbose).
func (b *build) defaultScript() (string, string, error) {
	args := append(append([]string{}, b.tc.LDFlags...), "--verbose")
	c, out, err := b.run(b.tc.LD, args...)
	if err != nil {
		return "", c, err
	}
	m := scriptBody.FindStringSubmatch(out)
	if m == nil {
		return "", c, fmt.Errorf("%s: no script between ===== lines", c)
	}
	if !endMark.MatchString(m[1]) {
		return "", c, fmt.Errorf("%s: the default script has no %q", c, endMark)
	}
	return m[1], c + " (the default script)", nil
}

// withoutSFrame is a linker script without its .sframe statements.
func withoutSFrame(script string) string {
	var lines []string
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), ".sframe ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// sframeAddr is the address of path's .sframe section.
func sframeAddr(path string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	if s := f.Section(".sframe"); s != nil {
		return s.Addr
	}
	return 0
}

// farRow judges a far-code link: a link ld refuses is a finding, with
// ld's message.
func (b *build) farRow(cs, out string, cmds []string, err error) Row {
	if err != nil {
		rw := b.fail(FarCode, cs, cmds, err)
		rw.Status, rw.Detail = Finding, strings.Replace(rw.Detail, "build failed", "the link failed", 1)
		return rw
	}
	r, err := b.judge(out)
	rw := row(FarCode, cs, b.tc, b.tg, r, err)
	rw.Commands = cmds
	if err == nil && len(r.Sections) > 0 {
		rw.Detail = strings.TrimPrefix(fmt.Sprintf("%s; .sframe v%d at 0x%x", rw.Detail, r.Sections[0].Version, sframeAddr(out)), "; ")
	}
	rw.Control = b.control(out)
	return rw
}
