package realcode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Opt is one optimisation setting of the matrix: its name in reports and
// the gcc flags.
type Opt struct {
	Name  string
	Flags []string
}

// Opts are the optimisation settings the campaign compiles with.
var Opts = []Opt{
	{"O0", []string{"-O0"}},
	{"O2", []string{"-O2"}},
	{"O2-fp", []string{"-O2", "-fno-omit-frame-pointer"}},
	{"O2-nofp", []string{"-O2", "-fomit-frame-pointer"}},
	{"O3", []string{"-O3"}},
}

// FindOpt returns the optimisation setting called name.
func FindOpt(name string) (Opt, error) {
	var names []string
	for _, o := range Opts {
		if o.Name == name {
			return o, nil
		}
		names = append(names, o.Name)
	}
	return Opt{}, fmt.Errorf("no optimisation setting %q (have %s)", name, strings.Join(names, ", "))
}

// Link kinds. AArch64 big-endian has no Debian C library, so only LinkR
// is made for it.
const (
	LinkObject = "obj"    // one assembled object, unlinked
	LinkR      = "r"      // ld -r of all the code base's objects
	LinkStatic = "static" // gcc -static, with the C library
	LinkPIE    = "pie"    // gcc -pie, with the C library
)

// Links are the link kinds of the matrix, objects first.
var Links = []string{LinkObject, LinkR, LinkStatic, LinkPIE}

// Compiler is Debian's gcc for one target.
type Compiler struct {
	Target target.Target
	CC     string   // the driver: gcc, aarch64-linux-gnu-gcc, s390x-linux-gnu-gcc
	Flags  []string // flags for the target (-mbig-endian ...)
}

// Triple is the GNU triple of the compiler's target.
func (c Compiler) Triple() string { return c.Target.Triple() }

// cacheRel is where the campaign keeps files of its own in the cache.
const cacheRel = "realcode"

// FindCompiler returns the gcc that compiles for t. AArch64 big-endian is
// the aarch64 compiler with -mbig-endian; the C library headers it finds
// are the little-endian ones (Debian ships no big-endian libc), with a
// gnu/stubs-lp64_be.h that includes the little-endian stubs.
func FindCompiler(t target.Target) (Compiler, error) {
	c := Compiler{Target: t, CC: t.ToolTriple() + "-gcc"}
	switch {
	case !t.Valid():
		return c, fmt.Errorf("no compiler for target %s", t.Name())
	case t == target.AArch64BE:
		dir := filepath.Join(toolchain.CacheDir(), cacheRel, "be-include")
		stub := filepath.Join(dir, "gnu", "stubs-lp64_be.h")
		if _, err := os.Stat(stub); err != nil {
			if err := os.MkdirAll(filepath.Dir(stub), 0o755); err != nil {
				return c, err
			}
			tmp := stub + fmt.Sprintf(".%d", os.Getpid())
			if err := os.WriteFile(tmp, []byte("/* Written by sfconform's realcode package: Debian has no big-endian AArch64 libc. */\n#include <gnu/stubs-lp64.h>\n"), 0o644); err != nil {
				return c, err
			}
			if err := os.Rename(tmp, stub); err != nil {
				return c, err
			}
		}
		c.Flags = []string{"-mbig-endian", "-isystem", dir}
	}
	path, err := exec.LookPath(c.CC)
	if err != nil {
		return c, toolchain.NotProvisioned(toolchain.SetupHost, "%s compiler %s: %v", t.Name(), c.CC, err)
	}
	c.CC = path
	return c, nil
}

// Assembler is one assembler of the matrix for one target: a GNU
// toolchain (gas-<series>) or llvm-mc, and the GNU toolchain whose ld
// links its objects (itself for GNU as; the newest GNU one for llvm-mc,
// whose own linker has no SFrame support).
type Assembler struct {
	Name   string
	AS     toolchain.Toolchain
	Linker toolchain.Toolchain
}

// Assemblers lists the assemblers that emit SFrame for t, oldest GNU
// first, then llvm-mc. skipped names those provisioned that cannot, with
// their reason.
func Assemblers(t target.Target) (out []Assembler, skipped []string, err error) {
	gnu, gerr := toolchain.All()
	var newest *toolchain.Toolchain
	for i := range gnu {
		tc := gnu[i]
		if tc.Target != t {
			continue
		}
		if tc.SFrameVersion == 0 {
			skipped = append(skipped, fmt.Sprintf("%s: %s", tc.Name, tc.SFrameUnsupportedReason()))
			continue
		}
		out = append(out, Assembler{Name: tc.Name, AS: tc, Linker: tc})
		newest = &gnu[i]
	}
	if len(out) == 0 {
		return nil, skipped, fmt.Errorf("no GNU assembler emits SFrame for %s: %w", t.Name(), errors.Join(gerr, toolchain.ErrNotProvisioned))
	}
	llvm, _ := toolchain.LLVM()
	for _, tc := range llvm {
		if tc.Target != t {
			continue
		}
		if tc.SFrameVersion == 0 {
			skipped = append(skipped, fmt.Sprintf("%s: %s", tc.Name, tc.SFrameUnsupportedReason()))
			continue
		}
		out = append(out, Assembler{Name: tc.Name, AS: tc, Linker: *newest})
	}
	return out, skipped, nil
}

// cmdTimeout bounds one compiler, assembler or linker run.
const cmdTimeout = 5 * time.Minute

// Command is one tool run: its command line, and what it printed.
type Command struct {
	Line   string
	Output string
}

