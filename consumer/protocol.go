package consumer

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// The unwind protocol (docs/consumer-protocol.md): line-based text
// between sfconform and an out-of-process consumer. Version 2 adds the
// modules of a process image ("modules", "module" lines), version 3 the
// image's code bytes ("code", "text" lines after a load, for unwinders
// that read the instructions at a PC, as glibc's signal-frame check
// does), version 4 stack copies sent as their differences from the step
// before ("stackdiff="); both sides speak the highest version they
// share, so version 1, 2 and 3 consumers still work.
const (
	ProtocolName    = "sfconform-unwind"
	ProtocolVersion = 4
	// ProtocolModules is the first version that carries several modules.
	ProtocolModules = 2
	// ProtocolCode is the first version that carries the code bytes.
	ProtocolCode = 3
	// ProtocolDiff is the first version whose steps may carry the stack
	// copy as its differences from the step before (stackdiff=).
	ProtocolDiff = 4
	// MaxModules bounds the modules of one image on the protocol.
	MaxModules = 64
	// MaxCodeRanges bounds the code ranges of one image on the protocol.
	MaxCodeRanges = 64
)

// ErrModulesUnsupported is a consumer that speaks a protocol version
// without modules given an image of several: that image is not
// unwound, every step of it ERROR with this reason, never a verdict on a
// section the consumer did not get.
var ErrModulesUnsupported = errors.New("the image has several modules, which unwind protocol version 1 cannot carry")

// ErrProtocol is wrapped by every error about a line that does not follow
// the protocol.
var ErrProtocol = errors.New("unwind protocol")

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// maxLine bounds one protocol line: a load of a large section is the
// longest (two hex digits per byte).
const maxLine = 64 << 20

// readLine reads one line without its newline.
func readLine(r *bufio.Reader) (string, error) { return readLineMax(r, maxLine) }

