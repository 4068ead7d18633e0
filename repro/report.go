package repro

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/toolchain"
	"github.com/sfconform/sfconform/verdict"
)

// Report kinds: who is at fault, which decides the commands a report
// gives.
const (
	// KindToolchain: the assembler or linker wrote a row that differs
	// from what the code's CFI says (or no FDE): as, ld and objdump show
	// it.
	KindToolchain = "toolchain"
	// KindLibsframe: the section's row is right and libsframe reads it
	// wrong: a C program against libsframe's API shows it. It is the
	// kind of every consumer whose registry entry names libsframe as the
	// library it wraps (consumer.About.Library).
	KindLibsframe = "libsframe"
	// KindDumper: objdump, readelf or llvm-readobj prints the right
	// section wrong: the section in an ELF file and the dumper show it.
	KindDumper = "dumper"
	// KindOther: a consumer run through sfconform's protocol (glibc's
	// walker, an exec consumer) or sfconform itself: the replay command.
	KindOther = "other"
)

// Report is a case written up for a maintainer.
type Report struct {
	Case   *corpus.Case
	Path   string // the case file
	Replay *Replay
	Prog   *gen.Program    // regenerated from the case; nil for a version 1 case
	Tools  *producer.Tools // the toolchain that made the image; nil for sfconform's encoder
	Kind   string

	// Frame is the frame whose row is at fault (minimize.Culprit) and PC
	// where that row is looked up; Actual and Expected describe the
	// section's row there and the row the code's CFI gives.
	Frame            int
	PC               uint64
	Function         string
	Actual, Expected string
	actualRow        *sframe.Row // nil: no row
	expectedRow      *sframe.Row
	// Affected is the failure replayed with each provisioned producer (or
	// consumer) of the same kind.
	Affected []Affected
	// Dump is what the real objdump prints for the culprit function, when
	// the report ran its own commands (KindToolchain).
	Dump string

	consent Consent // what the user allowed the file to run
}

// Affected is one version tried.
type Affected struct {
	Name, Version, Result string
	Fails                 bool
}

// NewReport replays a case and works out the report's parts.
func NewReport(c *corpus.Case, path string, opt Options) (*Report, error) {
	r, err := Run(c, opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Case: c, Path: path, Replay: r, Tools: producer.ToolsOf(r.Img.Record), Frame: -1, consent: opt.Consent}
	if c.Generator != nil {
		if rep.Prog, err = Regenerate(c); err != nil {
			return nil, err
		}
	}
	rep.locate()
	rep.Kind = rep.kind()
	rep.affected()
	if rep.Kind == KindToolchain && rep.Prog != nil {
		rep.Dump, _ = rep.runObjdump()
	}
	return rep, nil
}

// locate finds the culprit frame, its lookup PC and the two rows there.
func (rep *Report) locate() {
	c, img := rep.Case, rep.Replay.Img
	k := c.Frame
	switch {
	case k > 0 && (c.Field == "pc" || c.Field == "sp" || c.Field == "fp"):
		k--
	case k >= len(c.Expected):
		k = len(c.Expected) - 1
	}
	if k < 0 || k >= len(c.Expected) {
		return
	}
	rep.Frame, rep.PC = k, LookupPC(c.Expected, k)
	rep.Function = img.Describe(rep.PC)
	rep.Actual, rep.actualRow = rowAt(img, rep.PC)
	if rep.Prog != nil {
		if ref, err := (producer.Builtin{Version: sframe.Version3}).Produce(rep.Prog); err == nil && slices.Equal(ref.Code, img.Code) {
			rep.Expected, rep.expectedRow = rowAt(ref, rep.PC)
		}
	}
	if rep.Expected == "" && c.ReferenceRow != "" {
		rep.Expected = c.ReferenceRow
	}
}

func rowAt(img *image.Image, pc uint64) (string, *sframe.Row) {
	sec, addr, _ := img.SectionAt(pc)
	t, err := sframe.Decode(sec, addr)
	if err != nil {
		return "the section does not decode: " + err.Error(), nil
	}
	_, row, err := t.FindRow(pc)
	if err != nil {
		return "no FDE or row covers the PC (" + err.Error() + ")", nil
	}
	return Rules(img.Target, row), &row
}

// sameRow compares what two rows say, not where they start.
func sameRow(a, b *sframe.Row) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Start, y.Start = 0, 0
	if !x.MangledRA {
		x.PAuthKey = 0
	}
	if !y.MangledRA {
		y.PAuthKey = 0
	}
	return x == y
}

