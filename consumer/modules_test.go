package consumer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// modulesImage is a process image of two x86-64 modules: "exe" maps
// [0x1000, 0x1100), its function at 0x1000 the outermost frame; "lib1.so"
// maps [0x5000, 0x5100), its function at 0x5000 with CFA = rsp + 8 and
// the RA at CFA - 8. Each module's section holds only its own function.
func modulesImage(t *testing.T) *image.Image {
	t.Helper()
	enc := func(start, base uint64, rows ...sframe.Row) []byte {
		sec, err := sframe.Encode([]sframe.FDE{{Start: start, Size: 0x20, Rows: rows}},
			sframe.EncodeOptions{Version: 3, ABI: sframe.ABIAMD64LE, Base: base, PCRel: true, CFAFixedRA: -8})
		if err != nil {
			t.Fatal(err)
		}
		return sec
	}
	outermost := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 8}, RA: sframe.Rule{Kind: sframe.RuleUndefined}, FP: sframe.Rule{Kind: sframe.RuleSame}}
	callee := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleExpr, Reg: 7, Offset: 8}, RA: sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: -8, Deref: true}, FP: sframe.Rule{Kind: sframe.RuleSame}}
	return &image.Image{Target: target.X86_64, Modules: []image.Module{
		{Name: "exe", Start: 0x1000, End: 0x1100, SFrame: enc(0x1000, 0x1100, outermost), SFrameAddr: 0x1100},
		{Name: "lib1.so", Start: 0x5000, End: 0x5100, SFrame: enc(0x5000, 0x5100, callee), SFrameAddr: 0x5100},
	}}
}

