package harness

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/verdict"

	"github.com/sfconform/sfconform/cbf"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// CodeBase is where generated programs are laid out.
const CodeBase = emu.CodeBase

// Produce generates the program for (t, seed, opt), lays it out at
// CodeBase and has prod make its image. The patterns are those the
// producer's SFrame version can express (genOptions: a toolchain gets
// more): a pattern named in opt that it cannot is a
// *gen.CannotExpressError, a property of the format to report as such,
// not a failure.
//
// sfconform's own encoder writes versions 2 and 3; GNU as 2.40 writes
// version 1, and is given what version 2 expresses.
func Produce(prod producer.Producer, t target.Target, seed int64, opt gen.Options) (*image.Image, *gen.Program, error) {
	opt, err := genOptions(prod, t, opt)
	if err != nil {
		return nil, nil, err
	}
	prog, err := gen.Generate(t, seed, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := prog.Layout(CodeBase); err != nil {
		return nil, nil, err
	}
	img, err := prod.Produce(prog)
	if err != nil {
		return nil, prog, fmt.Errorf("producer %s: %w", prod.Name(), err)
	}
	return img, prog, nil
}

// genOptions chooses, unless opt.SFrameVersion says, the patterns a
// producer gets for t. sfconform's own encoder gets those its version
// expresses (at least version 2's). A toolchain gets them all, since what
// it does with CFI its version cannot express (skip the function with a
// warning, or silently, or write a wrong row) is part of its result; but
// below version 3 not the patterns that place code more than 4 GiB from
// .sframe (ToolchainMix), which no linker can write a table for.
func genOptions(prod producer.Producer, t target.Target, opt gen.Options) (gen.Options, error) {
	if opt.SFrameVersion != 0 {
		return opt, nil
	}
	v, err := prod.SFrameVersion(t)
	if err != nil {
		return opt, fmt.Errorf("producer %s on %s: %w", prod.Name(), t.Name(), err)
	}
	if !producer.IsToolchain(prod) || v >= 3 {
		opt.SFrameVersion = max(v, 2)
		return opt, nil
	}
	left := LeftOut(t, v)
	if opt.Patterns == nil {
		opt.Patterns = ToolchainMix(t, v)
		return opt, nil
	}
	for _, name := range opt.Patterns {
		if slices.Contains(left, name) {
			for _, p := range gen.Catalog() {
				if p.Name == name {
					return opt, &gen.CannotExpressError{Target: t, Pattern: name, Version: v, Reason: p.Cannot}
				}
			}
		}
	}
	return opt, nil
}

// ToolchainMix is the patterns of t a toolchain producer of SFrame
// version v gets by default: all but LeftOut.
func ToolchainMix(t target.Target, v int) []string {
	left := LeftOut(t, v)
	var out []string
	for _, name := range gen.Patterns(t) {
		if !slices.Contains(left, name) {
			out = append(out, name)
		}
	}
	return out
}

// LeftOut is the patterns of t a toolchain producer of SFrame version v
// does not get: below version 3, those that place code too far from
// .sframe for a 32-bit offset (the link fails).
func LeftOut(t target.Target, v int) []string {
	var out []string
	for _, p := range gen.Catalog() {
		if p.Far && slices.Contains(p.Targets, t) && !slices.Contains(p.Versions, v) {
			out = append(out, p.Name)
		}
	}
	return out
}

// Produced is one program of ProduceBatch: its image, or the error that
// left it without one.
type Produced struct {
	Seed int64
	Img  *image.Image
	Prog *gen.Program // nil when generation failed
	Err  error
}

// batchAlign is where ProduceBatch starts each program's code and far
// code: a boundary every target's code alignment divides.
const batchAlign = 64

// ProduceBatch is Produce for many seeds. A producer.BatchProducer gets
// the programs laid out one after the other in the emulator's code region
// (and far code in its far region), as many at once as fit, so that it
// makes their images with one run of its tools; each image still runs
// alone. Other producers get the programs one at a time at CodeBase, as
// Produce lays them out. A generation or producer error is that seed's
// only.
func ProduceBatch(prod producer.Producer, t target.Target, seeds []int64, opt gen.Options) []Produced {
	out := make([]Produced, len(seeds))
	opt, err := genOptions(prod, t, opt)
	if err != nil {
		for i, s := range seeds {
			out[i] = Produced{Seed: s, Err: err}
		}
		return out
	}
	bp, batch := prod.(producer.BatchProducer)
	if !batch {
		for i, s := range seeds {
			img, prog, err := Produce(prod, t, s, opt)
			out[i] = Produced{Seed: s, Img: img, Prog: prog, Err: err}
		}
		return out
	}
	var group []int // indexes into out waiting for the producer
	flush := func() {
		if len(group) == 0 {
			return
		}
		progs := make([]*gen.Program, len(group))
		for k, i := range group {
			progs[k] = out[i].Prog
		}
		imgs, errs := bp.ProduceBatch(progs)
		for k, i := range group {
			out[i].Img, out[i].Err = imgs[k], errs[k]
			if errs[k] != nil {
				out[i].Err = fmt.Errorf("producer %s: %w", prod.Name(), errs[k])
			}
		}
		group = group[:0]
	}
	near, far := uint64(CodeBase), uint64(emu.FarCodeBase)
	for i, s := range seeds {
		out[i].Seed = s
		prog, err := gen.Generate(t, s, opt)
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i].Prog = prog
		if err := prog.LayoutAt(near, far); err != nil {
			out[i].Err = err
			continue
		}
		if prog.Base+uint64(len(prog.Code)) > emu.CodeBase+emu.CodeSize || len(prog.FarCode) > 0 && prog.FarBase+uint64(len(prog.FarCode)) > emu.FarCodeBase+emu.FarCodeSize {
			// The regions are full: the programs so far make one batch,
			// this one starts the next.
			flush()
			near, far = CodeBase, emu.FarCodeBase
			if err := prog.LayoutAt(near, far); err != nil {
				out[i].Err = err
				continue
			}
		}
		near = alignUp(prog.Base+uint64(len(prog.Code)), batchAlign)
		if len(prog.FarCode) > 0 {
			far = alignUp(prog.FarBase+uint64(len(prog.FarCode)), batchAlign)
		}
		group = append(group, i)
	}
	flush()
	return out
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// ProduceAhead runs ProduceBatch over seeds, size programs at a time, one
// batch ahead of its consumer: while the caller checks a batch, the
// toolchain assembles and links the next one. The channel closes after
// the last batch; stop, when closed by the caller, makes it stop early.
func ProduceAhead(prod producer.Producer, t target.Target, seeds []int64, size int, opt gen.Options, stop <-chan struct{}) <-chan []Produced {
	out := make(chan []Produced, 1)
	go func() {
		defer close(out)
		for i := 0; i < len(seeds); i += size {
			batch := ProduceBatch(prod, t, seeds[i:min(i+size, len(seeds))], opt)
			select {
			case out <- batch:
			case <-stop:
				return
			}
		}
	}()
	return out
}

// UnsupportedError says why a producer and a consumer cannot meet on a
// target: the producer emits no SFrame for it, or the consumer does not
// read what the producer emits. It is reported as "unsupported (reason)",
// never as a failure.
type UnsupportedError struct {
	Producer, Consumer string
	Target             target.Target
	Reason             string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s x %s on %s: unsupported (%s)", e.Producer, e.Consumer, e.Target.Name(), e.Reason)
}

// Pairing reports whether prod's sections for t are something cons reads:
// nil, or an *UnsupportedError with the reason; a consumer that cannot be
// asked (consumer.ErrCannotAsk) is that error itself.
func Pairing(prod producer.Producer, cons consumer.Consumer, t target.Target) error {
	v, err := prod.SFrameVersion(t)
	if err == nil {
		err = cons.Supports(t, v)
	}
	if errors.Is(err, consumer.ErrCannotAsk) {
		return err // a broken consumer, not an unsupported pair
	}
	if err != nil {
		return &UnsupportedError{Producer: prod.Name(), Consumer: cons.Name(), Target: t, Reason: err.Error()}
	}
	return nil
}

func firstInvalid(vs []verdict.Violation) verdict.Violation {
	for _, v := range vs {
		if !v.Warning {
			return v
		}
	}
	return verdict.Violation{}
}

// BacktraceCBF stores a backtrace's PCs in the Compact Backtrace Format:
// frame 0 and a frame a signal interrupted (the one after a signal frame)
// as exact PCs, the others as return addresses. stopped marks a backtrace
// that ended on an error before its outermost frame, which CBF says with
// "trunc".
func BacktraceCBF(frames []frame.Frame, stopped bool) []byte {
	bt := cbf.Backtrace{Size: cbf.Word64, Truncated: stopped}
	for i, f := range frames {
		k := cbf.KindRA
		if i == 0 || frames[i-1].Signal {
			k = cbf.KindPC
		}
		bt.Frames = append(bt.Frames, cbf.Frame{Kind: k, Addr: f.PC})
	}
	b, err := cbf.Encode(bt)
	if err != nil {
		return nil // more frames than CBF holds: the JSON frames remain
	}
	return b
}

// RowAt describes the SFrame row covering pc in the image's section, for
// reports only (the oracle never reads the section).
func RowAt(img *image.Image, pc uint64) string {
	t, err := sframe.Decode(img.SFrame, img.SFrameAddr)
	if err != nil {
		return "section does not decode: " + err.Error()
	}
	fde, row, err := t.FindRow(pc)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("function 0x%x+0x%x (size %d), row at +0x%x: CFA %s, RA %s, FP %s%s",
		fde.Start, pc-fde.Start, fde.Size, row.Start, row.CFA, row.RA, row.FP, flags(row))
}

func flags(r sframe.Row) string {
	s := ""
	if r.MangledRA {
		s += fmt.Sprintf(", RA signed (key %d)", r.PAuthKey)
	}
	if r.Signal {
		s += ", signal frame"
	}
	return s
}
