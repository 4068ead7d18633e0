package oracle

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// ProbePCs finds the bytes of the code in no function: the first and the
// last of each run, and none past the code (a toolchain's next program may
// start there).
func TestProbePCs(t *testing.T) {
	img := &image.Image{Target: target.X86_64, CodeAddr: 0x1000, Code: make([]byte, 0x40), Symbols: []image.Symbol{
		{Name: "a", Addr: 0x1000, Size: 0x10},
		{Name: "b", Addr: 0x1011, Size: 0x0f}, // a gap of one byte before it
		{Name: "c", Addr: 0x1020, Size: 0x08}, // right after b
		{Name: "stack", Addr: 0x1028, Size: 0x100, Kind: image.KindStack},
		{Name: "d", Addr: 0x1030, Size: 0x0c}, // 8 bytes of gap before, 4 after (to the code's end)
	}}
	got := ProbePCs(nil, img)
	want := []uint64{0x1010, 0x1028, 0x102f, 0x103c, 0x103f}
	if !slices.Equal(got, want) {
		t.Fatalf("probe PCs %#x, want %#x", got, want)
	}
	for i := 0; i < 3*MaxProbes; i++ {
		img.Symbols = append(img.Symbols, image.Symbol{Name: fmt.Sprint("f", i), Addr: 0x2000 + 4*uint64(i), Size: 2})
	}
	img.Code = make([]byte, 0x2000)
	if n := len(ProbePCs(nil, img)); n != MaxProbes {
		t.Errorf("%d probe PCs, want at most %d", n, MaxProbes)
	}
}

// A probe is OK only when the consumer found nothing for frame 0.
func TestJudgeProbe(t *testing.T) {
	const pc, sp, fp = 0x1010, 0x7000, 0x7100
	noInfo := fmt.Errorf("no FDE for 0x1010: %w", frame.ErrNoInfo)
	f0 := frame.Frame{PC: pc, SP: sp, FP: fp}
	partial := f0
	partial.Partial = true
	for _, c := range []struct {
		name  string
		got   []frame.Frame
		err   error
		want  verdict.Verdict
		field string
	}{
		{"no frames, NOINFO", nil, noInfo, verdict.OK, ""},
		{"frame 0 partial, NOINFO", []frame.Frame{partial}, noInfo, verdict.OK, ""},
		{"unwound from a PC in no function", []frame.Frame{{PC: pc, SP: sp, FP: fp, CFA: sp + 16}, {PC: 0x1234, SP: sp + 16, Outermost: true}}, nil, verdict.Wrong, "no-function"},
		{"frame 0 taken for the outermost", []frame.Frame{{PC: pc, SP: sp, FP: fp, Outermost: true}}, nil, verdict.Wrong, "no-function"},
		{"NOINFO one frame further", []frame.Frame{{PC: pc, SP: sp, FP: fp, CFA: sp + 16}, {PC: 0x1234, SP: sp + 16, Partial: true}}, noInfo, verdict.Wrong, "no-function"},
		{"another frame 0", []frame.Frame{{PC: pc + 1, SP: sp, FP: fp, Partial: true}}, noInfo, verdict.Wrong, "no-function"},
		{"crashed", nil, errors.New("signal 11"), verdict.Error, ""},
	} {
		j := JudgeProbe(pc, sp, fp, c.got, c.err)
		if j.Verdict != c.want || j.Field != c.field {
			t.Errorf("%s: %v %q (%s), want %v %q", c.name, j.Verdict, j.Field, j.Detail, c.want, c.field)
		}
	}
}