// RowDiffers reports whether the section's row at the culprit PC is not
// the one the code's CFI gives: the producer is at fault.
func (rep *Report) RowDiffers() bool {
	return rep.Frame >= 0 && rep.Expected != "" && !sameRow(rep.actualRow, rep.expectedRow)
}

// about is the registry entry of the consumer called name.
func about(name string) consumer.About {
	a, _ := consumer.Lookup(name)
	return a
}

func (rep *Report) kind() string {
	cons := rep.Replay.Consumer
	switch {
	case rep.Tools != nil && rep.Prog != nil && rep.RowDiffers():
		return KindToolchain
	case about(cons).Library == KindLibsframe:
		return KindLibsframe
	case consumer.InFamily(cons):
		return KindDumper
	}
	return KindOther
}

// affected replays the case with every provisioned producer (for a
// toolchain's fault) or consumer (for a reader's) of the same kind.
func (rep *Report) affected() {
	c := rep.Case
	t, _ := c.TargetOf()
	switch rep.Kind {
	case KindToolchain:
		family := strings.TrimRightFunc(rep.Replay.Producer, func(r rune) bool { return r == '.' || r >= '0' && r <= '9' })
		for _, name := range producer.Names() {
			if !strings.HasPrefix(name, family) || !strings.HasSuffix(family, "-") {
				continue
			}
			p, err := producer.New(name)
			if err != nil {
				continue
			}
			if _, err := p.SFrameVersion(t); err != nil {
				rep.Affected = append(rep.Affected, Affected{Name: name, Result: "does not emit SFrame for " + t.Name() + ": " + firstLine(err.Error())})
				continue
			}
			rep.Affected = append(rep.Affected, rep.try(Options{Producer: name, Consumer: c.Consumer, Remake: name == c.Producer}))
		}
	case KindDumper:
		tool := strings.TrimRightFunc(rep.Replay.Consumer, func(r rune) bool { return r == '.' || r >= '0' && r <= '9' })
		for _, name := range consumer.Names() {
			if strings.HasPrefix(name, tool) && consumer.InFamily(name) {
				rep.Affected = append(rep.Affected, rep.try(Options{Consumer: name}))
			}
		}
	case KindLibsframe:
		// Every provisioned libsframe: the packaged one and the one built
		// from source (make binutils-src), when there.
		for _, name := range consumer.Names() {
			if about(name).Library == KindLibsframe {
				rep.Affected = append(rep.Affected, rep.try(Options{Consumer: name}))
			}
		}
	default:
		rep.Affected = append(rep.Affected, Affected{Name: rep.Replay.Consumer, Version: c.ConsumerVersion,
			Result: result(rep.Replay), Fails: rep.Replay.StillFails()})
	}
	for i := range rep.Affected {
		rep.Affected[i].Version = plainVersion(rep.Affected[i].Version)
	}
}

// tempELF and toolPath match, in a consumer's message, the file sfconform
// wrote the section into and the absolute paths of the provisioned tools.
var (
	tempELF  = regexp.MustCompile(`/tmp/sfconform-[^/\s]*/sframe\.elf`)
	toolPath = regexp.MustCompile(`/\S*/((?:x86_64|aarch64|s390x)-linux-gnu-[a-z]+)\b`)
)

// plainDetail is a consumer's message as a maintainer running the
// reproducer sees it: the section's file is repro.elf, the tools go by
// their names.
func plainDetail(d string) string {
	return toolPath.ReplaceAllString(tempELF.ReplaceAllString(d, "repro.elf"), "$1")
}

// plainVersion is a consumer's version without how sfconform reaches the
// library (", through sfconform's consumer/..."), which is not part of it.
func plainVersion(v string) string {
	v, _, _ = strings.Cut(v, ", through sfconform's")
	return v
}

func (rep *Report) try(opt Options) Affected {
	name := opt.Producer
	if name == "" {
		name = opt.Consumer
	}
	opt.Consent = rep.consent
	r, err := Run(rep.Case, opt)
	if err != nil {
		return Affected{Name: name, Result: firstLine(err.Error())}
	}
	a := Affected{Name: name, Result: result(r), Fails: r.SameFailure()}
	if opt.Producer != "" && r.Img.Record != nil {
		a.Version = r.Img.Record.Versions()
	} else if opt.Consumer != "" {
		if cons, err := consumer.New(opt.Consumer); err == nil {
			a.Version = consumer.Version(cons)
			cons.Close()
		}
	}
	return a
}

