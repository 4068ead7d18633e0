package corpus

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// FormatName identifies the file format: FormatPrefix and the version,
// which changes when the fields do (docs/reproducer-format.md).
const (
	FormatPrefix  = "sfconform-case/"
	FormatVersion = 3
	FormatName    = "sfconform-case/3"
	// OldestVersion is the oldest format version Load still reads.
	OldestVersion = 1
)

// Hex is a byte string stored as lowercase hex in JSON.
type Hex []byte

func (h Hex) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h)), nil }

func (h *Hex) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(string(b))
	*h = d
	if err != nil {
		return &badValue{text: string(b), err: err}
	}
	return nil
}

// Addr is a 64-bit address stored as a "0x..." string in JSON, so that
// readers in any language keep all 64 bits.
type Addr uint64

func (a Addr) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("0x%x", uint64(a))), nil }

func (a *Addr) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(string(b), 0, 64)
	*a = Addr(v)
	if err != nil {
		return &badValue{text: string(b), err: err}
	}
	return nil
}

// badValue is a value a field's type refuses, with its text, so that
// Parse can find it in the file.
type badValue struct {
	text string
	err  error
}

func (e *badValue) Error() string { return e.err.Error() }
func (e *badValue) Unwrap() error { return e.err }

// Case is one saved failure.
type Case struct {
	Format   string `json:"format"`
	Target   string `json:"target"`
	Producer string `json:"producer"`
	Consumer string `json:"consumer"`
	Version  int    `json:"sframe_version"`
	Seed     int64  `json:"seed"`

	CodeAddr Addr `json:"code_addr"`
	Code     Hex  `json:"code"`
	Entry    Addr `json:"entry"`
	Exit     Addr `json:"exit"`
	// Regs are the initial argument registers of the failing run (DWARF
	// register number -> value); Path is that run's index among the
	// program's paths, for reference (a case replays one run).
	Regs map[string]Addr `json:"regs,omitempty"`
	Path int             `json:"path,omitempty"`
	// Signal is the signal the failing run receives, if any (its Path
	// is 0: the case replays one run).
	Signal     *image.Signal  `json:"signal,omitempty"`
	Symbols    []image.Symbol `json:"symbols"`
	SFrameAddr Addr           `json:"sframe_addr"`
	SFrame     Hex            `json:"sframe"`
	// Modules (v3) are the loaded objects of a process image of several,
	// each with its code range and its own section; SFrame is then empty.
	Modules []Module `json:"modules,omitempty"`
	// Segments are further code placed apart (a function far from the
	// rest); most cases have none.
	Segments []Segment `json:"segments,omitempty"`
	// RuleRegs are the registers besides SP, FP and the link register the
	// section's rules name (image.Image.RuleRegs: a CFA on %r10), which
	// the replay reads at every step; omitted when none.
	RuleRegs []int `json:"rule_regs,omitempty"`

	Step     int    `json:"step"` // 0-based index of the failing instruction
	PC       Addr   `json:"pc"`
	Insn     string `json:"insn"`     // disassembly of the instruction at PC
	Function string `json:"function"` // symbol+offset of PC
	Row      string `json:"row,omitempty"`
	// ReferenceRow is the row sfconform's own encoding of the same
	// program has for PC, when it differs from Row (toolchain producers).
	ReferenceRow string          `json:"reference_row,omitempty"`
	Verdict      verdict.Verdict `json:"verdict"`
	Frame        int             `json:"frame"`
	Field        string          `json:"field,omitempty"`
	Detail       string          `json:"detail"`
	Expected     []frame.Frame   `json:"expected"`
	Got          []frame.Frame   `json:"got"`
	// Violations are the rules the section breaks, as validation found
	// them when the case was saved (warnings included).
	Violations []verdict.Violation `json:"violations,omitempty"`
	// The same two backtraces in the Compact Backtrace Format.
	ExpectedCBF Hex `json:"expected_cbf,omitempty"`
	GotCBF      Hex `json:"got_cbf,omitempty"`

	// Record is how a toolchain producer made the image: the tools' exact
	// versions (and Debian packages), the commands, and the tools'
	// warnings (an FDE it skipped, with the function and the line of
	// Assembly it is about). Absent for sfconform's own encoder.
	Record *image.Record `json:"producer_record,omitempty"`

	Assembly string `json:"assembly,omitempty"` // the program as GNU as source with .cfi directives
	Replay   string `json:"replay"`             // the command that replays this file

	// Since version 2.

	// ProducerVersion and ConsumerVersion name exactly what made the
	// section and what unwound: tools with their Debian packages, or
	// sfconform's own encoder and unwinder.
	ProducerVersion string `json:"producer_version,omitempty"`
	ConsumerVersion string `json:"consumer_version,omitempty"`
	// ConsumerHello is the NAME and VERSION an out-of-process consumer
	// announced in its hello (optional: older files do not have it).
	ConsumerHello string `json:"consumer_hello,omitempty"`
	// Build are the commands that make the image from Assembly on their
	// own (saved as repro.s), with the tools the producer ran: what a
	// toolchain maintainer types. Absent for sfconform's own encoder.
	Build []string `json:"build_commands,omitempty"`
	// Generator makes the program again: gen's seed and options and the
	// reductions the minimization applied.
	Generator *Generator `json:"generator,omitempty"`
	// Minimization says how the program was shrunk, or why it was not.
	Minimization *Minimization `json:"minimization,omitempty"`
	// Machine is the machine at the failing step, as the consumer was
	// given it: the registers and the stack's non-zero words.
	Machine *Machine `json:"machine,omitempty"`
	// Expect is set on a curated case (corpus/cases): what its replay
	// must show.
	Expect *Expectation `json:"expect,omitempty"`
}

