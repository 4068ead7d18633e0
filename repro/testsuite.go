package repro

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// The binutils testsuite export: the minimized source as NAME.s and, as
// NAME.d, the objdump --sframe output gas's object must give, in the
// style of gas/testsuite/gas/cfi-sframe: header lines skipped with #...,
// the function at fault's FDE line and rows as regular expressions of the
// correct rows (sfconform's own encoding of the CFI), printed in the
// layout of the objdump of the case's binutils (SFrame version 2 without
// PC-relative starts for 2.41-2.44, version 3 for 2.46 and later). Row
// addresses and the FDE's index and address are left free: an object's
// functions start at 0 and its FDEs are unsorted.

// File is one file of an export.
type File struct {
	Name, Text string
}

// ErrNoTestsuite is returned for a case the export does not apply to.
var ErrNoTestsuite = errors.New("no testsuite case")

// Testsuite exports a toolchain case.
func (rep *Report) Testsuite() ([]File, error) {
	if rep.Prog == nil || rep.Tools == nil || rep.Tools.Assembler != "as" {
		return nil, fmt.Errorf("%w: only a case GNU as made exports to its testsuite", ErrNoTestsuite)
	}
	if rep.Frame < 0 || rep.expectedRow == nil {
		return nil, fmt.Errorf("%w: no row at fault to check", ErrNoTestsuite)
	}
	v := sframe.Version(rep.Replay.Img.SFrameVersion)
	if v < sframe.Version2 {
		return nil, fmt.Errorf("%w: SFrame version %d (binutils 2.40): the testsuite of binutils 2.41 and later, which write version 2 or 3, is the one to export to: replay with --producer gas-2.44 or gas-2.47", ErrNoTestsuite, v)
	}
	block, err := rep.expectedBlock(v)
	if err != nil {
		return nil, err
	}
	c := rep.Case
	name := fmt.Sprintf("cfi-sframe-%s-sfconform-%d", archName(rep.Replay.Img.Target), c.Seed)
	var s strings.Builder
	fmt.Fprintf(&s, "# %s\n# Made by sfconform (seed %d, minimized); the FDE of %s must have the rows\n# the CFI gives. Found with %s.\n",
		rep.Title(), c.Seed, cut2(rep.Function), c.ProducerVersion)
	s.WriteString(rep.Prog.Assembly())
	var d strings.Builder
	fmt.Fprintf(&d, "#as: %s\n#objdump: --sframe=.sframe\n#name: SFrame %s\n#target: %s\n",
		strings.Join(append(nonGsframe(rep.Tools.ASFlags), "--gsframe"), " "), rep.Title(), targetTriple(rep.Replay.Img.Target))
	d.WriteString(".*: +file format .*\n\nContents of the SFrame section .sframe:\n  Header :\n#...\n  Function Index :\n#...\n")
	d.WriteString(block)
	d.WriteString("#pass\n")
	return []File{{name + ".s", s.String()}, {name + ".d", d.String()}}, nil
}

// cut2 is the function name of "name+0x10".
func cut2(s string) string {
	n, _, _ := strings.Cut(s, "+")
	return n
}

func nonGsframe(flags []string) []string {
	var out []string
	for _, f := range flags {
		if f != "--gsframe" {
			out = append(out, f)
		}
	}
	return out
}

// archName is the architecture as the test's file name spells it: the
// triple's first field, aarch64be for aarch64_be.
func archName(t target.Target) string { return strings.Replace(t.Arch(), "_be", "be", 1) }

// targetTriple is the run_dump_test target pattern of t.
func targetTriple(t target.Target) string { return t.Arch() + "-*-*" }