// readLineMax reads one line without its newline; a line longer than max
// bytes is a protocol error, read no further.
func readLineMax(r *bufio.Reader, max int) (string, error) {
	var sb strings.Builder
	for {
		chunk, err := r.ReadSlice('\n')
		sb.Write(chunk)
		if sb.Len() > max+1 {
			return "", protoErr("a line longer than %d bytes, starting %q", max, truncate(sb.String()))
		}
		switch {
		case err == nil:
			return strings.TrimSuffix(sb.String(), "\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && sb.Len() > 0:
			return "", protoErr("the last line has no newline: %q", truncate(sb.String()))
		default:
			return "", err
		}
	}
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func hexU64(s string) (uint64, error) { return strconv.ParseUint(s, 16, 64) }

// writeLoad sends a section: "load" for an image of one, "modules" and a
// "module" line per module for a process image of several (version 2);
// from version 3 the image's code follows, "code N" and a "text" line
// per code range.
func writeLoad(w *bufio.Writer, img *image.Image, version int) error {
	hexOut := hex.NewEncoder(w)
	if len(img.Modules) > 0 {
		if len(img.Modules) > MaxModules {
			return fmt.Errorf("%d modules, the protocol carries at most %d", len(img.Modules), MaxModules)
		}
		fmt.Fprintf(w, "modules %s %d\n", img.Target.Name(), len(img.Modules))
		for _, m := range img.Modules {
			fmt.Fprintf(w, "module %s %x %x %x ", m.Name, m.Start, m.End, m.SFrameAddr)
			if _, err := hexOut.Write(m.SFrame); err != nil {
				return err
			}
			w.WriteByte('\n')
		}
	} else {
		fmt.Fprintf(w, "load %s %x ", img.Target.Name(), img.SFrameAddr)
		if _, err := hexOut.Write(img.SFrame); err != nil {
			return err
		}
		w.WriteByte('\n')
	}
	if version >= ProtocolCode {
		code := codeRanges(img)
		if len(code) > MaxCodeRanges {
			return fmt.Errorf("%d code ranges, the protocol carries at most %d", len(code), MaxCodeRanges)
		}
		fmt.Fprintf(w, "code %d\n", len(code))
		for _, c := range code {
			fmt.Fprintf(w, "text %x ", c.Addr)
			if _, err := hexOut.Write(c.Code); err != nil {
				return err
			}
			w.WriteByte('\n')
		}
	}
	return w.Flush()
}

// codeRanges lists the image's code as it lies in memory: Code at
// CodeAddr, then each segment; empty ones are left out.
func codeRanges(img *image.Image) []image.Segment {
	var out []image.Segment
	if len(img.Code) > 0 {
		out = append(out, image.Segment{Addr: img.CodeAddr, Code: img.Code})
	}
	for _, s := range img.Segments {
		if len(s.Code) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// parseCode reads the code of an image (version 3): "code N", then N
// lines "text ADDR HEXBYTES", from next, into img's Code and Segments.
func parseCode(img *image.Image, next func() (string, error)) error {
	line, err := next()
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(f) != 2 || f[0] != "code" {
		return protoErr("want \"code N\" after the section (version %d), got %q", ProtocolCode, truncate(line))
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 || n > MaxCodeRanges {
		return protoErr("code: N %q is not 0 to %d", f[1], MaxCodeRanges)
	}
	for i := 0; i < n; i++ {
		line, err := next()
		if err != nil {
			return err
		}
		g := strings.Split(line, " ")
		if len(g) != 3 || g[0] != "text" {
			return protoErr("want \"text ADDR HEXBYTES\", got %q", truncate(line))
		}
		var s image.Segment
		if s.Addr, err = hexU64(g[1]); err != nil {
			return protoErr("text: address %q", g[1])
		}
		if s.Code, err = hex.DecodeString(g[2]); err != nil {
			return protoErr("text %x: code bytes: %v", s.Addr, err)
		}
		if i == 0 {
			img.Code, img.CodeAddr = s.Code, s.Addr
		} else {
			img.Segments = append(img.Segments, s)
		}
	}
	return nil
}

// writeSteps sends one unwind batch; every step must carry a snapshot.
// From version 4 (ProtocolDiff) a step's stack copy goes as its
// differences from the copy the consumer holds, the previous step's:
// held is that copy (nil: always send it whole), kept up to date here.
func writeSteps(w *bufio.Writer, steps []Step, held *stackCopy) error {
	// Built with appends into one buffer per line: the stack copy is
	// most of a step's bytes, and fmt and hex.Encoder cost an exec
	// consumer's run about 10% of its CPU time.
	var buf []byte
	buf = append(buf, "unwind "...)
	buf = strconv.AppendInt(buf, int64(len(steps)), 10)
	buf = append(buf, '\n')
	w.Write(buf)
	for i := range steps {
		s := &steps[i]
		snap := s.Snapshot
		if snap == nil {
			return fmt.Errorf("step %d has no stack snapshot", s.Index)
		}
		buf = append(buf[:0], "step "...)
		buf = strconv.AppendInt(buf, int64(s.Index), 10)
		buf = append(buf, " pc="...)
		buf = strconv.AppendUint(buf, s.Regs.PC, 16)
		for v := s.Regs.Valid; v != 0; v &= v - 1 {
			r := bits.TrailingZeros64(v)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(r), 10)
			buf = append(buf, '=')
			buf = strconv.AppendUint(buf, s.Regs.Regs[r], 16)
		}
		// The copy held: the step before in this batch, or for the
		// first, the one kept from the batch before (the snapshots'
		// buffers are reused from batch to batch).
		var prevAddr uint64
		var prev []byte
		havePrev := false
		if held != nil {
			if i > 0 {
				prevAddr, prev, havePrev = steps[i-1].Snapshot.StackAddr, steps[i-1].Snapshot.Stack, true
			} else if held.valid {
				prevAddr, prev, havePrev = held.addr, held.b, true
			}
		}
		n := len(buf)
		ok := false
		if havePrev {
			buf, ok = appendStackDiff(buf, prevAddr, prev, snap.StackAddr, snap.Stack)
		}
		if ok {
			w.Write(buf)
		} else {
			buf = append(buf[:n], " stack="...)
			buf = strconv.AppendUint(buf, snap.StackAddr, 16)
			buf = append(buf, ':')
			w.Write(buf)
			if err := writeHex(w, snap.Stack); err != nil {
				return err
			}
		}
		w.WriteByte('\n')
	}
	if held != nil && len(steps) > 0 {
		last := steps[len(steps)-1].Snapshot
		held.valid, held.addr, held.b = true, last.StackAddr, append(held.b[:0], last.Stack...)
	}
	return w.Flush()
}

// stackCopy is the stack copy a version 4 consumer holds: the last step's
// it was sent. A load or a new process forgets it.
type stackCopy struct {
	valid bool
	addr  uint64
	b     []byte
}

// diffGap is how many equal bytes a patch of stackdiff= runs through
// rather than end: a new patch costs about as many characters as four
// bytes do.
const diffGap = 4

// appendStackDiff appends " stackdiff=ADDR:LEN" and the patches that make
// the copy cur at addr from prev at paddr: every byte of cur that prev
// does not hold, or holds with another value, in runs. It returns false,
// with buf unspecified, when the whole copy would be shorter.
func appendStackDiff(buf []byte, paddr uint64, prev []byte, addr uint64, cur []byte) ([]byte, bool) {
	buf = append(buf, " stackdiff="...)
	buf = strconv.AppendUint(buf, addr, 16)
	buf = append(buf, ':')
	buf = strconv.AppendUint(buf, uint64(len(cur)), 16)
	// same reports whether cur[off] is prev's byte at its address.
	pend := paddr + uint64(len(prev))
	same := func(off int) bool {
		a := addr + uint64(off)
		return a >= paddr && a < pend && cur[off] == prev[a-paddr]
	}
	patched, n := 0, len(cur)
	for off := 0; off < n; {
		// Skip what prev holds already, a word at a time where both
		// have one.
		if a := addr + uint64(off); a >= paddr && a < pend {
			po := int(a - paddr)
			lim := min(n-off, len(prev)-po)
			k := 0
			for k+8 <= lim && binary.LittleEndian.Uint64(cur[off+k:]) == binary.LittleEndian.Uint64(prev[po+k:]) {
				k += 8
			}
			for k < lim && cur[off+k] == prev[po+k] {
				k++
			}
			off += k
			if off >= n {
				break
			}
		}
		// A patch from off: through differing bytes and runs of fewer
		// than diffGap equal ones.
		start, end := off, off+1
		for off = end; off < n; off++ {
			if !same(off) {
				end = off + 1
			} else if off-end+1 >= diffGap {
				break
			}
		}
		off = end
		patched += end - start
		if 2*patched > len(cur) {
			return buf, false
		}
		buf = append(buf, ':')
		buf = strconv.AppendUint(buf, uint64(start), 16)
		buf = append(buf, ':')
		buf = appendHex(buf, cur[start:end])
	}
	return buf, true
}

// appendHex appends b in lowercase hex, two digits per byte.
func appendHex(buf, b []byte) []byte {
	for _, c := range b {
		p := hexPairs[c]
		buf = append(buf, byte(p), byte(p>>8))
	}
	return buf
}

// hexPairs[b] is byte b's two lowercase hex digits, the first in the
// low byte.
var hexPairs = func() (t [256]uint16) {
	const digits = "0123456789abcdef"
	for b := range t {
		t[b] = uint16(digits[b>>4]) | uint16(digits[b&15])<<8
	}
	return t
}()

// writeHex writes b in lowercase hex, two digits per byte, straight into
// w's buffer, four bytes to one 8-byte store (about twice
// encoding/hex's rate).
func writeHex(w *bufio.Writer, b []byte) error {
	for len(b) > 0 {
		if w.Available() < 8 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		dst := w.AvailableBuffer()
		n := min(len(b), cap(dst)/2)
		dst, src := dst[:2*n], b[:n]
		d := dst
		for len(src) >= 4 && len(d) >= 8 {
			binary.LittleEndian.PutUint64(d, uint64(hexPairs[src[0]])|uint64(hexPairs[src[1]])<<16|
				uint64(hexPairs[src[2]])<<32|uint64(hexPairs[src[3]])<<48)
			src, d = src[4:], d[8:]
		}
		for i, c := range src {
			binary.LittleEndian.PutUint16(d[2*i:], hexPairs[c])
		}
		w.Write(dst)
		b = b[n:]
	}
	return nil
}

// readResult reads one step's answer, a line at a time from next.
func readResult(next func() (string, error), wantIndex int, out *Result) error {
	line, err := next()
	if err != nil {
		return err
	}
	f := strings.SplitN(line, " ", 5)
	if len(f) < 3 || f[0] != "result" {
		return protoErr("want \"result INDEX NFRAMES\", got %q", truncate(line))
	}
	idx, err1 := strconv.Atoi(f[1])
	n, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || n < 0 || n > 4096 {
		return protoErr("bad result line %q", truncate(line))
	}
	if idx != wantIndex {
		return protoErr("result for step %d, asked for step %d", idx, wantIndex)
	}
	out.Err = nil
	if len(f) > 3 {
		msg := ""
		if len(f) > 4 {
			msg = f[4]
		}
		switch f[3] {
		case "noinfo":
			out.Err = fmt.Errorf("%w: %s", frame.ErrNoInfo, msg)
		case "failed":
			out.Err = errors.New(msg)
		default:
			return protoErr("result line %q: want noinfo or failed after NFRAMES", truncate(line))
		}
	}
	out.Frames = out.Frames[:0]
	for i := 0; i < n; i++ {
		line, err := next()
		if err != nil {
			return err
		}
		fr, err := parseFrame(line)
		if err != nil {
			return err
		}
		out.Frames = append(out.Frames, fr)
	}
	return nil
}

func parseFrame(line string) (frame.Frame, error) {
	var fr frame.Frame
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "frame" {
		return fr, protoErr("want \"frame pc=... sp=... fp=... cfa=...\", got %q", truncate(line))
	}
	seen := 0
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			switch kv {
			case "outermost":
				fr.Outermost = true
			case "partial":
				fr.Partial = true
			case "signal":
				fr.Signal = true
			default:
				return fr, protoErr("frame line %q: unknown flag %q", truncate(line), kv)
			}
			continue
		}
		x, err := hexU64(v)
		if err != nil {
			return fr, protoErr("frame line %q: %s is not hexadecimal", truncate(line), kv)
		}
		switch k {
		case "pc":
			fr.PC = x
		case "sp":
			fr.SP = x
		case "fp":
			fr.FP = x
		case "cfa":
			fr.CFA = x
		default:
			return fr, protoErr("frame line %q: unknown field %q", truncate(line), k)
		}
		seen++
	}
	if seen != 4 {
		return fr, protoErr("frame line %q: want pc, sp, fp and cfa", truncate(line))
	}
	return fr, nil
}

// Serve speaks the protocol's consumer side on r and w with c doing the
// unwinding: what `sfconform serve` runs, and a reference for authors of
// external consumers. It returns nil after "quit" or at the end of r.
func Serve(r io.Reader, w io.Writer, c Consumer) error {
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriter(w)
	defer out.Flush()
	line, err := readLine(in)
	if err != nil {
		return err
	}
	version := ProtocolVersion
	if f := strings.Fields(line); len(f) < 3 || f[0] != "hello" || f[1] != ProtocolName {
		return protoErr("want \"hello %s N\", got %q", ProtocolName, truncate(line))
	} else if v, err := strconv.Atoi(f[2]); err != nil || v < 1 {
		fmt.Fprintf(out, "refused this consumer speaks %s %d\n", ProtocolName, ProtocolVersion)
		return protoErr("version %q offered", f[2])
	} else {
		version = min(v, ProtocolVersion) // the highest both speak
	}
	fmt.Fprintf(out, "hello %s %d %s\n", ProtocolName, version, c.Name())
	out.Flush()
	var loaded, bigEndian bool
	results := make([]Result, 1)
	var held stackCopy
	heldFor := func(version int) *stackCopy {
		if version >= ProtocolDiff {
			return &held
		}
		return nil
	}
	for {
		line, err := readLine(in)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		cmd, rest, _ := strings.Cut(line, " ")
		switch cmd {
		case "quit":
			return nil
		case "supports":
			f := strings.Fields(rest)
			if len(f) != 2 {
				return protoErr("want \"supports TARGET VERSION\", got %q", truncate(line))
			}
			t, err := target.Parse(f[0])
			v, verr := strconv.Atoi(f[1])
			switch {
			case err != nil:
				fmt.Fprintf(out, "no %v\n", err)
			case verr != nil:
				return protoErr("supports: version %q", f[1])
			default:
				if err := c.Supports(t, v); err != nil {
					fmt.Fprintf(out, "no %s\n", oneLine(err.Error()))
				} else {
					fmt.Fprintln(out, "yes")
				}
			}
		case "load", "modules":
			var img *image.Image
			if cmd == "load" {
				img, err = parseLoad(rest)
			} else if version >= ProtocolModules {
				img, err = parseModules(rest, func() (string, error) { return readLine(in) })
			} else {
				err = protoErr("\"modules\" is version %d's; this session speaks version %d", ProtocolModules, version)
			}
			if err == nil && version >= ProtocolCode {
				err = parseCode(img, func() (string, error) { return readLine(in) })
			}
			if err != nil {
				return err
			}
			bigEndian = img.Target.ByteOrder() == binary.BigEndian
			held.valid = false
			if err := c.Load(img); err != nil {
				loaded = false
				fmt.Fprintf(out, "refused %s\n", oneLine(err.Error()))
			} else {
				loaded = true
				fmt.Fprintln(out, "ok")
			}
		case "unwind":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 {
				return protoErr("want \"unwind N\", got %q", truncate(line))
			}
			for i := 0; i < n; i++ {
				line, err := readLine(in)
				if err != nil {
					return err
				}
				st, err := parseStep(line, bigEndian, heldFor(version))
				if err != nil {
					return err
				}
				results[0].Frames, results[0].Err = results[0].Frames[:0], nil
				if !loaded {
					results[0].Err = errors.New("no section loaded")
				} else if err := c.Unwind([]Step{st}, results); err != nil {
					results[0].Frames, results[0].Err = results[0].Frames[:0], err
				}
				writeResult(out, st.Index, &results[0])
			}
		default:
			return protoErr("unknown command %q", truncate(line))
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
}

func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ") }

func writeResult(w *bufio.Writer, index int, r *Result) {
	fmt.Fprintf(w, "result %d %d", index, len(r.Frames))
	if r.Err != nil {
		kind := "failed"
		if errors.Is(r.Err, frame.ErrNoInfo) {
			kind = "noinfo"
		}
		fmt.Fprintf(w, " %s %s", kind, oneLine(r.Err.Error()))
	}
	w.WriteByte('\n')
	for _, f := range r.Frames {
		fmt.Fprintf(w, "frame pc=%x sp=%x fp=%x cfa=%x", f.PC, f.SP, f.FP, f.CFA)
		if f.Outermost {
			w.WriteString(" outermost")
		}
		if f.Partial {
			w.WriteString(" partial")
		}
		if f.Signal {
			w.WriteString(" signal")
		}
		w.WriteByte('\n')
	}
}

func parseLoad(rest string) (*image.Image, error) {
	f := strings.Fields(rest)
	if len(f) != 3 {
		return nil, protoErr("want \"load TARGET ADDR HEXBYTES\"")
	}
	t, err := target.Parse(f[0])
	if err != nil {
		return nil, protoErr("load: %v", err)
	}
	addr, err := hexU64(f[1])
	if err != nil {
		return nil, protoErr("load: address %q", f[1])
	}
	sec, err := hex.DecodeString(f[2])
	if err != nil {
		return nil, protoErr("load: section bytes: %v", err)
	}
	return &image.Image{Target: t, SFrame: sec, SFrameAddr: addr}, nil
}

// parseModules reads a process image's modules: "modules TARGET N"
// (rest is what follows "modules"), then N lines "module NAME START END
// ADDR HEXBYTES" from next.
func parseModules(rest string, next func() (string, error)) (*image.Image, error) {
	f := strings.Fields(rest)
	if len(f) != 2 {
		return nil, protoErr("want \"modules TARGET N\"")
	}
	t, err := target.Parse(f[0])
	if err != nil {
		return nil, protoErr("modules: %v", err)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 1 || n > MaxModules {
		return nil, protoErr("modules: N %q is not 1 to %d", f[1], MaxModules)
	}
	img := &image.Image{Target: t}
	for i := 0; i < n; i++ {
		line, err := next()
		if err != nil {
			return nil, err
		}
		g := strings.Split(line, " ")
		if len(g) != 6 || g[0] != "module" {
			return nil, protoErr("want \"module NAME START END ADDR HEXBYTES\", got %q", truncate(line))
		}
		var m image.Module
		m.Name = g[1]
		var e1, e2, e3 error
		m.Start, e1 = hexU64(g[2])
		m.End, e2 = hexU64(g[3])
		m.SFrameAddr, e3 = hexU64(g[4])
		if e1 != nil || e2 != nil || e3 != nil {
			return nil, protoErr("module %s: START, END and ADDR are hexadecimal: %q", m.Name, truncate(line))
		}
		if m.SFrame, err = hex.DecodeString(g[5]); err != nil {
			return nil, protoErr("module %s: section bytes: %v", m.Name, err)
		}
		img.Modules = append(img.Modules, m)
	}
	if err := img.CheckModules(); err != nil {
		return nil, protoErr("modules: %v", err)
	}
	return img, nil
}

// parseStep reads a step line; held, from version 4 on, is the stack
// copy of the step before, which a stackdiff= patches and which becomes
// this step's (nil: stackdiff= is not allowed).
func parseStep(line string, bigEndian bool, held *stackCopy) (Step, error) {
	f := strings.Fields(line)
	if len(f) < 4 || f[0] != "step" {
		return Step{}, protoErr("want \"step INDEX pc=... REG=... stack=ADDR:HEX\", got %q", truncate(line))
	}
	idx, err := strconv.Atoi(f[1])
	if err != nil {
		return Step{}, protoErr("step index %q", f[1])
	}
	snap := &machine.Snapshot{BigEndian: bigEndian}
	havePC, haveStack := false, false
	for _, kv := range f[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Step{}, protoErr("step %d: %q is not NAME=VALUE", idx, kv)
		}
		switch {
		case k == "pc":
			if snap.Regs.PC, err = hexU64(v); err != nil {
				return Step{}, protoErr("step %d: pc %q", idx, v)
			}
			havePC = true
		case k == "stack":
			a, b, ok := strings.Cut(v, ":")
			if !ok {
				return Step{}, protoErr("step %d: stack %q is not ADDR:HEX", idx, truncate(v))
			}
			if snap.StackAddr, err = hexU64(a); err != nil {
				return Step{}, protoErr("step %d: stack address %q", idx, a)
			}
			if snap.Stack, err = hex.DecodeString(b); err != nil {
				return Step{}, protoErr("step %d: stack bytes: %v", idx, err)
			}
			haveStack = true
		case k == "stackdiff" && held != nil:
			if snap.StackAddr, snap.Stack, err = applyStackDiff(held, v); err != nil {
				return Step{}, protoErr("step %d: stackdiff: %v", idx, err)
			}
			haveStack = true
		default:
			r, err := strconv.Atoi(k)
			if err != nil || r < 0 || r >= machine.MaxReg {
				return Step{}, protoErr("step %d: register %q", idx, k)
			}
			x, err := hexU64(v)
			if err != nil {
				return Step{}, protoErr("step %d: register %d value %q", idx, r, v)
			}
			snap.Regs.Set(r, x)
		}
	}
	if !havePC || !haveStack {
		return Step{}, protoErr("step %d: pc= and stack= are required", idx)
	}
	if held != nil {
		held.valid, held.addr, held.b = true, snap.StackAddr, append(held.b[:0], snap.Stack...)
	}
	return Step{Index: idx, Regs: &snap.Regs, Mem: snap, Snapshot: snap}, nil
}

// applyStackDiff makes the stack copy a stackdiff= value describes,
// "ADDR:LEN" then ":OFF:HEX" per patch, from held: each byte a patch
// covers from the patch, every other one from held, which must hold it.
// Patches come in increasing order, do not overlap, and lie inside.
func applyStackDiff(held *stackCopy, v string) (uint64, []byte, error) {
	f := strings.Split(v, ":")
	if len(f) < 2 || len(f)%2 != 0 {
		return 0, nil, fmt.Errorf("%q is not ADDR:LEN followed by OFF:HEX pairs", truncate(v))
	}
	addr, err1 := hexU64(f[0])
	n, err2 := hexU64(f[1])
	if err1 != nil || err2 != nil || n > maxLine {
		return 0, nil, fmt.Errorf("bad ADDR:LEN %q:%q", truncate(f[0]), truncate(f[1]))
	}
	if !held.valid {
		return 0, nil, errors.New("no stack copy to patch: the first step after a load carries stack=")
	}
	cur := make([]byte, n)
	covered := make([]bool, n) // by held or by a patch
	if lo, hi := max(addr, held.addr), min(addr+n, held.addr+uint64(len(held.b))); lo < hi {
		copy(cur[lo-addr:hi-addr], held.b[lo-held.addr:])
		for i := lo - addr; i < hi-addr; i++ {
			covered[i] = true
		}
	}
	next := uint64(0) // patches go up and do not overlap
	for i := 2; i < len(f); i += 2 {
		off, err := hexU64(f[i])
		b, herr := hex.DecodeString(f[i+1])
		switch {
		case err != nil || herr != nil || len(b) == 0:
			return 0, nil, fmt.Errorf("patch %q:%q is not OFF:HEX", truncate(f[i]), truncate(f[i+1]))
		case off < next || off > n || uint64(len(b)) > n-off:
			return 0, nil, fmt.Errorf("patch at %x (%d bytes) overlaps the one before or ends past LEN %x", off, len(b), n)
		}
		copy(cur[off:], b)
		for j := range b {
			covered[off+uint64(j)] = true
		}
		next = off + uint64(len(b))
	}
	for i, ok := range covered {
		if !ok {
			return 0, nil, fmt.Errorf("byte %x (address %x) is neither in the copy held nor in a patch", i, addr+uint64(i))
		}
	}
	return addr, cur, nil
}