// Generator is how gen makes the program: Generate with Seed and these
// options, then the reductions in order. Idle is gen.Options.Idle, the
// idle functions before reductions (-1 none); 0, in files written before
// it, is the seed's count, which a later generator may derive otherwise.
type Generator struct {
	Seed          int64       `json:"seed"`
	Funcs         int         `json:"funcs,omitempty"`
	MaxDepth      int         `json:"max_depth,omitempty"`
	Patterns      []string    `json:"patterns,omitempty"`
	SFrameVersion int         `json:"sframe_version,omitempty"`
	Paths         int         `json:"paths,omitempty"`
	Idle          int         `json:"idle,omitempty"`
	Reductions    []Reduction `json:"reductions,omitempty"`
}

// Reduction is one of gen's reductions (gen.Reduction).
type Reduction struct {
	Op     string `json:"op"`
	Func   string `json:"func,omitempty"`
	Callee string `json:"callee,omitempty"`
	N      int    `json:"n,omitempty"`
}

// Size measures a program (gen.Size).
type Size struct {
	Functions    int `json:"functions"`
	Instructions int `json:"instructions"`
	Bytes        int `json:"bytes"`
	Paths        int `json:"paths"`
}

func (s Size) String() string {
	return fmt.Sprintf("%d functions, %d instructions, %d bytes", s.Functions, s.Instructions, s.Bytes)
}

// Minimization is what the minimizer did: the signature it kept, the
// sizes before and after, and its effort. Skipped, when set, says why the
// program was saved as it failed.
type Minimization struct {
	Signature      string  `json:"signature,omitempty"`
	Original       Size    `json:"original"`
	Minimized      Size    `json:"minimized"`
	OriginalSteps  int     `json:"original_steps,omitempty"`
	MinimizedSteps int     `json:"minimized_steps,omitempty"`
	Attempts       int     `json:"attempts,omitempty"`
	Seconds        float64 `json:"seconds,omitempty"`
	Stopped        string  `json:"stopped,omitempty"`
	Skipped        string  `json:"skipped,omitempty"`
}

// Machine is the machine state at the failing step.
type Machine struct {
	PC Addr `json:"pc"`
	// Regs are the registers the consumer could read, by DWARF number.
	Regs map[string]Addr `json:"registers"`
	// The stack copy a consumer unwinds from: [StackAddr,
	// StackAddr+StackSize), of which Words are the non-zero 8-byte words
	// (in the target's byte order, as values).
	StackAddr Addr   `json:"stack_addr"`
	StackSize int    `json:"stack_size"`
	BigEndian bool   `json:"big_endian,omitempty"`
	Words     []Word `json:"stack_words"`
}

// Word is one stack word.
type Word struct {
	Addr  Addr `json:"addr"`
	Value Addr `json:"value"`
}

