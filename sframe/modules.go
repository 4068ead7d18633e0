package sframe

import (
	"fmt"
	"sort"
)

// Module is one loaded object of a process (an executable or a shared
// object): the code range [Start, End) it maps and the table of its own
// section. An unwinder over several finds the module holding a PC first,
// as glibc's _dl_find_object and the Linux unwinder (per mapping) do, and
// looks the PC up in that module's table only.
type Module struct {
	Start, End uint64
	Table      *Table
}

// Modules are a process's modules, sorted by Start, ranges disjoint.
type Modules []Module

// Find returns the module whose range holds pc, or nil.
func (ms Modules) Find(pc uint64) *Module {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Start > pc }) - 1
	if i >= 0 && pc < ms[i].End {
		return &ms[i]
	}
	return nil
}

// FindRow is Table.FindRow in the table of the module holding pc; a pc in
// no module yields ErrNoFDE.
func (ms Modules) FindRow(pc uint64) (Func, Row, error) {
	var f Func
	var r Row
	err := ms.findRow(pc, &f, &r)
	return f, r, err
}

func (ms Modules) findRow(pc uint64, f *Func, r *Row) error {
	m := ms.Find(pc)
	if m == nil {
		return fmt.Errorf("%w: no module's code range holds %#x", ErrNoFDE, pc)
	}
	return m.Table.findRow(pc, f, r)
}

// findRow looks pc up in the Unwinder's modules, or its table.
func (u *Unwinder) findRow(pc uint64, f *Func, r *Row) error {
	if u.Modules != nil {
		return u.Modules.findRow(pc, f, r)
	}
	return u.Table.findRow(pc, f, r)
}

// abi is the ABI of the Unwinder's table, or of its first module's (a
// process's modules share one).
func (u *Unwinder) abi() ABI {
	if u.Table == nil && len(u.Modules) > 0 {
		return u.Modules[0].Table.ABI
	}
	return u.Table.ABI
}