// modulesSteps: step 1 in lib1.so, called from exe (two frames, each
// looked up in its own module's section); step 2 at a PC in no module.
func modulesSteps() []Step {
	mk := func(index int, pc uint64) Step {
		snap := &machine.Snapshot{StackAddr: 0x7ff8, Stack: []byte{0x05, 0x10, 0, 0, 0, 0, 0, 0}} // RA 0x1005
		snap.Regs.PC = pc
		snap.Regs.Set(target.RegX86SP, 0x7ff8)
		snap.Regs.Set(target.RegX86FP, 0xaaaa)
		return Step{Index: index, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	return []Step{mk(1, 0x5004), mk(2, 0x3000)}
}

func unwindAll(t *testing.T, c Consumer, steps []Step) []Result {
	t.Helper()
	out := make([]Result, len(steps))
	for i := range steps {
		if err := c.Unwind(steps[i:i+1], out[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// The builtin consumer looks each frame's PC up in the section of the
// module holding it: a backtrace crosses from lib1.so into exe, and a PC
// in no module has no information.
func TestBuiltinModules(t *testing.T) {
	t.Parallel()
	b := NewBuiltin()
	img := modulesImage(t)
	if err := b.Load(img); err != nil {
		t.Fatal(err)
	}
	got := unwindAll(t, b, modulesSteps())
	if r := got[0]; r.Err != nil || len(r.Frames) != 2 || r.Frames[1].PC != 0x1005 || !r.Frames[1].Outermost || r.Frames[0].CFA != 0x8000 {
		t.Errorf("across modules: %+v, %v", r.Frames, r.Err)
	}
	if r := got[1]; !errors.Is(r.Err, frame.ErrNoInfo) || !strings.Contains(r.Err.Error(), "no module") {
		t.Errorf("a PC in no module: %+v, %v", r.Frames, r.Err)
	}
	// Each section describes its own module only: swapped, no frame 0.
	img.Modules[0].SFrame, img.Modules[1].SFrame = img.Modules[1].SFrame, img.Modules[0].SFrame
	img.Modules[0].SFrameAddr, img.Modules[1].SFrameAddr = img.Modules[1].SFrameAddr, img.Modules[0].SFrameAddr
	if err := b.Load(img); err != nil {
		t.Fatal(err)
	}
	if r := unwindAll(t, b, modulesSteps()[:1])[0]; !errors.Is(r.Err, frame.ErrNoInfo) {
		t.Errorf("swapped sections: %+v, %v", r.Frames, r.Err)
	}
}

// Protocol version 2 carries the modules: an external consumer gets the
// results of the in-process one; a consumer of version 1 is still served
// one-section images and refuses a multi-module one with
// ErrModulesUnsupported, unwinding none of it.
func TestExecModules(t *testing.T) {
	t.Parallel()
	img := modulesImage(t)
	ref := NewBuiltin()
	if err := ref.Load(img); err != nil {
		t.Fatal(err)
	}
	want := unwindAll(t, ref, modulesSteps())

	e := NewExec("exec:test", serverCommand(t))
	defer e.Close()
	if err := e.Load(img); err != nil {
		t.Fatal(err)
	}
	if e.Protocol() != ProtocolVersion || !strings.Contains(strings.Join(e.LayoutsRead(), ","), "modules") {
		t.Errorf("protocol %d, layouts %v", e.Protocol(), e.LayoutsRead())
	}
	got := make([]Result, 2)
	if err := e.Unwind(modulesSteps(), got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !sameResult(got[i], want[i]) {
			t.Errorf("step %d: exec %+v (%v), in process %+v (%v)", i, got[i].Frames, got[i].Err, want[i].Frames, want[i].Err)
		}
	}

	old := NewExec("exec:v1", strings.Replace(serverCommand(t), "SFCONFORM_TEST_SERVE=1", "SFCONFORM_TEST_SERVE=v1", 1))
	defer old.Close()
	if err := old.Load(x86Image(t)); err != nil {
		t.Fatalf("a version 1 consumer refuses a one-section image: %v", err)
	}
	if old.Protocol() != 1 || strings.Contains(strings.Join(old.LayoutsRead(), ","), "modules") {
		t.Errorf("version 1 consumer: protocol %d, layouts %v", old.Protocol(), old.LayoutsRead())
	}
	err := old.Load(img)
	if !errors.Is(err, ErrModulesUnsupported) || !strings.Contains(err.Error(), "2 modules") {
		t.Errorf("a version 1 consumer given modules: %v", err)
	}
	if err := old.Load(x86Image(t)); err != nil {
		t.Errorf("after a refused multi-module image: %v", err)
	}
}

func sameResult(a, b Result) bool {
	if (a.Err == nil) != (b.Err == nil) || a.Err != nil && errors.Is(a.Err, frame.ErrNoInfo) != errors.Is(b.Err, frame.ErrNoInfo) || len(a.Frames) != len(b.Frames) {
		return false
	}
	for i := range a.Frames {
		if a.Frames[i] != b.Frames[i] {
			return false
		}
	}
	return true
}

// A version 1 session has no "modules" command; a version 2 one checks
// the module lines.
func TestServeModulesVersions(t *testing.T) {
	t.Parallel()
	var load bytes.Buffer
	w := newLineWriter(&load)
	if err := writeLoad(w, modulesImage(t), ProtocolModules); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		hello, body, want string
	}{
		{"1", load.String(), "this session speaks version 1"},
		{"2", "modules x86-64 1\nmodule exe 2000 1000 0 e2de\n", "empty code range"},
		{"2", "modules x86-64 1\nmodule exe 1000\n", "want \"module NAME START END ADDR HEXBYTES\""},
		{"2", "modules x86-64 0\n", "N \"0\""},
	} {
		var out bytes.Buffer
		err := Serve(strings.NewReader("hello "+ProtocolName+" "+c.hello+"\n"+c.body), &out, NewBuiltin())
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hello %s, %q: %v", c.hello, c.body, err)
		}
		if !strings.HasPrefix(out.String(), "hello "+ProtocolName+" "+c.hello+" builtin\n") {
			t.Errorf("hello %s answered %q", c.hello, out.String())
		}
	}
	var load3 bytes.Buffer
	if err := writeLoad(newLineWriter(&load3), modulesImage(t), ProtocolVersion); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Serve(strings.NewReader("hello "+ProtocolName+" 7\n"+load3.String()+"quit\n"), &out, NewBuiltin()); err != nil || out.String() != fmt.Sprintf("hello %s %d builtin\nok\n", ProtocolName, ProtocolVersion) {
		t.Errorf("version 7 offered: %q, %v", out.String(), err)
	}
}

// A dumper prints each module's section on its own, and its rows unwind
// each PC in its own module: the builtin consumer's results.
func TestDumpersModules(t *testing.T) {
	t.Parallel()
	img := modulesImage(t)
	ref := NewBuiltin()
	if err := ref.Load(img); err != nil {
		t.Fatal(err)
	}
	want := unwindAll(t, ref, modulesSteps())
	n := 0
	for _, d := range dumperConsumers(t) {
		if d.Supports(target.X86_64, 3) != nil {
			continue
		}
		n++
		if err := d.Load(img); err != nil {
			t.Errorf("%s: %v", d.Name(), err)
			continue
		}
		if !strings.Contains(string(d.Output()), "=== module lib1.so [0x5000, 0x5100)") {
			t.Errorf("%s: output does not name the modules:\n%s", d.Name(), d.Output())
		}
		got := unwindAll(t, d, modulesSteps())
		for i := range want {
			if !sameResult(got[i], want[i]) {
				t.Errorf("%s step %d: %+v (%v), builtin %+v (%v)", d.Name(), i, got[i].Frames, got[i].Err, want[i].Frames, want[i].Err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no dumper reads SFrame v3 of x86-64")
	}
}