// runTool runs args in dir and returns the command; a failure is an error
// naming the command with the tool's output.
func runTool(dir string, args ...string) (Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	c := Command{Line: toolchain.Run{Args: args}.String(), Output: strings.TrimSpace(out.String())}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), cmdTimeout)
	}
	if err != nil {
		msg := c.Output
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return c, fmt.Errorf("%s: %v\n%s", c.Line, err, msg)
	}
	return c, nil
}

// objName is the object (or assembly) file name of a source file: its
// path with / made _ so that lua's src/x.c and another x.c never meet.
func objName(file, ext string) string {
	return strings.TrimSuffix(strings.ReplaceAll(file, "/", "_"), ".c") + ext
}

// Compile compiles every file of src with c at opt to assembly in dir and
// returns the .s paths (library first, then main) with the commands.
func (c Compiler) Compile(src Source, opt Opt, dir string) ([]string, []Command, error) {
	var out []string
	var cmds []Command
	var gen string
	if len(src.Base.Headers) > 0 {
		gen = filepath.Join(dir, "generated-include")
		if err := os.MkdirAll(gen, 0o755); err != nil {
			return nil, nil, err
		}
		for name, text := range src.Base.Headers {
			if err := os.WriteFile(filepath.Join(gen, name), []byte(fmt.Sprintf(text, c.Triple())), 0o644); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, file := range append(append([]string(nil), src.Base.Library...), src.Base.Main...) {
		asm := filepath.Join(dir, objName(file, ".s"))
		args := append([]string{c.CC}, c.Flags...)
		args = append(args, opt.Flags...)
		// gnu17: the code bases are C89/C99 (zlib's K&R definitions), which
		// gcc 15's default, C23, refuses; the same standard on every host.
		// gcc 14 made old C's habits errors (zlib calls lseek undeclared
		// without configure's HAVE_UNISTD_H): warnings again, as gcc 12
		// has them.
		args = append(args, "-std=gnu17", "-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int",
			"-Wno-error=int-conversion", "-Wno-error=incompatible-pointer-types", "-fasynchronous-unwind-tables", "-g0", "-S")
		for _, inc := range src.Base.Include {
			args = append(args, "-I", filepath.Join(src.Dir, inc))
		}
		if gen != "" {
			args = append(args, "-I", gen)
		}
		for _, d := range src.Base.Defines {
			args = append(args, "-D"+d)
		}
		args = append(args, "-o", asm, filepath.Join(src.Dir, file))
		cmd, err := runTool(dir, args...)
		cmds = append(cmds, cmd)
		if err != nil {
			return nil, cmds, fmt.Errorf("compiling %s of %s %s for %s: %w", file, src.Base.Package, src.Version, c.Target.Name(), err)
		}
		out = append(out, asm)
	}
	return out, cmds, nil
}

// Assemble assembles each .s file with a.AS --gsframe into dir.
func (a Assembler) Assemble(sources []string, dir string) ([]string, []Command, error) {
	var objs []string
	var cmds []Command
	for _, s := range sources {
		obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(s), ".s")+".o")
		// A newer gcc's build attributes, which an older gas refuses, are
		// left out of a copy for it; the command shows the copy.
		in, dropped, err := a.AS.ForAssembler(s)
		if err != nil {
			return nil, cmds, fmt.Errorf("%s: %w", a.Name, err)
		}
		if dropped > 0 {
			cmds = append(cmds, Command{Line: fmt.Sprintf("# %s: %d GNU build attribute directives of %s left out (gas before 2.45 does not know them)", a.Name, dropped, filepath.Base(s))})
		}
		r, err := a.AS.Assemble(in, obj, "--gsframe")
		cmds = append(cmds, Command{Line: r.String(), Output: r.Output})
		if err != nil {
			return nil, cmds, fmt.Errorf("%s: %w", a.Name, err)
		}
		objs = append(objs, obj)
	}
	return objs, cmds, nil
}

// LinkR links objs into one relocatable object with the assembler's ld.
func (a Assembler) LinkR(objs []string, out string) (Command, error) {
	args := append([]string{a.Linker.LD}, a.Linker.LDFlags...)
	args = append(args, "-r", "-o", out)
	return runTool(filepath.Dir(out), append(args, objs...)...)
}

// LinkExe links objs with the C library into an executable (kind LinkStatic
// or LinkPIE) through the gcc driver, whose ld is the assembler's: -B
// names a directory holding only an "ld" that is that toolchain's.
func (a Assembler) LinkExe(c Compiler, kind string, objs, libs []string, out string) (Command, error) {
	bdir := filepath.Join(filepath.Dir(out), "ld-"+a.Linker.Name)
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return Command{}, err
	}
	ld := filepath.Join(bdir, "ld")
	if _, err := os.Lstat(ld); err != nil {
		if err := os.Symlink(a.Linker.LD, ld); err != nil {
			return Command{}, err
		}
	}
	args := append([]string{c.CC}, c.Flags...)
	switch kind {
	case LinkStatic:
		args = append(args, "-static")
	case LinkPIE:
		args = append(args, "-pie")
	default:
		return Command{}, fmt.Errorf("link kind %q is not an executable", kind)
	}
	args = append(args, "-B", bdir+"/", "-o", out)
	args = append(args, objs...)
	return runTool(filepath.Dir(out), append(args, libs...)...)
}

// linksFor are the link kinds made for target t.
func linksFor(t target.Target, kinds []string) []string {
	if t == target.AArch64BE {
		return slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == LinkStatic || k == LinkPIE })
	}
	return kinds
}
