package harness

import (
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// Produce makes the program of (t, seed, opt) at CodeBase with
// sfconform's own encoder, as the campaign package does for it (the
// patterns its version expresses): what the checker's tests run. The
// campaign package, which imports this one, owns production.
func Produce(prod producer.Builtin, t target.Target, seed int64, opt gen.Options) (*image.Image, *gen.Program, error) {
	if opt.SFrameVersion == 0 {
		opt.SFrameVersion = max(int(prod.Version), 2)
	}
	prog, err := gen.GenerateAt(t, seed, opt, CodeBase)
	if err != nil {
		return nil, nil, err
	}
	img, err := prod.Produce(prog)
	return img, prog, err
}
