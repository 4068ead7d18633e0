package producer

import (
	"fmt"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
)

// sectionAlign is where the section starts after the code: a linker
// aligns .sframe to 8 bytes; it is never mapped into the emulator.
const sectionAlign = 8

// Builtin encodes the generator's own rows as an SFrame section of the
// given version in the target's byte order. The Program must be laid out.
func Builtin(p *gen.Program, v sframe.Version) (*Image, error) {
	return BuiltinFrom(p, v, p.FDEs())
}

// BuiltinFrom is Builtin with the FDEs given, e.g. with a fault injected.
func BuiltinFrom(p *gen.Program, v sframe.Version, fdes []sframe.FDE) (*Image, error) {
	if len(p.Code) == 0 {
		return nil, fmt.Errorf("builtin producer: program (seed %d) is not laid out", p.Seed)
	}
	img := &Image{
		ABI:      p.ABI,
		Producer: fmt.Sprintf("builtin-v%d", v),
		Version:  v,
		Code:     p.Code,
		CodeAddr: p.Base,
		Entry:    p.Entry,
		Exit:     p.Exit,
		Regs:     make(map[int]uint64, len(p.ArgRegs)),
	}
	for i, r := range p.ArgRegs {
		img.Regs[r] = p.Args[i]
	}
	for _, s := range p.Symbols() {
		img.Symbols = append(img.Symbols, Symbol(s))
	}
	sortSymbols(img.Symbols)
	end := p.Base + uint64(len(p.Code))
	img.SFrameAddr = (end + sectionAlign - 1) &^ (sectionAlign - 1)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(p.ABI)
	sec, err := sframe.Encode(fdes, sframe.EncodeOptions{
		Version:    v,
		ABI:        p.ABI,
		Base:       img.SFrameAddr,
		PCRel:      true,
		CFAFixedFP: fixedFP,
		CFAFixedRA: fixedRA,
	})
	if err != nil {
		return nil, fmt.Errorf("builtin producer: %s seed %d, SFrame v%d: %w", p.ABI.Name(), p.Seed, v, err)
	}
	img.SFrame = sec
	return img, nil
}
