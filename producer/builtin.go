package producer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/buildinfo"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	for _, v := range []sframe.Version{sframe.Version2, sframe.Version3} {
		v := v
		Register(About{Name: fmt.Sprintf("builtin-v%d", v), Setup: toolchain.NoSetup,
			Summary: fmt.Sprintf("sfconform's own encoder, SFrame v%d, every target", v)}, func(name, arg string) (Producer, error) {
			if arg != "" {
				return nil, fmt.Errorf("producer %s takes no argument", name)
			}
			return Builtin{Version: v}, nil
		})
	}
}

// sectionAlign is where the section starts after the code: a linker
// aligns .sframe to 8 bytes; it is never mapped into the emulator. A
// program's far segment (Program.Segments) lies more than 4 GiB above it.
const sectionAlign = 8

// Builtin encodes the generator's own rows with the sframe package, as
// SFrame Version (2 or 3) in the target's byte order, with PC-relative
// function starts and sorted FDEs; with Layouts, some programs' sections
// (chosen by seed) take those shapes instead (layout.go).
type Builtin struct {
	Version sframe.Version
	Layouts Layouts
}

func (b Builtin) Name() string { return fmt.Sprintf("builtin-v%d", b.Version) }

// ExactVersion is the sfconform build the encoder is part of.
func (b Builtin) ExactVersion() string {
	return fmt.Sprintf("sfconform %s, its own encoder (%s)", buildinfo.Version(), b.Name())
}

// SFrameVersion: the encoder writes its version for every target.
func (b Builtin) SFrameVersion(t target.Target) (int, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("%v is not a target", t)
	}
	return int(b.Version), nil
}

// Produce encodes the program's rows. The Program must be laid out.
func (b Builtin) Produce(p *gen.Program) (*image.Image, error) {
	return builtinFrom(p, b.Version, p.FDEs(), b.Layouts)
}

// BuiltinFrom is the builtin producer with the FDEs given, e.g. with a
// fault injected.
func BuiltinFrom(p *gen.Program, v sframe.Version, fdes []sframe.FDE) (*image.Image, error) {
	return builtinFrom(p, v, fdes, 0)
}

func builtinFrom(p *gen.Program, v sframe.Version, fdes []sframe.FDE, layouts Layouts) (*image.Image, error) {
	if len(p.Code) == 0 {
		return nil, fmt.Errorf("builtin producer: program (seed %d) is not laid out", p.Seed)
	}
	img := &image.Image{
		Target:        p.Target,
		Producer:      fmt.Sprintf("builtin-v%d", v),
		SFrameVersion: int(v),
		Code:          p.Code,
		CodeAddr:      p.Base,
		Entry:         p.Entry,
		Exit:          p.Exit,
		Symbols:       append(p.Symbols(), p.Stacks()...),
		Paths:         p.PathRegs(),
		Signals:       p.Signals(),
		RuleRegs:      p.RuleRegs(),
		Segments:      p.Segments(),
	}
	img.SortSymbols()
	end := p.Base + uint64(len(p.Code))
	img.SFrameAddr = (end + sectionAlign - 1) &^ (sectionAlign - 1)
	abi := sframe.ABI(p.Target)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(abi)
	opt := sframe.EncodeOptions{
		Version:    v,
		ABI:        abi,
		Base:       img.SFrameAddr,
		PCRel:      true,
		CFAFixedFP: fixedFP,
		CFAFixedRA: fixedRA,
	}
	// A function whose rows a DEFAULT FDE cannot hold (a CFA on another
	// register or loaded from memory, an RA in a register) gets a FLEX FDE
	// in version 3, as GNU as gives it; a type the caller set stays.
	// The caller's FDEs are left as they were.
	typed := slices.Clone(fdes)
	for i := range typed {
		if typed[i].Type == sframe.FDETypeDefault {
			typed[i].Type = sframe.ChooseFDEType(&typed[i], opt)
		}
	}
	padding, split := layouts.apply(p.Seed, &opt, typed)
	var sec []byte
	var err error
	if layouts.Has(LayoutModules) && modulesChosen(p.Seed) && len(typed) < maxConcatenated {
		img.Modules, err = encodeModules(p, typed, opt, padding)
		if err == nil && img.Modules != nil {
			img.SFrameAddr = 0
			return img, nil
		}
	}
	if err == nil {
		sec, err = encodeLayout(typed, opt, split, padding)
	}
	if err != nil {
		var ee *sframe.EncodeError
		if errors.As(err, &ee) && ee.Func {
			if s, ok := img.SymbolAt(ee.FuncStart); ok {
				return nil, fmt.Errorf("builtin producer: %s seed %d, SFrame v%d: function %s: %w", p.Target.Name(), p.Seed, v, s.Name, err)
			}
		}
		return nil, fmt.Errorf("builtin producer: %s seed %d, SFrame v%d: %w", p.Target.Name(), p.Seed, v, err)
	}
	img.SFrame = sec
	return img, nil
}
