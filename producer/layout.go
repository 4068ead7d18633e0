package producer

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
)

// Section layouts: the shapes of a section, beyond its rows, that the
// builtin producer varies from program to program when asked (Layouts), so
// that a consumer meets the header variety the format allows:
//
//	aux-header        an auxiliary header of 1 to 64 bytes after the fixed
//	                  header (fdeoff and freoff count from its end)
//	unsorted          the FDE index in no particular order, FDE_SORTED clear
//	section-relative  v2 function starts relative to the section, the
//	                  PCREL flag clear (as binutils 2.41-2.44 wrote them)
//	fre-padding       1 to 7 zero bytes after the last FRE, as a linker's
//	                  alignment leaves
//	concatenated      two sections one after the other, each with its own
//	                  header and half the functions, the second aligned to
//	                  8 bytes: what ld writes for inputs it cannot merge
//	modules           a process of 2 to 4 loaded objects (an executable and
//	                  shared objects), each with its own section
//	                  (image.Module, modules.go)
//
// A version's strict rules can forbid a shape (version 3, the Linux
// unwinder's: no auxiliary header, sorted FDEs, PC-relative starts);
// LayoutShapes says which, and why.
const (
	LayoutAuxHeader       = "aux-header"
	LayoutUnsorted        = "unsorted"
	LayoutSectionRelative = "section-relative"
	LayoutPadding         = "fre-padding"
	LayoutConcatenated    = "concatenated"
	LayoutModules         = "modules"
)

// LayoutNames lists every layout shape, in a fixed order.
var LayoutNames = []string{LayoutAuxHeader, LayoutUnsorted, LayoutSectionRelative, LayoutPadding, LayoutConcatenated, LayoutModules}

// LayoutShape says whether SFrame version v can carry a layout shape: Why
// is "" when it can, else the reason it cannot. Violates, when set, is the
// rule (an sframe sentinel error) a section with the shape breaks: the
// shape can be written, but the version's strict rules forbid it.
type LayoutShape struct {
	Name     string
	Why      string
	Violates error
}

// LayoutShapes lists every shape with what version v says of it.
func LayoutShapes(v int) []LayoutShape {
	out := make([]LayoutShape, len(LayoutNames))
	for i, n := range LayoutNames {
		out[i] = LayoutShape{Name: n}
		switch {
		case v >= 3 && n == LayoutAuxHeader:
			out[i].Why = "SFrame v3's strict rules (the Linux unwinder's) forbid an auxiliary header"
			out[i].Violates = sframe.ErrBadAuxHeader
		case v >= 3 && n == LayoutUnsorted:
			out[i].Why = "SFrame v3's strict rules (the Linux unwinder's) require sorted FDEs"
			out[i].Violates = sframe.ErrNotSorted
		case v >= 3 && n == LayoutSectionRelative:
			out[i].Why = "SFrame v3 function starts are always PC-relative"
		}
	}
	return out
}

// Layouts is a set of layout shapes (bit i: LayoutNames[i]).
type Layouts uint8

// LayoutSet makes the set of the shapes named; an unknown name is an
// error.
func LayoutSet(names ...string) (Layouts, error) {
	var s Layouts
	for _, n := range names {
		i := slices.Index(LayoutNames, n)
		if i < 0 {
			return 0, fmt.Errorf("no section layout %q (have %v)", n, LayoutNames)
		}
		s |= 1 << i
	}
	return s, nil
}

// Has reports whether the set holds the shape named.
func (s Layouts) Has(name string) bool {
	i := slices.Index(LayoutNames, name)
	return i >= 0 && s&(1<<i) != 0
}

