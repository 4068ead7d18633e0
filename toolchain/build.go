package toolchain

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// Run is one run of a tool: the command line and what the tool printed on
// stdout and stderr (its warnings, for an assembler or linker that
// succeeded).
type Run struct {
	Args   []string // the program, then its arguments
	Output string
}

// String is the command line, each argument quoted for a POSIX shell when
// it needs it.
func (r Run) String() string {
	return ShellJoin(r.Args)
}

// ToolError is a tool run that failed: it exited non-zero, was killed, or
// could not start.
type ToolError struct {
	Run Run
	Err error
}

func (e *ToolError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Run, e.Err)
	if e.Run.Output != "" {
		msg += "\n" + e.Run.Output
	}
	return msg
}

func (e *ToolError) Unwrap() error { return e.Err }

// toolTimeout bounds one assembler or linker run over a batch of
// programs; a healthy one takes well under a second.
const toolTimeout = 2 * time.Minute

// run runs args[0] with args[1:], returning the run and a *ToolError when
// it fails.
func run(args ...string) (Run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := Run{Args: args, Output: strings.TrimSpace(out.String())}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), toolTimeout)
	}
	if err != nil {
		return r, &ToolError{Run: r, Err: err}
	}
	return r, nil
}

// Assemble runs the assembler over the source file src, writing the object
// obj, with the target's flags (ASFlags) and then flags (e.g. --gsframe).
func (t Toolchain) Assemble(src, obj string, flags ...string) (Run, error) {
	args := append([]string{t.AS}, t.ASFlags...)
	args = append(append(args, flags...), "-o", obj, src)
	return run(args...)
}

// Link says where ld places what: the output sections at fixed addresses,
// and the entry point.
type Link struct {
	Output  string   // the executable to write
	Objects []string // the objects, in link order
	// Text is the address of .text (-Ttext); Sections are further output
	// sections at fixed addresses (--section-start), e.g. gen's far code.
	Text     uint64
	Sections map[string]uint64
	// Entry is the entry address. It is given as a number: gen's symbols
	// are local, and "-e _start" would make ld warn that it finds none.
	Entry uint64
	// Shared links a shared object (-shared) whose symbols a loader binds
	// at load time (-z now), so that calls to its global symbols go
	// through the PLT ld makes. TextSegment, when not 0, is the address
	// of its first segment (-Ttext-segment): where ld puts what comes
	// before .text, the .plt among it.
	Shared      bool
	TextSegment uint64
	// Symbols are symbols defined at fixed addresses (--defsym), e.g. the
	// functions of other objects a module calls directly; Symbolic binds
	// a shared object's references to its own definitions, these among
	// them (-Bsymbolic), so that ld makes no PLT entry for them.
	Symbols  map[string]uint64
	Symbolic bool
	// Now asks an executable's loader to bind every symbol at load time
	// (-z now, DT_BIND_NOW), as Shared does for a shared object.
	Now bool
}

// Link runs the linker with the target's flags (LDFlags).
func (t Toolchain) Link(l Link) (Run, error) {
	args := append([]string{t.LD}, t.LDFlags...)
	switch {
	case l.Shared:
		args = append(args, "-shared", "-z", "now")
	case l.Now:
		args = append(args, "-z", "now")
	}
	if l.Symbolic {
		args = append(args, "-Bsymbolic")
	}
	if l.TextSegment != 0 {
		args = append(args, fmt.Sprintf("-Ttext-segment=%#x", l.TextSegment))
	}
	args = append(args, fmt.Sprintf("-Ttext=%#x", l.Text))
	names := make([]string, 0, len(l.Sections))
	for name := range l.Sections {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, fmt.Sprintf("--section-start=%s=%#x", name, l.Sections[name]))
	}
	syms := make([]string, 0, len(l.Symbols))
	for name := range l.Symbols {
		syms = append(syms, name)
	}
	sort.Strings(syms)
	for _, name := range syms {
		args = append(args, fmt.Sprintf("--defsym=%s=%#x", name, l.Symbols[name]))
	}
	args = append(args, "-e", fmt.Sprintf("%#x", l.Entry), "-o", l.Output)
	return run(append(args, l.Objects...)...)
}

var (
	versionMu   sync.Mutex
	versionMemo = map[string]string{}
)

// ToolVersion is the first line a program prints for --version, e.g.
// "GNU assembler (GNU Binutils for Debian) 2.47.50.20261021", asked once
// per program and process. A program that cannot say is an error.
func ToolVersion(path string) (string, error) {
	versionMu.Lock()
	defer versionMu.Unlock()
	if v, ok := versionMemo[path]; ok {
		return v, nil
	}
	r, err := run(path, "--version")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(r.Output, "\n")
	first = strings.TrimSpace(first)
	if first == "" {
		return "", fmt.Errorf("%s --version printed nothing", path)
	}
	versionMemo[path] = first
	return first, nil
}