// Expectation is what a curated case's replay must show.
type Expectation struct {
	// Fails: the failure still reproduces with the provisioned tools (an
	// upstream bug); false: it no longer does (a fixed bug of sfconform,
	// which must stay fixed).
	Fails bool `json:"fails"`
	// Regenerate: the fixed bug was in what gen made, so the case is
	// checked by making its program again from Generator and checking
	// that one; the stored program is what the bug made.
	Regenerate bool   `json:"regenerate,omitempty"`
	Finding    string `json:"finding,omitempty"` // docs/findings/NNN-slug.md
	Fix        string `json:"fix,omitempty"`     // the commit that fixed a bug of sfconform
	Note       string `json:"note"`
}

// Segment is code at its own address.
type Segment struct {
	Addr Addr `json:"addr"`
	Code Hex  `json:"code"`
}

// Module is one loaded object of the image (image.Module): its name, code
// range [start, end) and its own section at sframe_addr.
type Module struct {
	Name       string `json:"name"`
	Start      Addr   `json:"start"`
	End        Addr   `json:"end"`
	SFrameAddr Addr   `json:"sframe_addr"`
	SFrame     Hex    `json:"sframe"`
}

// TargetOf is the case's target.
func (c *Case) TargetOf() (target.Target, error) { return target.Parse(c.Target) }

// Image rebuilds the image the failure ran on.
func (c *Case) Image() (*image.Image, error) {
	abi, err := c.TargetOf()
	if err != nil {
		return nil, err
	}
	img := &image.Image{
		Target: abi, Producer: c.Producer, SFrameVersion: c.Version,
		Code: c.Code, CodeAddr: uint64(c.CodeAddr), Entry: uint64(c.Entry), Exit: uint64(c.Exit),
		Symbols: c.Symbols, SFrame: c.SFrame, SFrameAddr: uint64(c.SFrameAddr), Record: c.Record,
		RuleRegs: c.RuleRegs,
	}
	for _, s := range c.Segments {
		img.Segments = append(img.Segments, image.Segment{Addr: uint64(s.Addr), Code: s.Code})
	}
	for _, m := range c.Modules {
		img.Modules = append(img.Modules, image.Module{Name: m.Name, Start: uint64(m.Start), End: uint64(m.End), SFrame: m.SFrame, SFrameAddr: uint64(m.SFrameAddr)})
	}
	if field, err := c.validate(); err != nil {
		return nil, fmt.Errorf("field %s: %w", field, err)
	}
	regs := map[int]uint64{}
	for k, v := range c.Regs {
		n, _ := strconv.Atoi(k)
		regs[n] = uint64(v)
	}
	img.Paths = []map[int]uint64{regs}
	if c.Signal != nil {
		s := *c.Signal
		s.Path = 0
		img.Signals = []image.Signal{s}
	}
	return img, nil
}

// SetImage fills the image fields of a case, with the argument registers
// of path (an index into img.Paths).
func (c *Case) SetImage(img *image.Image, path int) {
	c.Target, c.Producer, c.Version = img.Target.Name(), img.Producer, img.SFrameVersion
	c.Code, c.CodeAddr, c.Entry, c.Exit = img.Code, Addr(img.CodeAddr), Addr(img.Entry), Addr(img.Exit)
	c.Segments = nil
	for _, s := range img.Segments {
		c.Segments = append(c.Segments, Segment{Addr: Addr(s.Addr), Code: s.Code})
	}
	c.Symbols, c.SFrame, c.SFrameAddr = img.Symbols, img.SFrame, Addr(img.SFrameAddr)
	c.Modules = nil
	for _, m := range img.Modules {
		c.Modules = append(c.Modules, Module{Name: m.Name, Start: Addr(m.Start), End: Addr(m.End), SFrame: m.SFrame, SFrameAddr: Addr(m.SFrameAddr)})
	}
	c.Record, c.RuleRegs = img.Record, img.RuleRegs
	c.Regs, c.Path = map[string]Addr{}, path
	if path >= 0 && path < len(img.Paths) {
		for k, v := range img.Paths[path] {
			c.Regs[strconv.Itoa(k)] = Addr(v)
		}
	}
	c.Signal = nil
	if s, ok := img.SignalOf(path); ok {
		c.Signal = &s
	}
}

// FormatError reports a case file that cannot be read: the file, the
// field and the byte offset where the problem lies.
type FormatError struct {
	File   string
	Field  string // "symbols[3].name"; "the document" when it is not in a field
	Offset int64  // -1 when unknown
	Err    error
}

