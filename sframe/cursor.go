package sframe

import (
	"encoding/binary"
	"fmt"
)

// cursor reads the fixed-width fields of a section header in one byte
// order. Reads are checked against the region's end; the first read that
// does not fit records a *FormatError and every later read returns zero,
// so a parser reads a whole structure and looks at err once (the
// debug/elf pattern). The FDE table and the FREs, read many times over,
// are read by hand in decode.go and fre.go.
type cursor struct {
	buf   []byte
	order binary.ByteOrder
	off   int    // next byte to read
	end   int    // reads must end at or before this offset
	oob   error  // sentinel a read past end wraps
	what  string // what the region holds, for messages
	err   *FormatError
}

// region starts reading at off within [off, end) of buf. end is clamped to
// the buffer so a region that a header claims to be larger than the
// buffer still cannot be read past it.
func (c *cursor) region(off, end int, oob error, what string) {
	if end > len(c.buf) {
		end = len(c.buf)
	}
	c.off, c.end, c.oob, c.what, c.err = off, end, oob, what, nil
}

// need reports whether n more bytes can be read, recording the failure
// otherwise.
func (c *cursor) need(n int) bool {
	if c.err != nil {
		return false
	}
	if c.off < 0 || c.off > c.end || c.end-c.off < n {
		left := c.end - c.off
		if left < 0 {
			left = 0
		}
		c.err = &FormatError{Off: c.off, Err: c.oob,
			Msg: fmt.Sprintf("%s: %d bytes needed, %d left before offset %d", c.what, n, left, c.end)}
		return false
	}
	return true
}

func (c *cursor) u8() uint8 {
	if !c.need(1) {
		return 0
	}
	v := c.buf[c.off]
	c.off++
	return v
}

func (c *cursor) u16() uint16 {
	if !c.need(2) {
		return 0
	}
	v := c.order.Uint16(c.buf[c.off:])
	c.off += 2
	return v
}

func (c *cursor) u32() uint32 {
	if !c.need(4) {
		return 0
	}
	v := c.order.Uint32(c.buf[c.off:])
	c.off += 4
	return v
}

// failAt records an error that is not a short read.
func failAt(off int, sentinel error, format string, args ...any) *FormatError {
	return &FormatError{Off: off, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
}
