package image

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/target"
)

// Symbol is a function of the image: the oracle recognises function
// entries by these, and reports name frames by them. A symbol of Kind
// KindStack is not code but a stack the program switches to (a thread's
// or a clone child's fresh stack): the oracle learns from it that a frame
// became the outermost one.
type Symbol struct {
	Name string `json:"name"`
	Addr uint64 `json:"addr"`
	Size uint32 `json:"size"`
	// PartOf, when set, names the function this range is a part of (a
	// compiler's hot/cold split: GCC's f.cold): its code runs in the
	// owner's frame, so reaching its start is not a function entry.
	PartOf string `json:"part_of,omitempty"`
	Kind   string `json:"kind,omitempty"` // "" (KindFunc) or one of the kinds below
}

// Symbol kinds.
const (
	KindFunc  = ""      // a function: its start is an entry point
	KindStack = "stack" // a stack region [Addr, End()): SP equals End() when it is empty
	// The functions signals involve: the oracle learns of a signal at a
	// handler's entry; a restorer (the trampoline a handler returns to) is
	// never entered by a call.
	KindSignalHandler  = "signal-handler"
	KindSignalRestorer = "signal-restorer"
)

// IsStack reports whether the symbol is a stack rather than a function.
func (s Symbol) IsStack() bool { return s.Kind == KindStack }

// End is one past the symbol's last byte.
func (s Symbol) End() uint64 { return s.Addr + uint64(s.Size) }

// Segment is code placed apart from Image.Code: a function laid out far
// from the rest, as a linker places a section of its own.
type Segment struct {
	Addr uint64 `json:"addr"`
	Code []byte `json:"code"`
}

// End is one past the segment's last byte.
func (s Segment) End() uint64 { return s.Addr + uint64(len(s.Code)) }

// Image is everything a run needs: code to execute, where to start and
// stop, the function symbols, and the SFrame section under test.
type Image struct {
	Target   target.Target
	Producer string // the producer's registry name, e.g. "builtin-v3", "gas-2.44"
	// SFrameVersion is the section's format version as the producer
	// reports it, for labels and reports; consumers read the section.
	SFrameVersion int
	Code          []byte // as it must be in memory
	CodeAddr      uint64
	Entry         uint64   // first instruction (the entry stub)
	Exit          uint64   // the run ends when the PC reaches it
	Symbols       []Symbol // sorted by address (SortSymbols)
	// Paths are the runs of the program: each one's initial argument
	// registers by DWARF number. There is at least one; every run starts at
	// Entry with the rest of the machine reset.
	Paths []map[int]uint64
	// RuleRegs are the DWARF registers besides SP, FP and the link
	// register that the program's unwind rules refer to (a CFA based on
	// %r10, an RA kept in %f8): the emulator reads them at every step so a
	// consumer finds them in the topmost frame's register file.
	RuleRegs []int
	// Signals are the signals the runs receive, at most one per path.
	Signals []Signal

	// Segments are further code, each at its own address (a function
	// more than 4 GiB from the rest and from the SFrame section); most
	// images have none.
	Segments []Segment

	SFrame     []byte // the section's bytes
	SFrameAddr uint64 // virtual address of SFrame[0]

	// Modules, when set, make the image a process of several loaded
	// objects (an executable and shared objects), each with its own
	// section: a PC's unwind information is in the section of the module
	// whose code range holds it, and a PC in none has none. SFrame and
	// SFrameAddr are then empty. Sorted by Start, ranges disjoint.
	Modules []Module

	// Record says how a producer that runs real tools made the image; nil
	// for sfconform's own encoder.
	Record *Record
}

// Module is one loaded object of a process image: the code range it
// maps, [Start, End), and its own SFrame section at SFrameAddr. An
// unwinder finds the module of a PC by that range, as glibc's
// _dl_find_object and the kernel (per mapping) do, and looks the PC up in
// that module's section only.
type Module struct {
	Name       string `json:"name"` // "exe", "lib1.so", ...: for reports, no spaces
	Start      uint64 `json:"start"`
	End        uint64 `json:"end"`
	SFrame     []byte `json:"sframe"`
	SFrameAddr uint64 `json:"sframe_addr"`
}

// Holds reports whether pc lies in the module's code range.
func (m *Module) Holds(pc uint64) bool { return pc >= m.Start && pc < m.End }

// WholeSpace is the code range of an image's only section when it has no
// Modules: it describes every PC.
const WholeSpace = ^uint64(0)

// Sections lists the image's sections as modules: its Modules, or the one
// section (SFrame at SFrameAddr) as a module covering every address
// [0, WholeSpace).
func (img *Image) Sections() []Module {
	if len(img.Modules) > 0 {
		return img.Modules
	}
	return []Module{{Name: "", Start: 0, End: WholeSpace, SFrame: img.SFrame, SFrameAddr: img.SFrameAddr}}
}

// ModuleAt returns the index of the module whose range holds pc, or -1.
func (img *Image) ModuleAt(pc uint64) int {
	ms := img.Modules
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Start > pc }) - 1
	if i >= 0 && ms[i].Holds(pc) {
		return i
	}
	return -1
}

// SectionAt is the section describing pc: the one of the module holding
// it (module names it), the image's one section when it has no modules,
// or nil when no module holds pc.
func (img *Image) SectionAt(pc uint64) (sec []byte, addr uint64, module string) {
	if len(img.Modules) == 0 {
		return img.SFrame, img.SFrameAddr, ""
	}
	if i := img.ModuleAt(pc); i >= 0 {
		m := &img.Modules[i]
		return m.SFrame, m.SFrameAddr, m.Name
	}
	return nil, 0, ""
}

// CheckModules reports what makes the image's Modules unusable: a module
// with an empty range or a name with white space, ranges out of order or
// overlapping, or a single section set beside them.
func (img *Image) CheckModules() error {
	if len(img.Modules) > 0 && (len(img.SFrame) > 0 || img.SFrameAddr != 0) {
		return fmt.Errorf("image has %d modules and a section of its own", len(img.Modules))
	}
	for i, m := range img.Modules {
		if m.Start >= m.End {
			return fmt.Errorf("module %d (%s): empty code range [%#x, %#x)", i, m.Name, m.Start, m.End)
		}
		if m.Name == "" || strings.ContainsAny(m.Name, " \t\r\n") {
			return fmt.Errorf("module %d: name %q is empty or has white space", i, m.Name)
		}
		if i > 0 && m.Start < img.Modules[i-1].End {
			return fmt.Errorf("module %d (%s) at %#x starts before module %d (%s) ends at %#x", i, m.Name, m.Start, i-1, img.Modules[i-1].Name, img.Modules[i-1].End)
		}
	}
	return nil
}

// Record is what a toolchain producer ran to make an image: the exact
// tools, the commands, and what the tools said about the program.
type Record struct {
	Tools    []Tool   `json:"tools"`
	Commands []string `json:"commands"` // as run, in order (their files are gone)
	// Batch is how many programs the commands assembled and linked
	// together; the section holds all of their functions.
	Batch    int       `json:"batch,omitempty"`
	Warnings []Warning `json:"warnings,omitempty"`
	// Assembly, when set, is the program's text as the tools got it,
	// where that is not the generator's ordinary rendering (calls through
	// a PLT the linker made); its lines are the ordinary rendering's.
	Assembly string `json:"assembly,omitempty"`
}

// Tool is one program a producer ran.
type Tool struct {
	Name    string `json:"name"` // what it is: "as", "ld", "llvm-mc"
	Path    string `json:"path"`
	Version string `json:"version"`           // the first line of its --version
	Package string `json:"package,omitempty"` // the Debian package version it came from
	Suite   string `json:"suite,omitempty"`   // the Debian suite of that package
}

