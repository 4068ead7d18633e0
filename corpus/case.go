package corpus

import (
	"bytes"
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
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// FormatName identifies the file format; it changes when the fields do.
const FormatName = "sfconform-case/1"

// Hex is a byte string stored as lowercase hex in JSON.
type Hex []byte

func (h Hex) MarshalText() ([]byte, error) { return []byte(hex.EncodeToString(h)), nil }

func (h *Hex) UnmarshalText(b []byte) error {
	d, err := hex.DecodeString(string(b))
	*h = d
	return err
}

// Addr is a 64-bit address stored as a "0x..." string in JSON, so that
// readers in any language keep all 64 bits.
type Addr uint64

func (a Addr) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("0x%x", uint64(a))), nil }

func (a *Addr) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(string(b), 0, 64)
	*a = Addr(v)
	return err
}

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
	// Segments are further code placed apart (a function far from the
	// rest); most cases have none.
	Segments []Segment `json:"segments,omitempty"`

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
}

// Segment is code at its own address.
type Segment struct {
	Addr Addr `json:"addr"`
	Code Hex  `json:"code"`
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
	}
	for _, s := range c.Segments {
		img.Segments = append(img.Segments, image.Segment{Addr: uint64(s.Addr), Code: s.Code})
	}
	regs := map[int]uint64{}
	for k, v := range c.Regs {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || n >= machine.MaxReg {
			return nil, fmt.Errorf("regs: %q is not a DWARF register number below %d", k, machine.MaxReg)
		}
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
	c.Record = img.Record
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

// validate checks what Image and replay rely on.
func (c *Case) validate() error {
	if c.Format != FormatName {
		return fmt.Errorf("format is %q, want %q", c.Format, FormatName)
	}
	if _, err := c.TargetOf(); err != nil {
		return err
	}
	switch {
	case len(c.Code) == 0:
		return errors.New("no code")
	case c.Entry < c.CodeAddr || uint64(c.Entry) >= uint64(c.CodeAddr)+uint64(len(c.Code)):
		return fmt.Errorf("entry %#x outside the code [%#x, %#x)", uint64(c.Entry), uint64(c.CodeAddr), uint64(c.CodeAddr)+uint64(len(c.Code)))
	case len(c.Symbols) == 0:
		return errors.New("no symbols")
	case c.Step < 0:
		return fmt.Errorf("negative step %d", c.Step)
	}
	return nil
}

// Load reads a case file. Errors name the file and, for malformed JSON,
// the byte offset.
func Load(path string) (*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse decodes a case held in memory; name is used in errors.
func Parse(name string, b []byte) (*Case, error) {
	var c Case
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s: byte offset %d: %v", name, se.Offset, err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s: byte offset %d: field %s: %v", name, te.Offset, te.Field, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: byte offset %d: the file ends inside the JSON document (truncated?)", name, len(b))
		}
		return nil, fmt.Errorf("%s: byte offset %d: %v", name, dec.InputOffset(), err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// Save writes the case into dir under a name made of its coordinates and
// returns the path. An existing file is never overwritten.
func Save(dir string, c *Case) (string, error) {
	c.Format = FormatName
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := fmt.Sprintf("%s-%s-%s-seed%d-step%d", c.Target, fileSafe(c.Producer), fileSafe(c.Consumer), c.Seed, c.Step)
	for i := 0; ; i++ {
		name := base + ".json"
		if i > 0 {
			name = fmt.Sprintf("%s-%d.json", base, i)
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		c.Replay = "sfconform run --replay " + path
		b, err := json.MarshalIndent(c, "", "  ")
		if err == nil {
			_, err = f.Write(append(b, '\n'))
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return path, err
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
