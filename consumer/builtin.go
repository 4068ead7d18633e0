package consumer

import (
	"fmt"

	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

// Builtin is the sframe package's own decoder and unwinder.
type Builtin struct {
	table   *sframe.Table
	loadErr error
	u       sframe.Unwinder
	frames  []sframe.Frame
}

// NewBuiltin returns the in-process consumer.
func NewBuiltin() *Builtin { return &Builtin{} }

func (b *Builtin) Name() string   { return "builtin" }
func (b *Builtin) BatchSize() int { return 1 }
func (b *Builtin) Close() error   { return nil }

// Table is the decoded section of the last Load, for reports.
func (b *Builtin) Table() *sframe.Table { return b.table }

func (b *Builtin) Load(img *producer.Image) error {
	t, err := sframe.Decode(img.SFrame, img.SFrameAddr)
	b.table, b.loadErr = t, err
	if err != nil {
		return fmt.Errorf("builtin: decoding the section: %w", err)
	}
	b.u = sframe.Unwinder{Table: t}
	return nil
}

func (b *Builtin) Unwind(steps []Step, out []Result) error {
	if b.table == nil {
		return fmt.Errorf("builtin: no section loaded: %v", b.loadErr)
	}
	for i := range steps {
		var err error
		b.frames, err = b.u.Backtrace(steps[i].Regs, steps[i].Mem, b.frames[:0])
		r := &out[i]
		r.Frames = r.Frames[:0]
		for _, f := range b.frames {
			r.Frames = append(r.Frames, oracle.Frame{PC: f.PC, CFA: f.CFA, SP: f.SP, FP: f.FP, Outermost: f.Outermost})
		}
		r.Err = err
	}
	return nil
}
