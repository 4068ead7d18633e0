package consumer

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func TestNew(t *testing.T) {
	t.Parallel()
	c, err := New("builtin")
	if err != nil || c.Name() != "builtin" || c.BatchSize() != 1 {
		t.Fatalf("builtin: %v, %v", c, err)
	}
	if _, err := New("builtin:x"); err == nil {
		t.Error("builtin with an argument accepted")
	}
	if _, err := New("nonesuch:arg"); err == nil {
		t.Fatal("unknown consumer accepted")
	}
	for _, tg := range target.All {
		for v := 1; v <= 3; v++ {
			if err := c.Supports(tg, v); err != nil {
				t.Errorf("builtin refuses %v v%d: %v", tg, v, err)
			}
		}
		if c.Supports(tg, 4) == nil {
			t.Errorf("builtin claims to read SFrame v4")
		}
	}
}

func TestBuiltinRefusesMalformedSection(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	img := &image.Image{Target: target.X86_64, SFrame: []byte{0xe2, 0xde, 3}}
	err := b.Load(img)
	var fe *sframe.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("Load of a 3-byte section: %v, want a FormatError", err)
	}
	out := make([]Result, 1)
	if err := b.Unwind([]Step{{Regs: &machine.Registers{}}}, out); err == nil {
		t.Fatal("Unwind after a refused Load succeeded")
	}
}

type words map[uint64]uint64

func (w words) ReadWord(a uint64) (uint64, bool) { v, ok := w[a]; return v, ok }

// A function at 0x1000 with an FP-based frame; nothing covers 0x5000.
func x86Image(t *testing.T) *image.Image {
	t.Helper()
	fdes := []sframe.FDE{{Start: 0x1000, Size: 0x20, Rows: []sframe.Row{
		{Start: 0, CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 8}, RA: sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: -8, Deref: true}, FP: sframe.Rule{Kind: sframe.RuleSame}},
	}}}
	sec, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: 3, ABI: sframe.ABIAMD64LE, Base: 0x4000, PCRel: true, CFAFixedRA: -8})
	if err != nil {
		t.Fatal(err)
	}
	code := append(bytes.Repeat([]byte{0x90}, 0x1f), 0xc3) // the function: nops and a ret
	return &image.Image{Target: target.X86_64, SFrame: sec, SFrameAddr: 0x4000, Code: code, CodeAddr: 0x1000}
}

// The builtin consumer reports the frame it could not unwind as Partial
// and maps the sframe package's lookup errors to frame.ErrNoInfo, so the
// oracle needs to know nothing of the sframe package.
func TestBuiltinPartialFrameAndNoInfo(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	if err := b.Load(x86Image(t)); err != nil {
		t.Fatal(err)
	}
	var regs machine.Registers
	regs.PC = 0x1004
	regs.Set(target.RegX86SP, 0x7ff8)
	regs.Set(target.RegX86FP, 0xaaaa)
	mem := words{0x7ff8: 0x5005} // the caller is at 0x5005: no FDE there
	out := make([]Result, 1)
	if err := b.Unwind([]Step{{Regs: &regs, Mem: mem}}, out); err != nil {
		t.Fatal(err)
	}
	r := out[0]
	if !errors.Is(r.Err, frame.ErrNoInfo) || !errors.Is(r.Err, sframe.ErrNoFDE) {
		t.Fatalf("error %v: want frame.ErrNoInfo wrapping sframe.ErrNoFDE", r.Err)
	}
	want := []frame.Frame{
		{PC: 0x1004, CFA: 0x8000, SP: 0x7ff8, FP: 0xaaaa},
		{PC: 0x5005, SP: 0x8000, FP: 0xaaaa, Partial: true},
	}
	if len(r.Frames) != len(want) || r.Frames[0] != want[0] || r.Frames[1] != want[1] {
		t.Fatalf("frames %v, want %v", r.Frames, want)
	}

	// An unreadable return address is a failure, not missing information.
	if err := b.Unwind([]Step{{Regs: &regs, Mem: words{}}}, out); err != nil {
		t.Fatal(err)
	}
	if r := out[0]; r.Err == nil || errors.Is(r.Err, frame.ErrNoInfo) || !errors.Is(r.Err, sframe.ErrUnreadable) {
		t.Fatalf("unreadable RA: error %v", r.Err)
	} else if len(r.Frames) != 1 || !r.Frames[0].Partial {
		t.Fatalf("unreadable RA: frames %v, want frame 0 partial", r.Frames)
	}
}
