package main

import (
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// brokenTable is builtin-v3's program of seed 21 on abi with the first row
// of its root function's CFA one word off, with the image the correct
// table gives: the failing input of the tests of saving, replaying and
// reporting.
func brokenTable(t *testing.T, abi target.Target) (bad, good *image.Image, prog *gen.Program) {
	t.Helper()
	good, prog, err := campaign.Produce(producer.Builtin{Version: 3}, abi, 21, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fdes := prog.FDEs()
	for i := range fdes {
		if fdes[i].Start == prog.Funcs[1].Addr {
			fdes[i].Rows[0].CFA.Offset += target.WordSize
		}
	}
	bad, err = producer.BuiltinFrom(prog, 3, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return bad, good, prog
}
