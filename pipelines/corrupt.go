package pipelines

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sfconform/sfconform/sframe"
)

// Corrupt writes a copy of the linked ELF file at path into dir with the
// start of one FDE of its .sframe moved onto the start of the next FDE's
// function: the FDE now describes foreign code, as a stale FDE of a
// discarded or moved function would. The FDE chosen is the one with the
// most FREs (its rows differ most from the other function's CFI) whose
// PCs are addresses (not a PLT's mask). It returns the copy and what was changed.
func Corrupt(path, dir string) (string, string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", "", fmt.Errorf("%s: %v", path, err)
	}
	defer f.Close()
	if f.Type == elf.ET_REL {
		return "", "", fmt.Errorf("%s: a relocatable object (its FDE starts are relocations)", path)
	}
	sec := f.Section(".sframe")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return "", "", fmt.Errorf("%s: no .sframe with contents", path)
	}
	data, err := sec.Data()
	if err != nil {
		return "", "", err
	}
	t, err := sframe.Decode(data, sec.Addr)
	if err != nil {
		return "", "", fmt.Errorf("%s: .sframe: %v", path, err)
	}
	if len(t.Sections) == 0 || t.Sections[0].Header.NumFDEs < 2 {
		return "", "", fmt.Errorf("%s: fewer than two FDEs", path)
	}
	s := t.Sections[0]
	n := int(s.Header.NumFDEs)
	pick, most := 0, 0
	for i := 0; i+1 < n; i++ {
		a, c := s.Func(i), s.Func(i+1)
		if c.Start > a.Start && a.NumFREs > most && a.PCType == sframe.PCInc {
			pick, most = i, a.NumFREs
		}
	}
	a, c := s.Func(pick), s.Func(pick+1)
	delta := c.Start - a.Start
	out := append([]byte(nil), data...)
	at := a.Offset
	if s.Header.Version == sframe.Version3 {
		s.Order.PutUint64(out[at:], s.Order.Uint64(out[at:])+delta)
	} else {
		s.Order.PutUint32(out[at:], s.Order.Uint32(out[at:])+uint32(delta))
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	copy(whole[sec.Offset:], out)
	bad := filepath.Join(dir, "control-"+filepath.Base(path))
	if err := os.WriteFile(bad, whole, 0o755); err != nil {
		return "", "", err
	}
	return bad, fmt.Sprintf("FDE %d (0x%x) moved to 0x%x", pick, a.Start, c.Start), nil
}
