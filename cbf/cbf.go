package cbf

import (
	"errors"
	"fmt"
	"strings"
)

// Version is the only format version this package reads and writes.
const Version = 0

// MaxEntries bounds the number of frames plus omitted-frame runs one
// backtrace may hold. A "rep" instruction of a few bytes can ask for 2^64
// copies of a frame, so Decode needs a ceiling; Encode enforces the same one
// so that everything it writes decodes again.
const MaxEntries = 1 << 16

// WordSize is the machine word width the addresses of a backtrace have, in
// bits: 16, 32 or 64.
type WordSize uint8

const (
	Word16 WordSize = 16
	Word32 WordSize = 32
	Word64 WordSize = 64
)

// sizeCode is the info byte's size field; ok is false for sizes the format
// has no code for.
func (w WordSize) sizeCode() (code byte, ok bool) {
	switch w {
	case Word16:
		return 0, true
	case Word32:
		return 1, true
	case Word64:
		return 2, true
	}
	return 0, false
}

// mask keeps the low w bits of a value.
func (w WordSize) mask() uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

func (w WordSize) bytes() int { return int(w) / 8 }

func (w WordSize) String() string { return fmt.Sprintf("%d-bit", uint8(w)) }

// Kind says what a frame's address is. The values equal the high nibble of
// the instruction that carries the frame (0x1_, 0x2_, 0x3_), so the zero Kind
// is invalid and a Frame left unset is caught by Encode.
type Kind uint8

const (
	// KindPC is an exact program counter, as in frame 0: the instruction
	// at Addr has not yet executed.
	KindPC Kind = 1
	// KindRA is a return address: the call before Addr has executed and
	// the instruction at Addr has not.
	KindRA Kind = 2
	// KindAsync is the entry point of an async resume function.
	KindAsync Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindPC:
		return "pc"
	case KindRA:
		return "ra"
	case KindAsync:
		return "async"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Frame is one stack frame of a backtrace.
type Frame struct {
	Kind Kind
	Addr uint64 // must fit the backtrace's word size
}

func (f Frame) String() string { return fmt.Sprintf("%v %#x", f.Kind, f.Addr) }

// Omission is a run of frames left out when the backtrace was captured (the
// "omit" instruction), for instance the middle of a deep recursion.
type Omission struct {
	// At is the index in Frames of the frame that follows the run;
	// len(Frames) puts the run after the last frame.
	At int
	// Count is the number of frames omitted: at least 1 and at most the
	// largest value of the word size.
	Count uint64
}

// Backtrace is everything a CBF version 0 stream can say: a word size, a
// sequence of frames with omitted-frame runs between them, and whether the
// capture stopped early.
type Backtrace struct {
	Size   WordSize
	Frames []Frame
	// Omitted lists the omitted-frame runs in stream order: At never
	// decreases. Several runs may share an At; they stay separate, as two
	// omit instructions in a row do.
	Omitted []Omission
	// Truncated is set when the stream ends with "trunc": the capture hit
	// a limit and frames beyond the last one exist.
	Truncated bool
}

// String lists the backtrace on one line, omitted runs in place, for
// reports and test failures.
func (bt Backtrace) String() string {
	var s strings.Builder
	s.WriteString(bt.Size.String())
	s.WriteString(":")
	o := 0
	for i := 0; i <= len(bt.Frames); i++ {
		for ; o < len(bt.Omitted) && bt.Omitted[o].At == i; o++ {
			fmt.Fprintf(&s, " [%d omitted]", bt.Omitted[o].Count)
		}
		if i < len(bt.Frames) {
			s.WriteString(" ")
			s.WriteString(bt.Frames[i].String())
		}
	}
	for ; o < len(bt.Omitted); o++ { // out of order: show, don't hide
		fmt.Fprintf(&s, " [%d omitted at %d]", bt.Omitted[o].Count, bt.Omitted[o].At)
	}
	if bt.Truncated {
		s.WriteString(" [truncated]")
	}
	return s.String()
}

// Errors from Decode arrive as a *FormatError wrapping one of the Decode
// sentinels; errors from Encode wrap one of the sentinels with the frame or
// run at fault. Test with errors.Is.
var (
	// From Decode; Encode also reports ErrReservedSize, ErrAddressOverflow,
	// ErrCountOverflow, ErrZeroCount and ErrTooLarge for a Backtrace it
	// cannot write.
	ErrBadVersion      = errors.New("cbf: unsupported version")
	ErrReservedSize    = errors.New("cbf: reserved word size")
	ErrTruncated       = errors.New("cbf: truncated")
	ErrUnknownOpcode   = errors.New("cbf: unknown opcode")
	ErrAddressOverflow = errors.New("cbf: address value wider than the word size")
	ErrCountOverflow   = errors.New("cbf: count wider than the word size")
	ErrZeroCount       = errors.New("cbf: zero count")
	ErrNothingToRepeat = errors.New("cbf: rep with no earlier frame")
	ErrTrailingData    = errors.New("cbf: data after the end instruction")
	ErrTooLarge        = errors.New("cbf: more than MaxEntries frames and omitted runs")
	// From Encode only.
	ErrBadKind  = errors.New("cbf: frame kind is not pc, ra or async")
	ErrBadOrder = errors.New("cbf: omitted run out of order or out of range")
)

// FormatError reports malformed CBF data at a byte offset of the decoded
// buffer.
type FormatError struct {
	Off int    // byte offset in the buffer
	Msg string // what is wrong there
	Err error  // one of the Err* sentinels
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v at byte offset %d (0x%x): %s", e.Err, e.Off, e.Off, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Opcodes and fields of the instruction byte.
const (
	opEnd   = 0x00
	opTrunc = 0x01
	// 0x10-0x3f: address instructions, kind<<4 | a<<3 | (bytes-1).
	addrAbsolute = 0x08
	addrLenMask  = 0x07
	// 0x40-0x7f: omit, 0x40 | x<<5 | (count-1).
	opOmit       = 0x40
	omitExternal = 0x20
	omitLenMask  = 0x1f
	// 0x80-0x8f: rep (Swift's implementation; reserved in the document),
	// 0x80 | x<<3 | (count-1).
	opRep       = 0x80
	repExternal = 0x08
	repLenMask  = 0x07
	// omitInlineMax is the largest run Encode writes inline: the 5-bit
	// field holds count-1, so 32. (Swift's encoder inlines only up to 31
	// and writes 32 in two bytes; the document allows one.)
	omitInlineMax = 32
)