func (e *FormatError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s: field %s: %v", e.File, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: byte offset %d, field %s: %v", e.File, e.Offset, e.Field, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrNewerFormat is wrapped by the error for a file of a format version
// this sfconform does not read yet.
var ErrNewerFormat = errors.New("written by a newer sfconform")

// validate checks what Image and replay rely on; it returns the field at
// fault.
func (c *Case) validate() (string, error) {
	if _, err := c.TargetOf(); err != nil {
		return "target", err
	}
	switch {
	case len(c.Code) == 0:
		return "code", errors.New("no code")
	case c.Entry < c.CodeAddr || uint64(c.Entry) >= uint64(c.CodeAddr)+uint64(len(c.Code)):
		return "entry", fmt.Errorf("entry %#x outside the code [%#x, %#x)", uint64(c.Entry), uint64(c.CodeAddr), uint64(c.CodeAddr)+uint64(len(c.Code)))
	case len(c.Symbols) == 0:
		return "symbols", errors.New("no symbols")
	case c.Step < 0:
		return "step", fmt.Errorf("negative step %d", c.Step)
	}
	if len(c.Modules) > 0 {
		img := image.Image{SFrame: c.SFrame, SFrameAddr: uint64(c.SFrameAddr)}
		for _, m := range c.Modules {
			img.Modules = append(img.Modules, image.Module{Name: m.Name, Start: uint64(m.Start), End: uint64(m.End)})
		}
		if err := img.CheckModules(); err != nil {
			return "modules", err
		}
	}
	for k := range c.Regs {
		if n, err := strconv.Atoi(k); err != nil || n < 0 || n >= machine.MaxReg {
			return "regs." + k, fmt.Errorf("regs: %q is not a DWARF register number below %d", k, machine.MaxReg)
		}
	}
	if m := c.Machine; m != nil {
		for k := range m.Regs {
			if n, err := strconv.Atoi(k); err != nil || n < 0 || n >= machine.MaxReg {
				return "machine.registers." + k, fmt.Errorf("%q is not a DWARF register number below %d", k, machine.MaxReg)
			}
		}
		end := uint64(m.StackAddr) + uint64(m.StackSize)
		if m.StackSize < 0 || end < uint64(m.StackAddr) {
			return "machine.stack_size", fmt.Errorf("stack [%#x, +%d) is no range", uint64(m.StackAddr), m.StackSize)
		}
		for i, w := range m.Words {
			if uint64(w.Addr) < uint64(m.StackAddr) || uint64(w.Addr)+8 > end {
				return fmt.Sprintf("machine.stack_words[%d].addr", i), fmt.Errorf("word at %#x outside the stack [%#x, %#x)", uint64(w.Addr), uint64(m.StackAddr), end)
			}
		}
	}
	return "", nil
}

// Load reads a case file. Errors name the file, the field and the byte
// offset of the problem (*FormatError).
func Load(path string) (*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse decodes a case held in memory; name is used in errors. It reads
// every format version from OldestVersion to FormatVersion, and refuses a
// newer one with the version it would need.
func Parse(name string, b []byte) (*Case, error) {
	fail := func(field string, off int64, err error) (*Case, error) {
		if field == "" {
			field = fieldAt(b, off)
		}
		return nil, &FormatError{File: name, Field: field, Offset: off, Err: err}
	}
	// The format first, alone: a newer file is refused for its version,
	// not for the fields this reader does not know.
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(b, &head); err == nil {
		v, ok := strings.CutPrefix(head.Format, FormatPrefix)
		n, err := strconv.Atoi(v)
		switch {
		case !ok || err != nil:
			return fail("format", offsetOf(b, "format"), fmt.Errorf("format is %q, want %s<version>", head.Format, FormatPrefix))
		case n > FormatVersion:
			return fail("format", offsetOf(b, "format"), fmt.Errorf("%w: it is %s, which needs a reader of version %d; this sfconform reads versions %d to %d",
				ErrNewerFormat, head.Format, n, OldestVersion, FormatVersion))
		case n < OldestVersion:
			return fail("format", offsetOf(b, "format"), fmt.Errorf("format %s is older than any this sfconform reads (%d to %d)", head.Format, OldestVersion, FormatVersion))
		}
	}
	var c Case
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fail("", se.Offset, err)
		case errors.As(err, &te):
			return fail(fieldAt(b, max(te.Offset-1, 0)), te.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return fail("", int64(len(b)), errors.New("the file ends inside the JSON document (truncated?)"))
		}
		// A value its type refuses (bad hex, an address that is no
		// number) or an unknown member: the decoder does not say where.
		field, off := locateValueError(b, err)
		return fail(field, off, err)
	}
	if dec.More() {
		off := dec.InputOffset()
		return fail("the document", off, errors.New("data after the JSON document"))
	}
	if field, err := c.validate(); err != nil {
		return fail(field, offsetOf(b, field), err)
	}
	return &c, nil
}

// Save writes the case into dir under a name made of its coordinates and
// returns the path. An existing file is never overwritten, and the file
// appears whole or not at all: the case is written to a temporary file in
// dir, synced, and linked to its name.
func Save(dir string, c *Case) (string, error) {
	return save(dir, c, writeAll)
}

// writeAll is how save writes the temporary file (tests stand in a full
// disk).
func writeAll(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}

func save(dir string, c *Case, write func(*os.File, []byte) error) (string, error) {
	c.Format = FormatName
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := fmt.Sprintf("%s-%s-%s-seed%d-step%d", c.Target, fileSafe(c.Producer), fileSafe(c.Consumer), c.Seed, c.Step)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	for i := 0; ; i++ {
		name := base + ".json"
		if i > 0 {
			name = fmt.Sprintf("%s-%d.json", base, i)
		}
		path := filepath.Join(dir, name)
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		c.Replay = "sfconform repro " + path
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			tmp.Close()
			return "", err
		}
		if err := tmp.Truncate(0); err != nil {
			tmp.Close()
			return "", err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			tmp.Close()
			return "", err
		}
		if err := write(tmp, append(b, '\n')); err != nil {
			tmp.Close()
			return "", fmt.Errorf("writing %s: %w", path, err)
		}
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return "", fmt.Errorf("writing %s: %w", path, err)
		}
		// A link, not a rename: it fails when the name was taken
		// meanwhile, by another process saving the same coordinates.
		err = os.Link(tmp.Name(), path)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			tmp.Close()
			return "", err
		}
		tmp.Close()
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
		return path, nil
	}
}

