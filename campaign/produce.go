package campaign

import (
	"fmt"

	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// Produce generates the program for (t, seed, opt), lays it out at
// harness.CodeBase and has prod make its image. The patterns are those the
// producer's SFrame version can express (NewMix: a toolchain
// gets more): a pattern named in opt that it cannot is a
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
	return produce(prod, t, seed, opt)
}

// produce is Produce with opt complete (genOptions).
func produce(prod producer.Producer, t target.Target, seed int64, opt gen.Options) (*image.Image, *gen.Program, error) {
	prog, err := gen.GenerateAt(t, seed, opt, harness.CodeBase)
	if err != nil {
		return nil, nil, err
	}
	img, err := prod.Produce(prog)
	if err != nil {
		return nil, prog, fmt.Errorf("producer %s: %w", prod.Name(), err)
	}
	return img, prog, nil
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
// alone. Other producers get the programs one at a time at
// harness.CodeBase, as Produce lays them out. A generation or producer error is that seed's
// only.
func ProduceBatch(prod producer.Producer, t target.Target, seeds []int64, opt gen.Options) []Produced {
	opt, err := genOptions(prod, t, opt)
	if err != nil {
		out := make([]Produced, len(seeds))
		for i, s := range seeds {
			out[i] = Produced{Seed: s, Err: err}
		}
		return out
	}
	return produceBatch(prod, t, seeds, opt)
}

// produceBatch is ProduceBatch with opt complete (genOptions).
func produceBatch(prod producer.Producer, t target.Target, seeds []int64, opt gen.Options) []Produced {
	out := make([]Produced, len(seeds))
	bp, batch := prod.(producer.BatchProducer)
	if !batch {
		for i, s := range seeds {
			img, prog, err := produce(prod, t, s, opt)
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
	near, far := uint64(harness.CodeBase), uint64(emu.FarCodeBase)
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
			near, far = harness.CodeBase, emu.FarCodeBase
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

// ProduceAhead makes the plan's programs, one per seed, each run with
// paths argument vectors, size programs at a time (ProduceBatch), one
// batch ahead of its consumer: while the caller checks a batch, the
// toolchain assembles and links the next one. The channel closes after
// the last batch; stop, when closed by the caller, makes it stop early.
func (p *Plan) ProduceAhead(seeds []int64, size, paths int, stop <-chan struct{}) <-chan []Produced {
	opt := p.Mix.Options(paths)
	out := make(chan []Produced, 1)
	go func() {
		defer close(out)
		for i := 0; i < len(seeds); i += size {
			batch := produceBatch(p.Producer, p.Target, seeds[i:min(i+size, len(seeds))], opt)
			select {
			case out <- batch:
			case <-stop:
				return
			}
		}
	}()
	return out
}