// Names lists the set's shapes in LayoutNames order.
func (s Layouts) Names() []string {
	var out []string
	for i, n := range LayoutNames {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// apply picks the shapes of the program of seed among s, from the seed
// alone: each shape in s about 1 program in 4, at different seeds,
// padding 1 in 3. It changes opt and fdes (a copy) and returns the
// padding to append and, for concatenated sections, how many of fdes go
// into the first section (0: one section).
func (s Layouts) apply(seed int64, opt *sframe.EncodeOptions, fdes []sframe.FDE) (padding, split int) {
	if s == 0 {
		return 0, 0
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6a09_e667_f3bc_c908))
	k := uint64(seed) % 8
	if s.Has(LayoutAuxHeader) && (k == 1 || k == 6) {
		aux := make([]byte, 1+rng.IntN(64))
		for i := range aux {
			aux[i] = byte(rng.Uint32())
		}
		opt.AuxHeader = aux
	}
	if s.Has(LayoutUnsorted) && (k == 2 || k == 6) {
		opt.Unsorted = true
		rng.Shuffle(len(fdes), func(a, b int) { fdes[a], fdes[b] = fdes[b], fdes[a] })
	}
	if s.Has(LayoutSectionRelative) && (k == 3 || k == 7) {
		opt.PCRel = false
	}
	if s.Has(LayoutPadding) && uint64(seed)%3 == 0 {
		padding = 1 + rng.IntN(7)
	}
	if s.Has(LayoutConcatenated) && (k == 5 || k == 0) && len(fdes) >= 2 && len(fdes) < maxConcatenated {
		// Each section keeps a row: the Linux unwinder's rules refuse a
		// section without FREs.
		split = 1 + rng.IntN(len(fdes)-1)
		hasRows := func(fs []sframe.FDE) bool {
			return slices.ContainsFunc(fs, func(f sframe.FDE) bool { return len(f.Rows) > 0 })
		}
		for split < len(fdes) && !hasRows(fdes[:split]) {
			split++
		}
		for split > 0 && !hasRows(fdes[split:]) {
			split--
		}
		if split == len(fdes) || !hasRows(fdes[:split]) {
			split = 0
		}
	}
	return padding, split
}

// maxConcatenated: a table of this many functions or more stays one
// section, so that large tables (gen's idle functions) keep their size.
const maxConcatenated = 1000

// encodeLayout encodes fdes with opt, as two sections when split > 0 (the
// first split FDEs, then the rest, the second section's header 8-byte
// aligned after zero padding), then padding zero bytes.
func encodeLayout(fdes []sframe.FDE, opt sframe.EncodeOptions, split, padding int) ([]byte, error) {
	if split == 0 {
		sec, err := sframe.Encode(fdes, opt)
		if err != nil {
			return nil, err
		}
		return append(sec, make([]byte, padding)...), nil
	}
	first, err := sframe.Encode(fdes[:split], opt)
	if err != nil {
		return nil, err
	}
	first = append(first, make([]byte, (8-len(first)%8)%8)...)
	opt.Base += uint64(len(first))
	second, err := sframe.Encode(fdes[split:], opt)
	if err != nil {
		return nil, err
	}
	return append(append(first, second...), make([]byte, padding)...), nil
}

// SectionShapeNames lists every shape SectionShapes can name, in a fixed
// order, so that a report shows the ones no section had as zeros.
var SectionShapeNames = append(append([]string{
	"fdes:1-63", "fdes:64-999", "fdes:1000-9999", "fdes:10000+",
	"fre-start:1B", "fre-start:2B", "fre-start:4B",
}, LayoutNames...), ModuleCountNames...)

// ModuleCountNames are the modules-per-image buckets ImageShapes names.
var ModuleCountNames = []string{"modules:1", "modules:2", "modules:3+"}

// ImageShapes is SectionShapes over every section of the image (each
// module's), with its modules-per-image bucket ("modules:2": objects, a
// .plt mapping not counted) and, for more than one module, LayoutModules.
func ImageShapes(img *image.Image) ([]string, error) {
	secs := img.Sections()
	var out []string
	for _, m := range secs {
		names, err := SectionShapes(m.SFrame, m.SFrameAddr)
		if err != nil {
			if len(img.Modules) > 0 {
				return nil, fmt.Errorf("module %s: %w", m.Name, err)
			}
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	n := 0 // objects: a .plt mapping (bind.go) shares its object's section
	for _, m := range secs {
		if !PLTModule(m.Name) {
			n++
		}
	}
	switch {
	case n >= 3:
		out = append(out, "modules:3+", LayoutModules)
	case n == 2:
		out = append(out, "modules:2", LayoutModules)
	default:
		out = append(out, "modules:1")
	}
	return out, nil
}

// SectionShapes names the shapes of the SFrame data sec, the section at
// addr: its functions per section bucket ("fdes:64-999"), the FRE start
// sizes of its FDEs ("fre-start:2B"), and the layouts it has (LayoutNames;
// "concatenated" for more than one section).
func SectionShapes(sec []byte, addr uint64) ([]string, error) {
	tab, err := sframe.Decode(sec, addr)
	if err != nil {
		return nil, err
	}
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	end := 0
	for _, s := range tab.Sections {
		h := s.Header
		switch n := h.NumFDEs; {
		case n >= 10000:
			add("fdes:10000+")
		case n >= 1000:
			add("fdes:1000-9999")
		case n >= 64:
			add("fdes:64-999")
		case n >= 1:
			add("fdes:1-63")
		}
		for i := 0; i < int(h.NumFDEs); i++ {
			switch s.Func(i).FREType {
			case sframe.FREAddr1:
				add("fre-start:1B")
			case sframe.FREAddr2:
				add("fre-start:2B")
			case sframe.FREAddr4:
				add("fre-start:4B")
			}
		}
		if len(h.AuxHeader) > 0 {
			add(LayoutAuxHeader)
		}
		if h.Flags&sframe.FlagFDESorted == 0 {
			add(LayoutUnsorted)
		}
		if h.Version == sframe.Version2 && h.Flags&sframe.FlagFuncStartPCRel == 0 {
			add(LayoutSectionRelative)
		}
		end = s.Offset + s.Size
	}
	if len(tab.Sections) > 1 {
		add(LayoutConcatenated)
	}
	if end < len(sec) {
		add(LayoutPadding)
	}
	return out, nil
}
