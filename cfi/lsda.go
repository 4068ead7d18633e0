package cfi

import (
	"encoding/binary"
	"fmt"
)

// The language-specific data area GCC's C++ personality routine
// (__gxx_personality_v0, libstdc++'s eh_personality.cc) reads: the format
// of .gcc_except_table, as the Itanium C++ ABI's exception handling
// supplement leaves it to the implementation and GCC writes it:
//
//	u8         LPStart encoding; if not omit, LPStart (encoded); else the
//	           function start
//	u8         TType encoding; if not omit, uleb128 offset of the TType
//	           table's end
//	u8         call-site encoding
//	uleb128    call-site table length
//	entries    start, length, landing pad (call-site encoding: start and
//	           length relative to the function start, the pad to
//	           LPStart, 0: none), action (uleb128: 0 cleanup only, else
//	           1 + offset in the action table)
//
// A call whose return address minus one lies in [start, start+length)
// continues at the landing pad when an exception passes through it, with
// the registers the CFI restores for that frame at the call.

// CallSite is one entry of an LSDA's call-site table, with addresses.
type CallSite struct {
	Start, End uint64 // the calls whose return address - 1 lies here
	LandingPad uint64 // 0: none (the exception goes on unwinding)
	Action     uint64 // 0: cleanup only; else 1 + the action record's offset
}

// LSDA is a parsed language-specific data area.
type LSDA struct {
	Addr      uint64
	LPStart   uint64
	CallSites []CallSite
}

// ParseLSDA reads the LSDA at address addr in data, a section (or
// segment) starting at address base, for the function starting at
// funcStart. Malformed input is a *FormatError with the byte offset in
// data.
func ParseLSDA(data []byte, base, addr, funcStart uint64, order binary.ByteOrder) (*LSDA, error) {
	if addr < base || addr-base >= uint64(len(data)) {
		return nil, &FormatError{-1, fmt.Sprintf("LSDA at 0x%x is outside the %d bytes at 0x%x", addr, len(data), base), ErrTruncated}
	}
	c := &cursor{b: data, o: order, off: int(addr - base)}
	l := &LSDA{Addr: addr, LPStart: funcStart}
	if enc := c.u8(); enc != peOmit {
		l.LPStart = c.pointer(enc, base)
	}
	if c.err != nil {
		return nil, c.fail(c.err, "LSDA landing pad start")
	}
	if enc := c.u8(); enc != peOmit {
		c.uleb() // the TType table: the catch clauses' types
	}
	csEnc := c.u8()
	n := c.uleb()
	if c.err != nil {
		return nil, c.fail(c.err, "LSDA header")
	}
	end := c.off + int(n)
	if n > uint64(len(data)) || end > len(data) {
		return nil, &FormatError{c.off, fmt.Sprintf("call-site table of %d bytes runs past the end (%d bytes)", n, len(data)), ErrTruncated}
	}
	if csEnc&0x70 != 0 {
		return nil, &FormatError{c.off - 1, fmt.Sprintf("call-site encoding 0x%02x: the entries are offsets, applied to nothing", csEnc), ErrBadEncoding}
	}
	for c.off < end {
		at := c.off
		start := c.pointer(csEnc, 0)
		length := c.pointer(csEnc, 0)
		lp := c.pointer(csEnc, 0)
		action := c.uleb()
		if c.err != nil {
			return nil, c.fail(c.err, "call-site entry")
		}
		if c.off > end {
			return nil, &FormatError{at, "call-site entry runs past the table's end", ErrTruncated}
		}
		cs := CallSite{Start: funcStart + start, End: funcStart + start + length, Action: action}
		if lp != 0 {
			cs.LandingPad = l.LPStart + lp
		}
		l.CallSites = append(l.CallSites, cs)
	}
	return l, nil
}

// At returns the call site whose range holds pc, the return address of a
// call minus one.
func (l *LSDA) At(pc uint64) (CallSite, bool) {
	for _, cs := range l.CallSites {
		if pc >= cs.Start && pc < cs.End {
			return cs, true
		}
	}
	return CallSite{}, false
}