// ExpectedSection is the correct table of the culprit function alone,
// encoded in version v as the case's binutils writes it (version 2
// without PC-relative starts), at addr: what objdump of those binutils
// should print for it.
func (rep *Report) ExpectedSection(v sframe.Version, addr uint64) ([]byte, error) {
	ref, err := (producer.Builtin{Version: sframe.Version3}).Produce(rep.Prog)
	if err != nil {
		return nil, err
	}
	t, err := sframe.Decode(ref.SFrame, ref.SFrameAddr)
	if err != nil {
		return nil, err
	}
	f, err := t.FindFDE(rep.PC)
	if err != nil {
		return nil, err
	}
	fde, err := f.FDE()
	if err != nil {
		return nil, err
	}
	abi := sframe.ABI(rep.Replay.Img.Target)
	fp, ra := sframe.DefaultFixedOffsets(abi)
	opt := sframe.EncodeOptions{Version: v, ABI: abi, Base: addr, PCRel: v >= sframe.Version3, CFAFixedFP: fp, CFAFixedRA: ra}
	if fde.Type != sframe.FDETypeDefault && v < sframe.Version3 {
		return nil, fmt.Errorf("%w: the function's rows need a flexible FDE, which version %d has not", ErrNoTestsuite, v)
	}
	return sframe.Encode([]sframe.FDE{fde}, opt)
}

// expectedBlock is the .d lines of the culprit function's FDE.
func (rep *Report) expectedBlock(v sframe.Version) (string, error) {
	sec, err := rep.ExpectedSection(v, 0x1000)
	if err != nil {
		return "", err
	}
	t, err := sframe.Decode(sec, 0x1000)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := sframe.Dump(&out, t, ".sframe"); err != nil {
		return "", err
	}
	text := out.String()
	i := strings.Index(text, "    func idx")
	if i < 0 {
		return "", fmt.Errorf("no FDE in the expected dump")
	}
	var d strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text[i:], "\n"), "\n") {
		d.WriteString(dLine(l) + "\n")
	}
	return d.String(), nil
}

var (
	funcIdxRE = regexp.MustCompile(`^func idx \[\d+\]: pc = 0x[0-9a-f]+,`)
	rowAddrRE = regexp.MustCompile(`^[0-9a-f]{8,16}$`)
)

// dLine turns one line of objdump's output into the .d line that
// matches it: runs of blanks match any run, the function's index and
// address and each row's address any value.
func dLine(l string) string {
	body := strings.TrimLeft(l, " ")
	if body == "" {
		return ""
	}
	indent := l[:len(l)-len(body)]
	if funcIdxRE.MatchString(body) {
		rest := funcIdxRE.ReplaceAllString(body, "")
		return indent + `func idx \[[0-9]+\]: pc = 0x[0-9a-f]+,` + fieldsRE(rest)
	}
	f := strings.Fields(body)
	if len(f) > 0 && rowAddrRE.MatchString(f[0]) {
		return indent + "[0-9a-f]+ +" + strings.TrimPrefix(fieldsRE(strings.Join(f[1:], " ")), " *") + " *"
	}
	return indent + strings.TrimPrefix(fieldsRE(body), " *") + " *"
}

// fieldsRE quotes the words of s and joins them with " +".
func fieldsRE(s string) string {
	f := strings.Fields(s)
	for i := range f {
		f[i] = regexp.QuoteMeta(f[i])
	}
	lead := ""
	if strings.HasPrefix(s, " ") {
		lead = " *"
	}
	return lead + strings.Join(f, " +")
}

// MatchD applies a .d file's patterns to a tool's output the way the
// binutils testsuite's regexp_diff does: each pattern line must match the
// next output line whole; "#..." skips output lines up to the one the next
// pattern matches; "#pass" ends the comparison successfully; the
// directives at the top (#as: ...) and blank lines are skipped. It
// returns nil on a match, or the first pattern that fails.
func MatchD(d, output string) error {
	var pats []string
	for _, l := range strings.Split(d, "\n") {
		if strings.HasPrefix(l, "#") && l != "#..." && l != "#pass" || strings.TrimSpace(l) == "" {
			continue
		}
		pats = append(pats, l)
	}
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	i := 0
	skip := false
	for _, p := range pats {
		switch p {
		case "#pass":
			return nil
		case "#...":
			skip = true
			continue
		}
		re, err := regexp.Compile("^" + p + "$")
		if err != nil {
			return fmt.Errorf("pattern %q: %v", p, err)
		}
		for {
			if i >= len(lines) {
				return fmt.Errorf("pattern %q: the output ends", p)
			}
			ok := re.MatchString(lines[i])
			i++
			if ok {
				break
			}
			if !skip {
				return fmt.Errorf("pattern %q does not match line %q", p, lines[i-1])
			}
		}
		skip = false
	}
	if i < len(lines) {
		return fmt.Errorf("output left over: %q", lines[i])
	}
	return nil
}
