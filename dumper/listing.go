package dumper

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
)

// Listing is one SFrame section as a dumper printed it: the header fields
// it shows and every function with its rows, each row's columns already
// read as rules (sframe.Rule) for the ABI given to the parser.
type Listing struct {
	Version sframe.Version
	// Flags are the flag names as printed: SFRAME_F_FDE_SORTED and
	// friends (GNU), FDESorted and friends (LLVM); a number for a bit the
	// dumper has no name for. Empty for "Flags: NONE".
	Flags []string
	ABI   sframe.ABI // the ABI the rules were read for
	// CFAFixedFP and CFAFixedRA are the header's fixed offsets the rules
	// were read with: as printed, or, when the layout prints none (GNU
	// objdump 2.40), the values GNU as writes for the ABI
	// (sframe.DefaultFixedOffsets). FixedPrinted says which.
	CFAFixedFP, CFAFixedRA int8
	FixedPrinted           bool
	NumFDEs, NumFREs       int
	Funcs                  []Func
}

// Func is one function descriptor as printed.
type Func struct {
	Index  int    // "func idx [N]" / "FuncDescEntry [N]": the FDE's stored position
	Start  uint64 // absolute address of the function's first byte
	Size   uint32
	PCType sframe.PCType
	// RepSize is the repetition block size of a PCMASK function; 0 when
	// the dumper does not print it (GNU objdump and readelf never do):
	// RepSizeKnown tells.
	RepSize      uint8
	RepSizeKnown bool
	PAuthKey     sframe.PAuthKey
	Signal       bool // v3 attribute "S"
	Type         sframe.FDEType
	Attrs        string // GNU: the attribute letters as printed ("SF"); LLVM: ""
	Rows         []Row
}

// Row is one frame row entry as printed.
type Row struct {
	// StartPC is the row's start as printed: an absolute address, or for
	// a PCMASK function the offset into the repeated block.
	StartPC uint64
	// Start is the offset from the function's start (StartPC itself for
	// PCMASK).
	Start uint32
	// CFA, FP and RA are what the row's columns mean. A row that marks
	// the outermost frame ("RA undefined"; an FRE without data words) has
	// CFA and RA sframe.RuleUndefined and FP sframe.RuleSame.
	CFA, FP, RA sframe.Rule
	Mangled     bool // GNU "[s]", LLVM "Return Address Signed: Yes"
	// Outermost marks a row with no recoverable return address.
	Outermost bool
	// Text holds the GNU columns CFA, FP and RA as printed (without the
	// "[s]" marker); empty for an outermost row and for LLVM listings.
	Text [3]string
}

// Errors. A parse error wraps ErrSyntax (text the parser does not know
// how to read, with its line) or ErrNoListing (the dumper printed no
// rows for the section, e.g. only its header); ErrNotRepresentable comes
// from Table when the rows cannot be looked up as an SFrame table.
var (
	ErrSyntax           = errors.New("dumper: unreadable listing")
	ErrNoListing        = errors.New("dumper: no function listing")
	ErrNotRepresentable = errors.New("dumper: rows not representable as an SFrame table")
)

// LineError reports text a parser could not read, with its line number
// (from 1) in the text given to the parser. It wraps ErrSyntax, or
// ErrNoListing for a line that says the dumper printed no rows.
type LineError struct {
	Line int
	Text string // the line
	Err  error  // what is wrong with it
}

func (e *LineError) Error() string {
	return fmt.Sprintf("line %d %q: %v", e.Line, e.Text, e.Err)
}

func (e *LineError) Unwrap() error {
	if errors.Is(e.Err, ErrNoListing) {
		return e.Err
	}
	return fmt.Errorf("%w: %w", ErrSyntax, e.Err)
}

// FDEs returns the listing's functions as sframe.FDE values, in listing
// order, rows included (each row carries its function's pointer
// authentication key and signal flag, as sframe's decoder sets them).
func (l *Listing) FDEs() []sframe.FDE {
	out := make([]sframe.FDE, len(l.Funcs))
	for i := range l.Funcs {
		f := &l.Funcs[i]
		fde := sframe.FDE{
			Start: f.Start, Size: f.Size, PCType: f.PCType, RepSize: f.RepSize,
			PAuthKey: f.PAuthKey, Signal: f.Signal, Type: f.Type,
			Rows: make([]sframe.Row, len(f.Rows)),
		}
		for j := range f.Rows {
			r := &f.Rows[j]
			fde.Rows[j] = sframe.Row{
				Start: r.Start, MangledRA: r.Mangled, PAuthKey: f.PAuthKey, Signal: f.Signal,
				CFA: r.CFA, RA: r.RA, FP: r.FP,
			}
		}
		out[i] = fde
	}
	return out
}

// checkCounts compares the functions and rows listed with the header's
// counts: a listing cut short must not pass for a complete one.
func (l *Listing) checkCounts() error {
	if len(l.Funcs) != l.NumFDEs {
		return fmt.Errorf("%w: the header counts %d FDEs, %d listed", ErrSyntax, l.NumFDEs, len(l.Funcs))
	}
	n := 0
	for _, f := range l.Funcs {
		n += len(f.Rows)
	}
	if n != l.NumFREs {
		return fmt.Errorf("%w: the header counts %d FREs, %d listed", ErrSyntax, l.NumFREs, n)
	}
	return nil
}

// outermost is the rules of a row without a return address.
func outermost(r *Row) {
	r.Outermost = true
	r.CFA = sframe.Rule{Kind: sframe.RuleUndefined}
	r.RA = sframe.Rule{Kind: sframe.RuleUndefined}
	r.FP = sframe.Rule{Kind: sframe.RuleSame}
}