func result(r *Replay) string {
	switch {
	case r.SameFailure():
		return "fails the same way"
	case r.Failure != nil:
		return fmt.Sprintf("fails at the same step otherwise: %v %s", r.Failure.Judgement.Verdict, r.Failure.Judgement.Detail)
	case r.Res.LoadErr != nil:
		return "refuses the section: " + firstLine(r.Res.LoadErr.Error())
	case !r.Res.Clean():
		return "the step conforms; the program fails elsewhere"
	}
	return "conforms"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Title is the report's one-line title.
func (rep *Report) Title() string {
	c := rep.Case
	who := c.Producer
	if rep.Kind != KindToolchain {
		who = rep.Replay.Consumer
	}
	what := outcome(c)
	switch {
	case c.Verdict == verdict.NoInfo && rep.actualRow == nil:
		what = "no SFrame FDE"
	case rep.Kind == KindToolchain:
		what = "wrong SFrame row"
	}
	fn := rep.Function
	if fn == "" {
		fn = c.Function
	}
	return fmt.Sprintf("%s (%s): %s in %s", who, c.Target, what, cut2(fn))
}

// lookupWhere names what lies at the culprit's lookup PC: the instruction
// there, or for a caller (looked up at its return address - 1, inside the
// call) the call, whose bytes do not start at that PC.
func (rep *Report) lookupWhere() string {
	if k := rep.Frame; k > 0 && k-1 < len(rep.Case.Expected) && !rep.Case.Expected[k-1].Signal {
		return fmt.Sprintf("inside the call that returns to %#x", rep.PC+1)
	}
	return "`" + instruction(rep.Replay.Img, rep.PC) + "`"
}

// outcome says in words what the consumer did wrong (the verdict, for a
// reader who does not know sfconform's).
func outcome(c *corpus.Case) string {
	switch c.Verdict {
	case verdict.Wrong:
		if c.Field != "" {
			return "wrong " + c.Field + " of frame " + fmt.Sprint(c.Frame)
		}
		return "a wrong frame"
	case verdict.NoInfo:
		return "no row found"
	case verdict.Error:
		return "an error"
	case verdict.Invalid:
		return "the section refused"
	}
	return c.Verdict.String()
}

// Summary is the report's first paragraph: what the section holds and
// what the component does with it, without sfconform's terms.
func (rep *Report) Summary() string {
	c := rep.Case
	var b strings.Builder
	switch rep.Kind {
	case KindToolchain:
		fmt.Fprintf(&b, "On %s, %s builds the `.sframe` section of the program below from its `.cfi_*` directives. ", c.Target, c.ProducerVersion)
		fmt.Fprintf(&b, "At PC %#x (`%s`, %s) the section says: %s. The code and its CFI say: %s. ", rep.PC, rep.Function, rep.lookupWhere(), rep.Actual, rep.Expected)
	case KindLibsframe, KindDumper, KindOther:
		fmt.Fprintf(&b, "On %s, %s reads the `.sframe` section below (made by %s). ", c.Target, plainVersion(c.ConsumerVersion), c.ProducerVersion)
		if rep.Frame >= 0 {
			fmt.Fprintf(&b, "At PC %#x (`%s`) the section's row is: %s", rep.PC, rep.Function, rep.Actual)
			if rep.Expected != "" && !rep.RowDiffers() {
				b.WriteString(", which is what the code does")
			}
			b.WriteString(". ")
		}
	}
	if rep.Kind != KindToolchain {
		fmt.Fprintf(&b, "Asked for the stack when the program stops at PC %#x (`%s`, `%s`), it gives %s: %s.", uint64(c.PC), c.Function, c.Insn, outcome(c), firstLine(plainDetail(c.Detail)))
	}
	if rec := rep.Replay.Img.Record; rec != nil && rep.Function != "" {
		name, _, _ := strings.Cut(rep.Function, "+")
		for _, w := range rec.FunctionWarnings(name) {
			fmt.Fprintf(&b, " The %s said: \"%s\".", w.Tool, w.Text)
		}
	}
	return b.String()
}

// Markdown is the whole report: the summary, the reproducer (the input
// and the commands or program that show it), expected and actual, the
// versions affected, the proposed patch when a write-up in
// docs/findings has one, and last, apart, what only matters to sfconform
// (how it found the case, its run and its replay command).
func (rep *Report) Markdown() string {
	c := rep.Case
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", rep.Title(), rep.Summary())

	b.WriteString("## Reproducer\n\n")
	fmt.Fprintf(&b, "Target %s, SFrame version %d.\n\n", c.Target, c.Version)
	switch rep.Kind {
	case KindToolchain:
		rep.toolchainSection(&b)
	case KindLibsframe:
		rep.libsframeSection(&b)
	case KindDumper:
		rep.dumperSection(&b)
	default:
		if rep.inputsSection(&b) {
			break
		}
		b.WriteString("The consumer is run through sfconform's protocol: the reproducer is the replay command at the end.\n\n")
	}

	b.WriteString("## Expected and actual\n\n")
	if rep.Frame >= 0 {
		fmt.Fprintf(&b, "Frame %d, row looked up at PC %#x (`%s`, %s):\n\n", rep.Frame, rep.PC, rep.Function, rep.lookupWhere())
		b.WriteString("| | row |\n|---|---|\n")
		fmt.Fprintf(&b, "| actual (the section) | %s |\n", mdCell(rep.Actual))
		if rep.Expected != "" {
			fmt.Fprintf(&b, "| expected (the code's CFI) | %s |\n", mdCell(rep.Expected))
		}
		b.WriteString("\n")
	}
	if rep.Kind != KindToolchain {
		if rep.Frame >= 0 && rep.Expected != "" && !rep.RowDiffers() {
			fmt.Fprintf(&b, "Expected: %s reads the section's row above, which is right.\n\n", rep.Replay.Consumer)
		}
		if d := plainDetail(c.Detail); strings.Contains(d, "\n") {
			fmt.Fprintf(&b, "Actual: %s gives %s:\n\n```\n%s\n```\n\n", rep.Replay.Consumer, outcome(c), strings.TrimRight(d, "\n"))
		} else {
			fmt.Fprintf(&b, "Actual: %s gives %s: %s.\n\n", rep.Replay.Consumer, outcome(c), d)
		}
	}

	b.WriteString("## Affected versions\n\n")
	if len(rep.Affected) > 0 {
		b.WriteString("| tried | version | result |\n|---|---|---|\n")
		for _, a := range rep.Affected {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", a.Name, mdCell(a.Version), mdCell(a.Result))
		}
		b.WriteString("\n")
	}

	rep.patchSection(&b)

	b.WriteString("## How sfconform found it\n\n")
	b.WriteString("This section matters to sfconform only.\n\n")
	fmt.Fprintf(&b, "Found with: producer %s (%s), consumer %s (%s)", c.Producer, c.ProducerVersion, c.Consumer, c.ConsumerVersion)
	if c.ConsumerHello != "" {
		fmt.Fprintf(&b, ", which says it is %s", c.ConsumerHello)
	}
	b.WriteString(".")
	if m := c.Minimization; m != nil && m.Skipped == "" {
		fmt.Fprintf(&b, " The program was minimized from %v to %v (%d instructions executed up to the end of the failing run), keeping the failure %s.",
			m.Original, m.Minimized, m.MinimizedSteps, m.Signature)
	}
	fmt.Fprintf(&b, " Unwinding at step %d of the run (PC %#x, `%s`, `%s`), %s gives %v", c.Step, uint64(c.PC), c.Function, c.Insn, c.Consumer, c.Verdict)
	if c.Field != "" {
		fmt.Fprintf(&b, " (%s of frame %d)", c.Field, c.Frame)
	}
	fmt.Fprintf(&b, ": %s.\n\n", c.Detail)
	fmt.Fprintf(&b, "Backtrace at step %d, expected (the machine) against got (%s):\n\n```\n%s```\n\n", c.Step, c.Consumer, framesText(c))
	fmt.Fprintf(&b, "```sh\nsfconform repro %s\n```\n\n", toolchain.ShellQuote(rep.Path))
	b.WriteString("The instructions up to the failing step:\n\n```\n")
	b.WriteString(rep.Replay.Table(6, 2))
	b.WriteString("```\n")
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }

func framesText(c *corpus.Case) string {
	var b strings.Builder
	n := max(len(c.Expected), len(c.Got))
	for i := 0; i < n; i++ {
		e, g := "-", "-"
		if i < len(c.Expected) {
			e = c.Expected[i].String()
		}
		if i < len(c.Got) {
			g = c.Got[i].String()
		}
		mark := " "
		if e != g {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s #%d expected %s\n     got      %s\n", mark, i, e, g)
	}
	return b.String()
}

// Script is the shell commands of a toolchain report: the source written
// to producer.SourceFile, assembled, linked and dumped, with the tools named as on
// PATH.
func (rep *Report) Script() string {
	if rep.Tools == nil || rep.Prog == nil {
		return ""
	}
	build, dump := rep.Tools.Commands(rep.Prog)
	var b strings.Builder
	fmt.Fprintf(&b, "cat > %s <<'EOF'\n%sEOF\n", producer.SourceFile, rep.Prog.Assembly())
	for _, cmd := range build {
		b.WriteString(producer.Plain(cmd) + "\n")
	}
	b.WriteString(producer.Plain(dump) + "\n")
	return b.String()
}

func (rep *Report) toolchainSection(b *strings.Builder) {
	t := rep.Tools
	dirs := "`" + filepath.Dir(t.AS) + "`"
	if d := filepath.Dir(t.LD); d != filepath.Dir(t.AS) {
		dirs += ", `" + d + "`"
	}
	fmt.Fprintf(b, "With the %s and %s of the versions above on `PATH` (here: %s), these commands assemble the source, link it at the addresses the run used, and print the section:\n\n",
		t.Assembler, t.Linker, dirs)
	fmt.Fprintf(b, "```sh\n%s```\n\n", rep.Script())
	if rep.Dump != "" {
		fmt.Fprintf(b, "objdump prints, for the function at fault:\n\n```\n%s```\n\n", rep.Dump)
	}
}

func (rep *Report) dumperSection(b *strings.Builder) {
	img := rep.Replay.Img
	file, err := elfOf(img)
	if err != nil {
		fmt.Fprintf(b, "(the section cannot be wrapped in an ELF file: %v)\n\n", err)
		return
	}
	tool := strings.TrimRightFunc(rep.Replay.Consumer, func(r rune) bool { return r == '-' || r == '.' || r >= '0' && r <= '9' })
	fmt.Fprintf(b, "The section, at address %#x, in a minimal ELF file (%d bytes, base64), and the dumper on it:\n\n", img.SFrameAddr, len(file))
	fmt.Fprintf(b, "```sh\nbase64 -d > repro.elf <<'EOF'\n%sEOF\n%s --sframe=.sframe repro.elf\n```\n\n", base64Lines(file), tool)
}

// runObjdump builds the program with the report's commands in a temporary
// directory and returns what objdump prints for the culprit function.
func (rep *Report) runObjdump() (string, error) {
	dir, err := os.MkdirTemp("", "sfconform-report-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	out, err := RunScript(dir, rep.Script(), rep.Tools)
	if err != nil {
		return "", err
	}
	return FunctionBlock(out, rep.PC, rep.Replay.Img), nil
}

// RunScript runs a report's commands in dir with the tools' directories
// first on PATH, and returns their output.
func RunScript(dir, script string, t *producer.Tools) (string, error) {
	cmd := exec.Command("/bin/sh", "-e", "-c", script)
	cmd.Dir = dir
	path := []string{filepath.Dir(t.AS)}
	if d := filepath.Dir(t.LD); d != path[0] {
		path = append(path, d)
	}
	cmd.Env = append(os.Environ(), "PATH="+strings.Join(path, ":")+":"+os.Getenv("PATH"), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("the report's commands: %w\n%s", err, out.String())
	}
	return out.String(), nil
}

// FunctionBlock cuts, from objdump --sframe output, the FDE of the
// function holding pc (its "func idx" line and rows), or the header with
// a note when no FDE covers it.
func FunctionBlock(out string, pc uint64, img *image.Image) string {
	sym, ok := img.SymbolAt(pc)
	lines := strings.Split(out, "\n")
	if ok {
		key := fmt.Sprintf("pc = %#x,", sym.Addr)
		for i, l := range lines {
			if !strings.Contains(l, key) {
				continue
			}
			end := i + 1
			for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
				end++
			}
			return strings.Join(lines[i:end], "\n") + "\n"
		}
	}
	var head []string
	for _, l := range lines {
		if strings.Contains(l, "Function Index") {
			break
		}
		head = append(head, l)
	}
	name := fmt.Sprintf("%#x", pc)
	if ok {
		name = sym.Name + fmt.Sprintf(" (%#x)", sym.Addr)
	}
	return strings.Join(head, "\n") + "\n    (no FDE for " + name + ")\n"
}

func base64Lines(b []byte) string {
	s := encodeBase64(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\n")
		s = s[76:]
	}
	out.WriteString(s + "\n")
	return out.String()
}

var errNoTools = errors.New("no toolchain made the image")
