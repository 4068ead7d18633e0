package consumer

import (
	"fmt"

	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	Register(About{
		Kind:     "glibc",
		Setup:    7,
		Library:  "glibc",
		Variants: []string{"glibc:strict"},
		// Modules: the driver's _dl_find_object stand-in returns the
		// object holding a PC with its own section, as ld.so's does.
		Layouts: []string{"modules"},
		Summary: "glibc's own SFrame backtrace() walker (sid's glibc source), frame by frame; glibc:strict as backtrace() returns it",
	}, func(name, arg string) (Consumer, error) {
		switch arg {
		case "":
			return NewGlibc(false)
		case "strict":
			return NewGlibc(true)
		}
		return nil, fmt.Errorf("consumer %q: glibc takes no argument or \"strict\"", name)
	})
}

// Glibc is the SFrame stack tracer of the GNU C library (2.42 and later,
// behind backtrace() when built with --enable-sframe): glibc's own
// sysdeps/generic/sframe-read.c and sframe.c with the target's
// uw-sigframe.h (x86-64's, and AArch64's for AArch64 sections) from
// Debian sid's glibc source package, compiled unmodified by ci/setup.sh
// step 7 with the driver in consumer/glibc and run as an exec consumer.
// It speaks protocol version 3 and later: the image's code is mapped at its
// addresses, so uw-sigframe.h's signal-trampoline check (at a PC without
// an FRE) reads the real instructions and glibc's own signal-frame
// decoding is judged.
//
// glibc decides whether it reads a section (SFrame version 2 in the host's
// byte order only: x86-64 and AArch64 little-endian, v2; Supports says why
// not otherwise) and every step of the walk: __stacktrace_sframe is
// called for one frame at a time and returns the caller's PC, SP (which is
// this frame's CFA) and FP. It reads memory through raw pointers, so the
// driver maps the section and each step's stack copy at their emulated
// addresses in its own process; a range the process already uses makes the
// load or the step fail, naming the mapping that holds it. Its
// _dl_find_object stand-in finds the object (the one section, or one of a
// process image's modules) whose code range holds a PC and returns that
// object's section, as the dynamic linker's does.
//
// glibc looks caller frames up at the return address itself, not RA-1,
// never strips a pointer authentication code, never reads the link
// register (an AArch64 frame whose RA is still in x30 cannot be unwound),
// and has no CFA-above check. Where it stops, backtrace() drops the whole
// trace and falls back to the DWARF unwinder, except at a frame without
// an FRE whose FP is 0, which ends the trace. The driver maps a stop to
// the protocol by asking glibc's reader why: no FRE is "noinfo"; an FRE
// with no data words (RA undefined, the outermost frame by the SFrame v2
// erratum 2, which glibc does not know) is taken as the outermost frame
// under the name "glibc", and as "noinfo" under "glibc:strict", which
// judges what backtrace() would really return; any other FRE is "failed".
// The C file's header comment has the details.
type Glibc struct {
	*Exec
	version string
}

// NewGlibc finds the built consumer; a *toolchain.NotProvisionedError
// when setup has not built it.
func NewGlibc(strict bool) (*Glibc, error) {
	a, _ := Lookup("glibc")
	b, err := builtBinary(a.Kind, "glibc", "sfconform-glibc", a.Setup)
	if err != nil {
		return nil, err
	}
	name, cmd := a.Kind, "exec "+toolchain.ShellQuote(b.bin)
	if strict {
		name, cmd = a.Variants[0], cmd+" --strict"
	}
	x := NewExec(name, cmd)
	x.SetGiveUpAfter(0)
	return &Glibc{Exec: x, version: b.version(a.Library, "glibc")}, nil
}

// ExactVersion is the glibc source package the consumer was built from.
func (g *Glibc) ExactVersion() string { return g.version }
