package producer

import (
	"fmt"
	"sort"

	"github.com/sfconform/sfconform/sframe"
)

// Symbol is a function of the image: the oracle recognises function
// entries by these, and reports name frames by them.
type Symbol struct {
	Name string `json:"name"`
	Addr uint64 `json:"addr"`
	Size uint32 `json:"size"`
}

// Image is everything a run needs: code to execute, where to start and
// stop, the function symbols, and the SFrame section under test.
type Image struct {
	ABI      sframe.ABI
	Producer string // e.g. "builtin-v3", "gas-2.44"
	Version  sframe.Version

	Code     []byte // as it must be in memory
	CodeAddr uint64
	Entry    uint64 // first instruction (the entry stub)
	Exit     uint64 // the run ends when the PC reaches it
	Symbols  []Symbol
	Regs     map[int]uint64 // initial argument registers by DWARF number

	SFrame     []byte // the section's bytes
	SFrameAddr uint64 // virtual address of SFrame[0]
}

// SymbolAt returns the symbol whose range holds pc.
func (img *Image) SymbolAt(pc uint64) (Symbol, bool) {
	i := sort.Search(len(img.Symbols), func(i int) bool { return img.Symbols[i].Addr > pc }) - 1
	if i >= 0 && pc < img.Symbols[i].Addr+uint64(img.Symbols[i].Size) {
		return img.Symbols[i], true
	}
	return Symbol{}, false
}

// sortSymbols orders symbols by address, which SymbolAt relies on.
func sortSymbols(s []Symbol) {
	sort.Slice(s, func(i, j int) bool { return s[i].Addr < s[j].Addr })
}

// Describe names a PC as symbol+offset for reports.
func (img *Image) Describe(pc uint64) string {
	if s, ok := img.SymbolAt(pc); ok {
		return fmt.Sprintf("%s+0x%x", s.Name, pc-s.Addr)
	}
	return fmt.Sprintf("0x%x", pc)
}
