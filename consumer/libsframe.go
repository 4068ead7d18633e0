package consumer

import (
	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	Register(About{
		Kind:    "libsframe",
		Setup:   6,
		Library: "libsframe",
		Limits: map[string]string{
			"signal":           libsframeSignal,
			"signal-empty-fde": libsframeSignal,
		},
		// Declared: padding after the last FRE. Not declared, each with
		// what a run showed: an auxiliary header (on the big-endian
		// targets, the host's foreign byte order, sframe_decode refuses
		// the section: "Buffer does not contain SFrame data"; read right
		// in host order), v2 starts relative to the section (no FDE found
		// at the entry stub in every such program), unsorted (its lookup
		// searches the index as sorted) and concatenated sections (it
		// decodes one). Those are to be written up before they are
		// declared. Modules: the driver finds the module holding a PC
		// and gives libsframe that module's section (protocol version 2).
		Layouts: []string{"fre-padding", "modules"},
		Summary: "GNU libsframe (sid's libsframe-dev, static) behind consumer/libsframe's walk; libsframe:DIR, the libsframe of a binutils build of one's own",
	}, func(name, arg string) (Consumer, error) {
		if arg != "" {
			return NewLibsframeDir(arg)
		}
		return NewLibsframe()
	})
}

// Libsframe is GNU libsframe (Debian sid's libsframe-dev, linked
// statically) behind the unwind protocol: the C program in
// consumer/libsframe, which ci/setup.sh step 6 builds into
// $SFCONFORM_CACHE/consumers/libsframe-HASH, run as an exec consumer.
//
// libsframe decides whether it reads a section (sframe_decode; Supports
// asks it with a header-only section, and it refuses SFrame version 1),
// which FRE covers a PC (sframe_find_fre) and every value of that FRE: the
// CFA base register, the CFA, RA and FP offsets with the header's fixed
// ones and the s390x CFA decoding, the v3 flexible FDE's control words and
// displacements, RA undefined and RA mangled.
//
// sfconform's C code decides the walk, after the SFrame v3
// specification's appendix "Generating Stack Traces using SFrame", with
// one change: caller frames are looked up at RA-1 (the appendix looks them
// up at the RA, which finds the wrong row when a call ends its function,
// docs/findings/018); an RA-undefined row is the outermost
// frame; the caller's SP is the CFA (s390x: CFA-160) and must lie above
// the frame's SP, as the builtin unwinder and the Linux unwinder require;
// an RA that no row
// offset locates is in the link register, topmost frame only, as are
// rules based on registers other than SP and FP; a mangled RA has bits
// 48-63 cleared; the FDE type and signal flag come from our own search of
// the FDE index (libsframe's API does not say which FDE sframe_find_fre
// used). No FRE from sframe_find_fre is "noinfo", anything else that stops
// the walk "failed". The C file's header comment has the details.
//
// libsframe's native-endian path trusts its input, so a malformed section
// can crash it: the crash is reported on standard error with the signal
// and what libsframe was asked, and Exec turns it into ERROR and starts
// the program again.
type Libsframe struct {
	*Exec
	version string
}

const libsframeSignal = "the libsframe consumer's walk stops at a signal trampoline: libsframe gives the FDE's signal flag, " +
	"but reading the interrupted context from the kernel's signal frame is an architecture's signal unwinder's job, " +
	"which neither libsframe nor consumer/libsframe provides"

// NewLibsframe finds the built consumer; a *toolchain.NotProvisionedError
// when setup has not built it.
func NewLibsframe() (*Libsframe, error) {
	a, _ := Lookup("libsframe")
	b, err := builtBinary(a.Kind, "libsframe", "sfconform-libsframe", a.Setup)
	if err != nil {
		return nil, err
	}
	x := NewExec(a.Kind, "exec "+toolchain.ShellQuote(b.bin))
	x.SetGiveUpAfter(0)
	return &Libsframe{Exec: x, version: b.version(a.Library, "libsframe")}, nil
}

// ExactVersion is the libsframe package the consumer was built against.
func (l *Libsframe) ExactVersion() string { return l.version }
