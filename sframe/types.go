package sframe

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic is the SFrame magic number, stored in the target byte order.
const Magic = 0xdee2

// HeaderSize is the size of the fixed header in every version.
const HeaderSize = 28

// Version is the format version in the preamble.
type Version uint8

const (
	Version1 Version = 1
	Version2 Version = 2
	Version3 Version = 3
)

// Flags are the section-wide preamble flags.
type Flags uint8

const (
	FlagFDESorted      Flags = 0x1
	FlagFramePointer   Flags = 0x2 // versions 1 and 2 only
	FlagFuncStartPCRel Flags = 0x4 // version 2 erratum 1, version 3
	flagsKnownV1       Flags = FlagFDESorted | FlagFramePointer
	flagsKnownV2       Flags = FlagFDESorted | FlagFramePointer | FlagFuncStartPCRel
	flagsKnownV3       Flags = FlagFDESorted | FlagFuncStartPCRel
)

// ABI is the ABI/arch identifier in the header.
type ABI uint8

const (
	ABIAArch64BE ABI = 1
	ABIAArch64LE ABI = 2
	ABIAMD64LE   ABI = 3
	ABIS390XBE   ABI = 4
)

// ByteOrder is the byte order the ABI stores its sections in.
func (a ABI) ByteOrder() binary.ByteOrder {
	if a == ABIAArch64LE || a == ABIAMD64LE {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

func (a ABI) String() string {
	switch a {
	case ABIAArch64BE:
		return "AARCH64 BIG ENDIAN"
	case ABIAArch64LE:
		return "AARCH64 LITTLE ENDIAN"
	case ABIAMD64LE:
		return "AMD64 LITTLE ENDIAN"
	case ABIS390XBE:
		return "S390X BIG ENDIAN"
	}
	return fmt.Sprintf("ABI(%d)", uint8(a))
}

// DWARF register numbers the rules use.
const (
	RegAMD64FP   = 6
	RegAMD64SP   = 7
	RegAArch64FP = 29
	RegAArch64LR = 30
	RegAArch64SP = 31
	RegS390XFP   = 11 // preferred frame pointer
	RegS390XRA   = 14
	RegS390XSP   = 15
	// s390x DWARF 16-31 are the FPRs f0,f2,f4,f6,f1,f3,f5,f7,f8,f10,f12,f14,f9,f11,f13,f15.
)

// SPRegister and FPRegister give the DWARF numbers of the ABI's stack and
// frame pointers.
func (a ABI) SPRegister() int {
	switch a {
	case ABIAMD64LE:
		return RegAMD64SP
	case ABIS390XBE:
		return RegS390XSP
	}
	return RegAArch64SP
}

func (a ABI) FPRegister() int {
	switch a {
	case ABIAMD64LE:
		return RegAMD64FP
	case ABIS390XBE:
		return RegS390XFP
	}
	return RegAArch64FP
}

// PCType says how an FDE's FRE start offsets match a PC.
type PCType uint8

const (
	PCInc  PCType = 0 // FRE applies from its start up to the next FRE's start
	PCMask PCType = 1 // FRE start compared with (PC - func start) % RepSize
)

// FDEType is the v3 FDE type (info2 bits 0-4). Versions 1 and 2 are always Default.
type FDEType uint8

const (
	FDETypeDefault FDEType = 0
	FDETypeFlex    FDEType = 1
)

// FREType is the width of FRE start offsets in an FDE.
type FREType uint8

const (
	FREAddr1 FREType = 0
	FREAddr2 FREType = 1
	FREAddr4 FREType = 2
)

// PAuthKey is the AArch64 key that signs return addresses in an FDE.
type PAuthKey uint8

const (
	PAuthKeyA PAuthKey = 0
	PAuthKeyB PAuthKey = 1
)

// RegCFA as a Rule's Reg means "relative to the CFA" rather than to a register.
const RegCFA = -1

// RuleKind classifies a Rule.
type RuleKind uint8

const (
	// RuleUndefined: no value. For RA it marks the outermost frame (an FRE
	// with no data words); a CFA rule is undefined only then too.
	RuleUndefined RuleKind = iota
	// RuleSame: the value is still where it lives in the callee: the caller's
	// FP is still in the FP register, the RA is still in the link register
	// (AArch64 x30, s390x r14). Valid for RA in the topmost frame only.
	RuleSame
	// RuleExpr: addr = (Reg == RegCFA ? CFA : reg[Reg]) + Offset;
	// value = Deref ? *addr : addr.
	// A CFA rule is always RuleExpr with a register base. An RA or FP saved
	// on the stack is {RegCFA, off, Deref: true}; an RA or FP held in a
	// register (s390x v2 register-number words, flexible rules) is
	// {reg, 0, Deref: false}.
	RuleExpr
)

// Rule says how to recover one value (CFA, RA or FP) of the caller.
type Rule struct {
	Kind   RuleKind
	Deref  bool
	Reg    int // DWARF register number, or RegCFA
	Offset int64
}

// Row is one arch-neutral unwind row: what holds from Start (an offset from
// the function start) up to the next row's Start.
type Row struct {
	Start     uint32
	MangledRA bool     // AArch64: the saved RA is signed with PAuthKey
	PAuthKey  PAuthKey // copied from the FDE
	Signal    bool     // copied from the FDE (v3 signal_p)
	CFA       Rule
	RA        Rule
	FP        Rule
}

// FDE is one function with all its rows: the friendly, materialised form
// that Encode writes, that Section.FDEs and Func.FDE return and that
// tests and generators build by hand. Lookups on a decoded Table do not
// need it: they work on Func, which decodes rows on demand.
type FDE struct {
	Start    uint64 // absolute virtual address of the function's first byte
	Size     uint32
	PCType   PCType
	RepSize  uint8
	PAuthKey PAuthKey
	Signal   bool
	Type     FDEType
	FREType  FREType // as read; Encode recomputes it
	Rows     []Row

	// Offset is the byte offset of the FDE (index entry) in the decoded
	// buffer, for error messages and dumps.
	Offset int

	// version is the version of the section the FDE was read from (0
	// for FDEs built in memory); FindRow needs it for the version 1
	// PCMASK rule and the version 3 outermost FDE.
	version Version
}

// End is one past the function's last byte.
func (f *FDE) End() uint64 { return f.Start + uint64(f.Size) }

// Func is one function of a decoded Table, as Table.FindFDE and
// Section.Func return it: the fields of its FDE, and a handle on the
// FDE's frame row entries in the decoded buffer, which FindRow, Rows and
// FDE decode when asked. A Func is a small value; it stays valid as long
// as the Table and its buffer do. The zero Func describes no function
// (every Func a lookup finds has Size > 0).
type Func struct {
	Start    uint64 // absolute virtual address of the function's first byte
	Size     uint32
	NumFREs  int // frame row entries stored for it
	PCType   PCType
	RepSize  uint8
	PAuthKey PAuthKey
	Signal   bool
	Type     FDEType
	FREType  FREType
	Index    int // position of its FDE in its section's FDE table (stored order)
	Offset   int // byte offset of its FDE (index entry) in the decoded buffer

	sec  *Section
	fres int // byte offset of its first FRE in the buffer
}

// End is one past the function's last byte.
func (f Func) End() uint64 { return f.Start + uint64(f.Size) }

// Section is the section the function belongs to (nil for the zero Func).
func (f Func) Section() *Section { return f.sec }

// Header is the decoded fixed header of one section.
type Header struct {
	Version    Version
	Flags      Flags
	ABI        ABI
	CFAFixedFP int8
	CFAFixedRA int8
	AuxHeader  []byte
	NumFDEs    uint32
	NumFREs    uint32
	FRELen     uint32
	FDEOff     uint32
	FREOff     uint32
}

// Section is one SFrame section of a decoded buffer. Its functions are
// read through Func (Section.Func, in stored order) or all at once with
// their rows (Section.FDEs).
type Section struct {
	Header Header
	Order  binary.ByteOrder
	Offset int    // byte offset of this section's header in the decoded buffer
	Size   int    // bytes the section occupies (header through end of FREs)
	Base   uint64 // virtual address of the section's first byte

	t       *Table
	first   int // stored index of the section's first FDE in the table
	fdeBase int // byte offsets in the buffer: FDE table,
	freBase int // FRE sub-section
	freEnd  int // and its end
	fdeSize int // bytes per FDE (index entry)
}

// Table is the look-up-able set of one or more sections decoded from one
// buffer, as a linker that concatenates sections leaves them. It refers
// to the decoded buffer, which must not change while the Table is in use.
type Table struct {
	Sections []*Section
	ABI      ABI
	Order    binary.ByteOrder

	buf []byte
	be  bool // Order is big-endian
	// starts holds the start of every FDE of every section, in ascending
	// order (stable: equal starts keep their stored order). The FDE at
	// sorted position i is number perm[i] in stored order, sections back
	// to back, or number i when perm is nil (stored order already sorted,
	// the usual case for a linked section). Everything else about it is
	// read from its FDE (index entry) in the buffer when needed.
	starts []uint64
	perm   []int32
	// ends[i] is the largest end of the functions at sorted positions
	// 0..i; set only when some functions overlap, so that FindFDE can find
	// an enclosing one.
	ends []uint64
	// buckets narrows FindFDE's binary search: the address range from
	// starts[0] is cut into blocks of 1<<shift bytes, and buckets[b] is
	// the first sorted position whose start lies in block b or later.
	// There are at most as many blocks as functions; nil for small tables.
	buckets []uint32
	shift   uint
}

// Errors. Every decode error is a *FormatError wrapping one of these.
var (
	ErrTruncated        = errors.New("sframe: truncated")
	ErrBadMagic         = errors.New("sframe: bad magic")
	ErrBadVersion       = errors.New("sframe: unsupported version")
	ErrBadFlags         = errors.New("sframe: unknown flag bits")
	ErrBadABI           = errors.New("sframe: unknown ABI")
	ErrBadSubsection    = errors.New("sframe: sub-section offsets out of order or out of bounds")
	ErrCountMismatch    = errors.New("sframe: counts do not match the header")
	ErrTrailingData     = errors.New("sframe: non-zero trailing data")
	ErrFDEOutOfBounds   = errors.New("sframe: FDE or FDE attribute out of bounds")
	ErrFREOutOfBounds   = errors.New("sframe: FRE out of bounds")
	ErrBadFREType       = errors.New("sframe: bad FRE type")
	ErrBadFDEType       = errors.New("sframe: bad FDE type")
	ErrBadDataWordSize  = errors.New("sframe: bad data word size")
	ErrBadDataWordCount = errors.New("sframe: bad data word count")
	ErrFREStartPastEnd  = errors.New("sframe: FRE start beyond function size")
	// ErrFREStartAtEnd is not a decode error: Check reports an FRE that
	// starts at the function's end (a row covering no PC), which GNU as
	// writes and the libsframe of binutils 2.40 and 2.44 asserts against.
	ErrFREStartAtEnd     = errors.New("sframe: FRE starts at the function's end")
	ErrFREsNotIncreasing = errors.New("sframe: FRE starts not increasing")
	ErrBadFlexRule       = errors.New("sframe: bad flexible rule")
	ErrNotSorted         = errors.New("sframe: FDEs not sorted")
	ErrOverlappingFDEs   = errors.New("sframe: functions overlap")
	ErrBadRepSize        = errors.New("sframe: PCMASK FDE with zero repetition size")
	ErrBadAuxHeader      = errors.New("sframe: auxiliary header")

	// Findings of Table.Check only: sections that decode but that a
	// strict consumer refuses or mis-reads.
	ErrBadFixedOffset  = errors.New("sframe: fixed CFA offset not the ABI's")
	ErrBadByteOrder    = errors.New("sframe: section not in its ABI's byte order")
	ErrBadMangledRA    = errors.New("sframe: mangled-RA bit outside AArch64")
	ErrDuplicateFDE    = errors.New("sframe: two FDEs for one function start")
	ErrOverlappingFREs = errors.New("sframe: FRE data of two functions overlap")
)

// Lookup and unwind errors.
var (
	ErrNoFDE       = errors.New("sframe: no FDE covers the PC")
	ErrNoRow       = errors.New("sframe: no row covers the PC")
	ErrUnreadable  = errors.New("sframe: memory unreadable")
	ErrCFANotAbove = errors.New("sframe: CFA not above the previous frame")
	ErrBadRule     = errors.New("sframe: rule cannot be applied here")
	// ErrSignalFrame is no longer returned: the Unwinder unwinds through
	// signal trampolines from the signal frame (see Unwinder).
	ErrSignalFrame = errors.New("sframe: signal frame")
)

// FormatError reports malformed input at a byte offset of the decoded buffer.
type FormatError struct {
	Off int    // byte offset in the buffer
	Msg string // what is wrong there
	Err error  // one of the Err* sentinels
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at byte offset %d (0x%x): %s", e.Err, e.Off, e.Off, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }
