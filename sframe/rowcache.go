package sframe

import (
	"errors"
	"fmt"
)

// ErrCacheMismatch reports that a RowCache's remembered lookup differs from
// the table's answer for the same PC: the lookup is a pure function of the
// table, so the table changed under the cache or a lookup is not
// deterministic.
var ErrCacheMismatch = errors.New("sframe: remembered lookup differs from the table")

// DefaultRecheck is how often a RowCache looks a remembered PC up again
// when RowCache.Recheck is 0: every DefaultRecheck-th hit.
const DefaultRecheck = 64

// RowCache remembers Table lookups by PC. A PC's function and row (or the
// lookup's error) are a pure function of the table, and an unwinder looks
// the same few PCs up at every step of a program: the return addresses of
// the callers do not change while the callee runs. The first lookup of a
// PC always goes through the table, and so does every Recheck-th hit,
// whose result must equal the remembered one (else ErrCacheMismatch): the
// table's lookup stays exercised on every PC and, by sampling, on every
// step.
//
// A RowCache is not safe for concurrent use. Reset empties it, keeping
// its memory, for another table.
type RowCache struct {
	table   *Table
	modules Modules // set by ResetModules: lookups go through them
	// Recheck is the stride of the sampled re-lookups: every Recheck-th
	// hit; 0 means DefaultRecheck, a negative value never.
	Recheck int

	slots   []cacheSlot // open addressing, linear probing; len a power of 2
	entries []cacheEntry
	shift   uint // 64 - log2(len(slots))
	hits    int
}

type cacheSlot struct {
	pc  uint64
	idx int32 // into entries, plus one; 0 marks an empty slot
}

type cacheEntry struct {
	f   Func
	r   Row
	err error
}

// NewRowCache returns an empty cache of t's lookups.
func NewRowCache(t *Table) *RowCache {
	c := &RowCache{}
	c.Reset(t)
	return c
}

// Reset empties the cache and makes it remember t's lookups.
func (c *RowCache) Reset(t *Table) {
	c.table, c.modules = t, nil
	clear(c.slots)
	clear(c.entries) // drop the old table's sections for the collector
	c.entries = c.entries[:0]
	c.hits = 0
	if c.slots == nil {
		c.grow(1024)
	}
}

// ResetModules empties the cache and makes it remember the lookups of a
// process's modules (Modules.FindRow).
func (c *RowCache) ResetModules(ms Modules) {
	c.Reset(nil)
	c.modules = ms
}

// lookup is the table's, or the modules', lookup of pc.
func (c *RowCache) lookup(pc uint64, f *Func, r *Row) error {
	if c.modules != nil {
		return c.modules.findRow(pc, f, r)
	}
	return c.table.findRow(pc, f, r)
}

// Table is the table whose lookups the cache remembers.
func (c *RowCache) Table() *Table { return c.table }

// FindRow is Table.FindRow through the cache.
func (c *RowCache) FindRow(pc uint64) (Func, Row, error) {
	var f Func
	var r Row
	err := c.findRow(pc, &f, &r)
	return f, r, err
}

func (c *RowCache) findRow(pc uint64, f *Func, r *Row) error {
	e, err := c.entry(pc)
	if err != nil {
		return err
	}
	*f, *r = e.f, e.r
	return e.err
}

// entry is pc's remembered lookup, made now if it is the first; err is
// ErrCacheMismatch from a recheck, else nil (the lookup's own error is
// e.err).
func (c *RowCache) entry(pc uint64) (e *cacheEntry, err error) {
	mask := len(c.slots) - 1
	for i := c.hash(pc); ; i = (i + 1) & mask {
		s := c.slots[i]
		if s.idx == 0 {
			break
		}
		if s.pc == pc {
			e := &c.entries[s.idx-1]
			c.hits++
			if c.due() {
				return e, c.recheck(pc, e)
			}
			return e, nil
		}
	}
	var n cacheEntry
	n.err = c.lookup(pc, &n.f, &n.r)
	c.insert(pc, n)
	return &c.entries[len(c.entries)-1], nil
}

// due reports whether this hit is one to look up again.
func (c *RowCache) due() bool {
	every := c.Recheck
	switch {
	case every < 0:
		return false
	case every == 0:
		every = DefaultRecheck
	}
	return c.hits%every == 0
}

// recheck looks pc up in the table again and compares with e.
func (c *RowCache) recheck(pc uint64, e *cacheEntry) error {
	var f Func
	var r Row
	err := c.lookup(pc, &f, &r)
	same := f == e.f && r == e.r && (err == nil) == (e.err == nil)
	if same && err != nil {
		same = err.Error() == e.err.Error()
	}
	if !same {
		return fmt.Errorf("%w: at %#x remembered function %#x row %+v (error %v), the table gives %#x row %+v (error %v)",
			ErrCacheMismatch, pc, e.f.Start, e.r, e.err, f.Start, r, err)
	}
	return nil
}

func (c *RowCache) hash(pc uint64) int { return int((pc * 0x9e3779b97f4a7c15) >> c.shift) }

func (c *RowCache) insert(pc uint64, e cacheEntry) {
	if 2*(len(c.entries)+1) > len(c.slots) {
		c.grow(2 * len(c.slots))
	}
	c.entries = append(c.entries, e)
	c.place(pc, int32(len(c.entries)))
}

func (c *RowCache) place(pc uint64, idx int32) {
	mask := len(c.slots) - 1
	i := c.hash(pc)
	for c.slots[i].idx != 0 {
		i = (i + 1) & mask
	}
	c.slots[i] = cacheSlot{pc, idx}
}

// grow makes room for n slots and places the entries again.
func (c *RowCache) grow(n int) {
	old := c.slots
	c.slots = make([]cacheSlot, n)
	c.shift = 64
	for m := n; m > 1; m >>= 1 {
		c.shift--
	}
	for _, s := range old {
		if s.idx != 0 {
			c.place(s.pc, s.idx)
		}
	}
}