// fileSafe makes a plug-in's name usable in a file name: "gas:/opt/bu/bin"
// and "exec:./unwind --flag" name a directory or a command line.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// MachineOf keeps a snapshot for a reproducer: the valid registers and
// the non-zero words of the stack copy.
func MachineOf(s *machine.Snapshot) *Machine {
	m := &Machine{PC: Addr(s.Regs.PC), Regs: map[string]Addr{}, StackAddr: Addr(s.StackAddr), StackSize: len(s.Stack), BigEndian: s.BigEndian}
	for r := 0; r < machine.MaxReg; r++ {
		if v, ok := s.Regs.Get(r); ok {
			m.Regs[strconv.Itoa(r)] = Addr(v)
		}
	}
	for off := 0; off+8 <= len(s.Stack); off += 8 {
		if v, _ := s.ReadWord(s.StackAddr + uint64(off)); v != 0 {
			m.Words = append(m.Words, Word{Addr: Addr(s.StackAddr + uint64(off)), Value: Addr(v)})
		}
	}
	return m
}

// Snapshot is the machine state as a consumer reads it.
func (m *Machine) Snapshot() *machine.Snapshot {
	s := &machine.Snapshot{StackAddr: uint64(m.StackAddr), Stack: make([]byte, m.StackSize), BigEndian: m.BigEndian}
	s.Regs.PC = uint64(m.PC)
	for k, v := range m.Regs {
		if n, err := strconv.Atoi(k); err == nil && n >= 0 && n < machine.MaxReg {
			s.Regs.Set(n, uint64(v))
		}
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if m.BigEndian {
		order = binary.BigEndian
	}
	for _, w := range m.Words {
		if off := uint64(w.Addr) - s.StackAddr; uint64(w.Addr) >= s.StackAddr && off+8 <= uint64(len(s.Stack)) {
			order.PutUint64(s.Stack[off:], uint64(w.Value))
		}
	}
	return s
}

// WriteFile writes the case to path, replacing a file there: for curated
// cases, whose names are chosen. Like Save it writes a temporary file in
// the same directory, syncs it and renames it, so a reader sees the old
// case or the new one, whole.
func WriteFile(path string, c *Case) error {
	c.Format = FormatName
	if c.Replay == "" {
		c.Replay = "sfconform repro " + path
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(path, append(b, '\n'))
}
