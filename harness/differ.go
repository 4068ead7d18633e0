package harness

import (
	"fmt"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/verdict"
)

// The differential: a toolchain's table against sfconform's own encoding
// of the same program, row against row at every executed PC. It lives
// here, not in the oracle: the oracle judges from the machine alone and
// never reads a section. A row that differs is only a fact; the oracle's
// judgement of that step (the consumer's backtrace against the machine)
// says whether the difference matters. The row at the PC gives frame 0's
// CFA and the caller's PC, SP and FP: when those match the machine (the
// step is OK, or it went wrong further out, by another row) the
// difference is "differs, equivalent"; otherwise the step is WRONG (or
// NOINFO, ERROR) because of it, and counted as that verdict.

// Reference is sfconform's own encoding of prog, the program img was made
// from, laid out where prog is, so its rows are for the same PCs. It is
// version 3 whatever img's version: rows compare as rules, and version 3
// expresses every rule gen writes (a toolchain may be given a pattern its
// own version cannot express, and then leave the function out).
func Reference(img *image.Image, prog *gen.Program) (*image.Image, error) {
	return producer.Builtin{Version: sframe.Version3}.Produce(prog)
}

// RowDiff is one step at which the image's row differs from the
// reference's.
type RowDiff struct {
	Path, Step int
	PC         uint64
	Function   string // symbol+offset
	Got, Want  string // the rows: the image's, the reference's
	Verdict    verdict.Verdict
}

func (d RowDiff) String() string {
	return fmt.Sprintf("step %d at %s: %v, the section says %s, sfconform's encoding %s", d.Step, d.Function, d.Verdict, d.Got, d.Want)
}

// differ compares the rows of two tables at PCs, remembering each PC's
// answer: a program's paths run the same code.
type differ struct {
	img  *image.Image
	got  []*sframe.Table // per section of img (image.Image.Sections)
	want *sframe.Table
	err  error // a table that does not decode: every PC differs
	memo map[uint64]rowPair
}

// rowPair is the two tables' rows for one PC.
type rowPair struct {
	same      bool
	got, want rowAt
}

// rowAt is a table's row for a PC, or none.
type rowAt struct {
	ok  bool
	row sframe.Row
	err error // the decoder's, for a table that does not decode
}

func (r rowAt) String() string {
	switch {
	case r.err != nil:
		return r.err.Error()
	case !r.ok:
		return "no row"
	}
	return fmt.Sprintf("CFA %s, RA %s, FP %s%s", r.row.CFA, r.row.RA, r.row.FP, flags(r.row))
}

func newDiffer(img, ref *image.Image) *differ {
	d := &differ{img: img, memo: map[uint64]rowPair{}}
	var err error
	// An image of several modules has a table per module: a PC's row is
	// in its module's.
	for _, m := range img.Sections() {
		t, err := sframe.Decode(m.SFrame, m.SFrameAddr)
		if err != nil && d.err == nil {
			d.err = fmt.Errorf("the section does not decode: %w", err)
			if m.Name != "" {
				d.err = fmt.Errorf("the section of module %s does not decode: %w", m.Name, err)
			}
		}
		d.got = append(d.got, t)
	}
	if d.want, err = sframe.Decode(ref.SFrame, ref.SFrameAddr); err != nil {
		d.err = fmt.Errorf("the reference does not decode: %w", err)
	}
	return d
}

// at compares the rows for pc.
func (d *differ) at(pc uint64) rowPair {
	if r, ok := d.memo[pc]; ok {
		return r
	}
	var r rowPair
	if d.err != nil {
		r.got.err = d.err
	} else {
		r.want = lookupRow(d.want, pc)
		if len(d.img.Modules) == 0 {
			r.got = lookupRow(d.got[0], pc)
		} else if i := d.img.ModuleAt(pc); i >= 0 {
			r.got = lookupRow(d.got[i], pc)
		}
		r.same = sameRule(r.got, r.want)
	}
	d.memo[pc] = r
	return r
}

func lookupRow(t *sframe.Table, pc uint64) rowAt {
	_, row, err := t.FindRow(pc)
	return rowAt{ok: err == nil, row: row}
}

// sameRule compares what a consumer would apply: the rules and flags, not
// where the row starts or how the FDE holding it is encoded, so that two
// tables saying the same thing in different ways (one PCMASK FDE or one
// FDE per stub, a FLEX or a DEFAULT FDE) compare equal. The key signing
// the RA matters only while the RA is signed.
func sameRule(a, b rowAt) bool {
	if !a.ok || !b.ok {
		return a.ok == b.ok
	}
	x, y := a.row, b.row
	x.Start, y.Start = 0, 0
	if !x.MangledRA {
		x.PAuthKey = 0
	}
	if !y.MangledRA {
		y.PAuthKey = 0
	}
	return x == y
}
