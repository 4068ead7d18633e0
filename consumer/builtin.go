package consumer

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/buildinfo"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	Register(About{Kind: "builtin", Setup: toolchain.NoSetup,
		Layouts: []string{"aux-header", "unsorted", "section-relative", "fre-padding", "concatenated", "modules"}, Summary: "sfconform's own unwinder (package sframe): v1-v3, every target"}, func(name, arg string) (Consumer, error) {
		if arg != "" {
			return nil, fmt.Errorf("consumer builtin takes no argument (got %q)", name)
		}
		return NewBuiltin(), nil
	})
}

// Builtin is the sframe package's own decoder and unwinder.
type Builtin struct {
	table   *sframe.Table  // the one section's, or the first module's
	modules sframe.Modules // a multi-module image's, else nil
	loadErr error
	u       sframe.Unwinder
	rows    *sframe.RowCache
	frames  []sframe.Frame
}

// NewBuiltin returns the in-process consumer.
func NewBuiltin() *Builtin { return &Builtin{} }

// ExactVersion is the sfconform build the unwinder is part of.
func (b *Builtin) ExactVersion() string {
	return fmt.Sprintf("sfconform %s, its own unwinder (package sframe)", buildinfo.Version())
}

func (b *Builtin) Name() string   { return "builtin" }
func (b *Builtin) BatchSize() int { return 1 }
func (b *Builtin) Close() error   { return nil }

// Supports: the sframe package reads versions 1 to 3 of every target in
// either byte order.
func (b *Builtin) Supports(t target.Target, v int) error {
	if v < 1 || v > 3 {
		return fmt.Errorf("builtin reads SFrame versions 1-3, not %d", v)
	}
	return nil
}

// Table is the decoded section of the last Load, for reports (of a
// multi-module image: the first module's; Modules has them all).
func (b *Builtin) Table() *sframe.Table { return b.table }

// Modules are the modules of the last Load, nil for a one-section image.
func (b *Builtin) Modules() sframe.Modules { return b.modules }

func (b *Builtin) Load(img *image.Image) error {
	if len(img.Modules) > 0 {
		return b.loadModules(img)
	}
	b.modules = nil
	t, err := sframe.Decode(img.SFrame, img.SFrameAddr)
	b.table, b.loadErr = t, err
	if err != nil {
		return fmt.Errorf("builtin: decoding the section: %w", err)
	}
	// A PC's function and row are a pure function of the image: the
	// cache remembers them for this image only, looks every PC up in the
	// table the first time and rechecks a sample of the later lookups.
	if b.rows == nil {
		b.rows = sframe.NewRowCache(t)
	} else {
		b.rows.Reset(t)
	}
	b.u = sframe.Unwinder{Table: t, Rows: b.rows}
	return nil
}

// loadModules decodes every module's section: a PC is looked up in the
// table of the module whose code range holds it (sframe.Modules), as the
// dynamic linker's _dl_find_object finds the object of a PC.
func (b *Builtin) loadModules(img *image.Image) error {
	b.table, b.modules = nil, nil
	if err := img.CheckModules(); err != nil {
		b.loadErr = err
		return fmt.Errorf("builtin: %w", err)
	}
	ms := make(sframe.Modules, len(img.Modules))
	for i, m := range img.Modules {
		t, err := sframe.Decode(m.SFrame, m.SFrameAddr)
		if err == nil && i > 0 && t.ABI != ms[0].Table.ABI {
			err = fmt.Errorf("ABI %s, module %s's is %s", t.ABI, img.Modules[0].Name, ms[0].Table.ABI)
		}
		if err != nil {
			b.loadErr = err
			return fmt.Errorf("builtin: decoding module %s's section: %w", m.Name, err)
		}
		ms[i] = sframe.Module{Start: m.Start, End: m.End, Table: t}
	}
	b.table, b.modules, b.loadErr = ms[0].Table, ms, nil
	if b.rows == nil {
		b.rows = sframe.NewRowCache(nil)
	}
	b.rows.ResetModules(ms)
	b.u = sframe.Unwinder{Modules: ms, Rows: b.rows}
	return nil
}

// registers views the pipeline's register file as the sframe package's:
// the two types have the same layout (the conversion would not compile
// otherwise), so this costs nothing on the per-instruction path.
func registers(r *machine.Registers) *sframe.RegisterFile { return (*sframe.RegisterFile)(r) }

func (b *Builtin) Unwind(steps []Step, out []Result) error {
	if b.table == nil {
		return fmt.Errorf("builtin: no section loaded: %v", b.loadErr)
	}
	b.frames = backtraces(&b.u, b.frames, steps, out)
	return nil
}

// backtraces unwinds every step with u, the walk of every consumer built
// on the sframe package's unwinder, and returns frames for reuse.
func backtraces(u *sframe.Unwinder, frames []sframe.Frame, steps []Step, out []Result) []sframe.Frame {
	for i := range steps {
		var err error
		frames, err = u.Backtrace(registers(steps[i].Regs), steps[i].Mem, frames[:0])
		r := &out[i]
		r.Frames = r.Frames[:0]
		for k := range frames {
			// Field by field, into the slot: a composite literal is built
			// on the stack in 8-byte stores and then copied with 16-byte
			// loads, which stall on store forwarding (most of this loop's
			// time in perf annotate).
			f := &frames[k]
			r.Frames = append(r.Frames, frame.Frame{})
			d := &r.Frames[len(r.Frames)-1]
			d.PC, d.CFA, d.SP, d.FP, d.Outermost, d.Signal = f.PC, f.CFA, f.SP, f.FP, f.Outermost, f.Signal
		}
		r.Err = nil
		if err != nil {
			// Backtrace keeps the frame it failed to unwind as the last
			// one: its PC, SP and FP are known, its CFA is not.
			if n := len(r.Frames); n > 0 {
				r.Frames[n-1].Partial = true
				r.Frames[n-1].CFA = 0
			}
			r.Err = classify(err)
		}
	}
	return frames
}

// classify maps the sframe package's lookup errors to the consumer-neutral
// "no information" kind; everything else is a failure.
func classify(err error) error {
	if errors.Is(err, sframe.ErrNoFDE) || errors.Is(err, sframe.ErrNoRow) {
		return fmt.Errorf("%w: %w", frame.ErrNoInfo, err)
	}
	return err
}
