package producer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/buildinfo"
	"github.com/sfconform/sfconform/toolchain"
)

// File names the standalone commands use.
const (
	SourceFile = "repro.s"
	ObjectFile = "repro.o"
	LinkedFile = "repro"
)

// Tools are the programs that build a toolchain producer's image, as the
// producer ran them: the assembler and the linker with the flags they
// were given, and the objdump of the linker's binutils.
type Tools struct {
	AS, LD, Objdump   string // paths
	ASFlags, LDFlags  []string
	Assembler, Linker string // "as", "llvm-mc"; "ld"
}

// ToolsOf reads the tools out of a producer's record: the commands it ran
// (assembler, then linker) with their flags, without the files of the
// batch. Nil for an image no toolchain made.
func ToolsOf(rec *image.Record) *Tools {
	if rec == nil || len(rec.Tools) < 2 {
		return nil
	}
	t := &Tools{AS: rec.Tools[0].Path, LD: rec.Tools[1].Path, Assembler: rec.Tools[0].Name, Linker: rec.Tools[1].Name}
	for _, cmd := range rec.Commands {
		args := shellWords(cmd)
		if len(args) == 0 {
			continue
		}
		switch args[0] {
		case t.AS:
			if t.ASFlags == nil {
				t.ASFlags = asFlags(args[1:])
			}
		case t.LD:
			// A module's shared object (-Bsymbolic, toolmodules.go) is
			// linked before the executable that the one-ELF commands
			// stand for.
			if t.LDFlags == nil && !slices.Contains(args, "-Bsymbolic") {
				t.LDFlags = ldFlags(args[1:])
			}
		}
	}
	if t.ASFlags == nil {
		t.ASFlags = []string{}
	}
	// The objdump of the linker's binutils: the same directory and name.
	dir, base := filepath.Split(t.LD)
	if p, ok := strings.CutSuffix(base, "ld"); ok {
		t.Objdump = filepath.Join(dir, p+"objdump")
	}
	return t
}

// asFlags drops the output and the source from an assembler's arguments.
func asFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o":
			i++
		case strings.HasSuffix(a, ".s"):
		default:
			out = append(out, a)
		}
	}
	return out
}

// ldFlags keeps what a linker is always given for the target (-EB, -m
// emulations), not the batch's layout and files.
func ldFlags(args []string) []string {
	out := []string{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o" || a == "-e":
			i++
		case strings.HasPrefix(a, "-Ttext=") || strings.HasPrefix(a, "--section-start="), strings.HasSuffix(a, ".o"), strings.HasSuffix(a, ".so"),
			strings.HasPrefix(a, "--defsym=") || a == "-Bsymbolic": // a module's link (toolmodules.go)
		default:
			out = append(out, a)
		}
	}
	return out
}

// Commands are the standalone commands that build prog's image from
// SourceFile (prog.Assembly()) with these tools, at the addresses gen laid
// it out at, and the objdump command that prints its .sframe.
func (t *Tools) Commands(prog *gen.Program) (build []string, dump string) {
	as := append(append([]string{t.AS}, t.ASFlags...), "-o", ObjectFile, SourceFile)
	if t.Assembler == "as" && !containsFlag(t.ASFlags, "--gsframe") {
		as = append(append([]string{t.AS}, t.ASFlags...), "--gsframe", "-o", ObjectFile, SourceFile)
	}
	ld := append([]string{t.LD}, t.LDFlags...)
	ld = append(ld, fmt.Sprintf("-Ttext=%#x", prog.Base))
	if len(prog.FarCode) > 0 {
		ld = append(ld, fmt.Sprintf("--section-start=%s=%#x", gen.FarSection, prog.FarBase))
	}
	ld = append(ld, "-e", fmt.Sprintf("%#x", prog.Entry), "-o", LinkedFile, ObjectFile)
	return []string{toolchain.ShellJoin(as), toolchain.ShellJoin(ld)}, toolchain.ShellJoin([]string{t.Objdump, "--sframe=.sframe", LinkedFile})
}

func containsFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

// BuildCommands are the commands of Tools.Commands for a toolchain's
// image, nil for sfconform's own encoder.
func BuildCommands(img *image.Image, prog *gen.Program) []string {
	t := ToolsOf(img.Record)
	if t == nil {
		return nil
	}
	build, _ := t.Commands(prog)
	return build
}

// Plain replaces every tool path of a command by its base name: what a
// maintainer types with the tools on PATH.
func Plain(cmd string) string {
	args := shellWords(cmd)
	if len(args) > 0 {
		args[0] = filepath.Base(args[0])
	}
	return toolchain.ShellJoin(args)
}

// shellWords splits a command line the way toolchain.Run.String quotes
// it: words separated by spaces, single-quoted where needed.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// ImageVersion names the exact version of what made img's section: the
// tools its record names (with their Debian packages), or sfconform's own
// encoder.
func ImageVersion(img *image.Image) string {
	if img.Record != nil {
		return img.Record.Versions()
	}
	return fmt.Sprintf("sfconform %s, its own encoder (%s)", buildinfo.Version(), img.Producer)
}