// Warning is a message a tool printed although it succeeded: an FDE
// skipped for CFI it cannot express, a section it would not merge.
type Warning struct {
	Tool string `json:"tool"`
	// Function and Line, when the tool named a source line of this
	// program: the function holding it and the line in the program's own
	// assembly text (the reproducer's). Empty for a message about the
	// whole batch (a linker's).
	Function string `json:"function,omitempty"`
	Line     int    `json:"line,omitempty"`
	Text     string `json:"text"`
}

func (w Warning) String() string {
	where := w.Tool
	if w.Line > 0 {
		where += fmt.Sprintf(", line %d", w.Line)
	}
	if w.Function != "" {
		where += " in " + w.Function
	}
	return where + ": " + w.Text
}

// Versions names the tools and their packages in one line, for reports:
// "as 2.47.50.20261021 (Debian sid 2.47.50.20261021-1), ld ...".
func (r *Record) Versions() string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, t := range r.Tools {
		s := t.Name
		if f := strings.Fields(t.Version); len(f) > 0 {
			s += " " + f[len(f)-1]
		}
		if t.Package != "" {
			s += " (Debian " + strings.TrimSpace(t.Suite+" "+t.Package) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// FunctionWarnings are the warnings about the function called name.
func (r *Record) FunctionWarnings(name string) []Warning {
	if r == nil {
		return nil
	}
	var out []Warning
	for _, w := range r.Warnings {
		if w.Function == name {
			out = append(out, w)
		}
	}
	return out
}

// Signal is the signal a run receives: before the instruction at At
// executes for the Count-th time in run Path, the kernel delivers signal
// Signo to Handler, with Restorer as the handler's return address; the
// restorer returns to the interrupted instruction through rt_sigreturn.
// A run that never reaches At that often receives none.
type Signal struct {
	Path     int    `json:"path"`
	At       uint64 `json:"at"`
	Count    int    `json:"count"`
	Signo    int    `json:"signo"`
	Handler  uint64 `json:"handler"`
	Restorer uint64 `json:"restorer"`
}

// SignalOf returns the signal of run path, if it has one.
func (img *Image) SignalOf(path int) (Signal, bool) {
	for _, s := range img.Signals {
		if s.Path == path {
			return s, true
		}
	}
	return Signal{}, false
}

// SortSymbols orders the symbols by address, which SymbolAt relies on.
func (img *Image) SortSymbols() {
	sort.SliceStable(img.Symbols, func(i, j int) bool { return img.Symbols[i].Addr < img.Symbols[j].Addr })
}

// SymbolAt returns the function symbol whose range holds pc.
func (img *Image) SymbolAt(pc uint64) (Symbol, bool) {
	i := sort.Search(len(img.Symbols), func(i int) bool { return img.Symbols[i].Addr > pc }) - 1
	if i >= 0 && pc < img.Symbols[i].End() && !img.Symbols[i].IsStack() {
		return img.Symbols[i], true
	}
	return Symbol{}, false
}

// Describe names a PC as symbol+offset for reports.
func (img *Image) Describe(pc uint64) string {
	if s, ok := img.SymbolAt(pc); ok {
		return fmt.Sprintf("%s+0x%x", s.Name, pc-s.Addr)
	}
	return fmt.Sprintf("0x%x", pc)
}

// Instruction returns the code bytes from pc to the end of the code or
// segment holding it, or nil when pc lies outside all of them.
func (img *Image) Instruction(pc uint64) []byte {
	if pc >= img.CodeAddr && pc-img.CodeAddr < uint64(len(img.Code)) {
		return img.Code[pc-img.CodeAddr:]
	}
	for _, s := range img.Segments {
		if pc >= s.Addr && pc-s.Addr < uint64(len(s.Code)) {
			return s.Code[pc-s.Addr:]
		}
	}
	return nil
}
