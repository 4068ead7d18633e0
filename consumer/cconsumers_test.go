package consumer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// builtC makes a C consumer, or ends the test as testenv says when setup
// has not built it.
func builtC(t *testing.T, mk func() (Consumer, error)) Consumer {
	t.Helper()
	c, err := mk()
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newLibsframeConsumer() (Consumer, error) { return NewLibsframe() }

// Rules used to build the rows of the differential tables.
var (
	undefined = sframe.Rule{Kind: sframe.RuleUndefined}
	same      = sframe.Rule{Kind: sframe.RuleSame}
)

func reg(r int, off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: r, Offset: off}
}
func regDeref(r int, off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: r, Offset: off, Deref: true}
}
func atCFA(off int64) sframe.Rule { return regDeref(sframe.RegCFA, off) }

// candidateRows are the rows the differential test tries on a target: the
// usual prologue and epilogue states, an outermost row, and rows only
// some versions can write (a mangled RA, an RA or FP kept in a register,
// a CFA based on another register or loaded from memory). Rows the
// version cannot express are left out by Encode's refusal.
func candidateRows(t target.Target) []sframe.Row {
	sp, fp := t.SP(), t.FP()
	rows := []sframe.Row{{RA: undefined, CFA: undefined, FP: undefined}}
	switch t {
	case target.X86_64:
		rows = append(rows,
			sframe.Row{CFA: reg(sp, 8), RA: atCFA(-8), FP: same},
			sframe.Row{CFA: reg(sp, 16), RA: atCFA(-8), FP: atCFA(-16)},
			sframe.Row{CFA: reg(fp, 16), RA: atCFA(-8), FP: atCFA(-16)},
			sframe.Row{CFA: reg(sp, 0x1008), RA: atCFA(-8), FP: same},
			sframe.Row{CFA: regDeref(10, -8), RA: atCFA(-8), FP: atCFA(-16)}, // DRAP
			sframe.Row{CFA: reg(10, 16), RA: atCFA(-8), FP: same},
			sframe.Row{CFA: reg(fp, 16), RA: atCFA(-8), FP: regDeref(fp, 0)},
		)
	case target.AArch64, target.AArch64BE:
		rows = append(rows,
			sframe.Row{CFA: reg(sp, 0), RA: same, FP: same},
			sframe.Row{CFA: reg(sp, 32), RA: same, FP: same},
			sframe.Row{CFA: reg(sp, 32), RA: atCFA(-24), FP: atCFA(-32)},
			sframe.Row{CFA: reg(fp, 16), RA: atCFA(-8), FP: atCFA(-16)},
			sframe.Row{CFA: reg(fp, 16), RA: atCFA(-8), FP: atCFA(-16), MangledRA: true},
			sframe.Row{CFA: reg(sp, 0), RA: same, FP: same, MangledRA: true},
			sframe.Row{CFA: reg(12, 16), RA: atCFA(-8), FP: atCFA(-16)},
			sframe.Row{CFA: regDeref(12, 8), RA: atCFA(-8), FP: atCFA(-16)},
		)
	case target.S390X:
		rows = append(rows,
			sframe.Row{CFA: reg(sp, 160), RA: same, FP: same},
			sframe.Row{CFA: reg(sp, 320), RA: atCFA(-48), FP: atCFA(-72)},
			sframe.Row{CFA: reg(sp, 320), RA: atCFA(-48), FP: same},
			sframe.Row{CFA: reg(sp, 320), RA: same, FP: atCFA(-72)},
			sframe.Row{CFA: reg(fp, 320), RA: atCFA(-48), FP: atCFA(-72)},
			sframe.Row{CFA: reg(sp, 160), RA: reg(24, 0), FP: reg(25, 0)}, // RA and FP in FPRs
			sframe.Row{CFA: reg(sp, 320), RA: atCFA(-48), FP: reg(1, 0)},
			sframe.Row{CFA: reg(9, 160), RA: atCFA(-48), FP: atCFA(-72)},
		)
	}
	return rows
}

// diffTable is a section of several functions for target t, each with a
// random run of candidate rows, at 0x10000000.
func diffTable(t *testing.T, tg target.Target, v sframe.Version, rnd *rand.Rand) (*image.Image, []sframe.FDE) {
	t.Helper()
	abi := sframe.ABI(tg)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(abi)
	opt := sframe.EncodeOptions{Version: v, ABI: abi, Base: 0x10100000, PCRel: true, CFAFixedFP: fixedFP, CFAFixedRA: fixedRA}
	cands := candidateRows(tg)
	var fdes []sframe.FDE
	start := uint64(0x10000000)
	for fn := 0; fn < 12; fn++ {
		fde := sframe.FDE{Start: start, Size: 0x40}
		n := 1 + rnd.Intn(4)
		for i := 0; i < n; i++ {
			row := cands[rnd.Intn(len(cands))]
			if fn == 0 && i == 0 {
				row = cands[0] // the entry function starts outermost
			}
			row.Start = uint32(i * 0x10)
			try := fde
			try.Rows = append(append([]sframe.Row(nil), fde.Rows...), row)
			try.Type = sframe.ChooseFDEType(&try, opt)
			if _, err := sframe.Encode([]sframe.FDE{try}, opt); err != nil {
				continue // this version cannot express the row
			}
			fde = try
		}
		if len(fde.Rows) == 0 {
			continue
		}
		fdes = append(fdes, fde)
		start += 0x40
		if fn%5 == 4 {
			start += 0x40 // a gap no FDE covers
		}
	}
	sec, err := sframe.Encode(fdes, opt)
	if err != nil {
		t.Fatal(err)
	}
	return &image.Image{Target: tg, SFrame: sec, SFrameAddr: opt.Base, SFrameVersion: int(v)}, fdes
}

// diffSteps makes machine states for the table: a PC at some row (or in a
// gap), registers pointing into a stack whose words are return addresses
// into the table's functions (just past a row's start, or right at a
// function's end) and stack addresses, so walks go several frames deep.
func diffSteps(tg target.Target, fdes []sframe.FDE, n int, rnd *rand.Rand) []Step {
	const stackAddr, stackLen = 0x70000000, 0x2000
	order := tg.ByteOrder()
	code := func() uint64 {
		f := fdes[rnd.Intn(len(fdes))]
		switch rnd.Intn(4) {
		case 0:
			return f.Start + uint64(f.Size) // a call as the function's last instruction
		case 1:
			return f.Start + uint64(f.Size) + 0x40 // maybe a gap
		}
		r := f.Rows[rnd.Intn(len(f.Rows))]
		return f.Start + uint64(r.Start) + uint64(1+rnd.Intn(8))
	}
	word := func() uint64 {
		switch rnd.Intn(8) {
		case 0, 1, 2:
			return code()
		case 3:
			return code() | 0x002a000000000000 // a pointer authentication code
		case 4:
			return 0
		}
		return stackAddr + uint64(rnd.Intn(stackLen))&^7
	}
	steps := make([]Step, n)
	for i := range steps {
		snap := &machine.Snapshot{StackAddr: stackAddr, Stack: make([]byte, stackLen), BigEndian: order == binary.BigEndian}
		for off := 0; off < stackLen; off += 8 {
			order.PutUint64(snap.Stack[off:], word())
		}
		snap.Regs.PC = code() - uint64(rnd.Intn(2))
		for r := 0; r < 32; r++ {
			snap.Regs.Set(r, word())
		}
		snap.Regs.Set(tg.SP(), stackAddr+0x100+uint64(rnd.Intn(0x400))&^7)
		snap.Regs.Set(tg.FP(), snap.Regs.Regs[tg.SP()]+uint64(rnd.Intn(0x200))&^7)
		steps[i] = Step{Index: i, Regs: &snap.Regs, Mem: snap, Snapshot: snap}
	}
	return steps
}

func errKind(err error) string {
	switch {
	case err == nil:
		return "complete"
	case errors.Is(err, frame.ErrNoInfo):
		return "noinfo"
	}
	return "failed"
}

// compareWithBuiltin runs steps through c and through the builtin
// consumer and reports every step where the frames or the kind of stop
// differ. skip, when not nil, says which differences are declared
// behaviour of c (and returns why), so that they are counted, not failed.
func compareWithBuiltin(t *testing.T, c Consumer, img *image.Image, steps []Step, skip func(want, got Result) string) (same int, declared map[string]int) {
	t.Helper()
	ref := NewBuiltin()
	if err := ref.Load(img); err != nil {
		t.Fatal(err)
	}
	if err := c.Load(img); err != nil {
		t.Fatalf("load: %v", err)
	}
	got := make([]Result, len(steps))
	if err := c.Unwind(steps, got); err != nil {
		t.Fatalf("unwind: %v", err)
	}
	declared = map[string]int{}
	bad := 0
	for i := range steps {
		want := make([]Result, 1)
		if err := ref.Unwind(steps[i:i+1], want); err != nil {
			t.Fatal(err)
		}
		w, g := want[0], got[i]
		if fmt.Sprint(w.Frames) == fmt.Sprint(g.Frames) && errKind(w.Err) == errKind(g.Err) {
			same++
			continue
		}
		if skip != nil {
			if why := skip(w, g); why != "" {
				declared[why]++
				continue
			}
		}
		if bad++; bad <= 5 {
			t.Errorf("step %d, pc %#x: builtin %s %v (%v)\n  %s %s %v (%v)", i, steps[i].Regs.PC,
				errKind(w.Err), w.Frames, w.Err, c.Name(), errKind(g.Err), g.Frames, g.Err)
		}
	}
	if bad > 5 {
		t.Errorf("... %d steps differ in all", bad)
	}
	return same, declared
}

// testSeed is the differential tests' seed, logged, and taken from
// SFCONFORM_SEED to replay.
func testSeed(t *testing.T) int64 {
	t.Helper()
	return int64(testenv.Seed(t, 1))
}

// libsframe, walked by our C code, unwinds every state as the builtin
// unwinder does: the same frames and the same kind of stop, over rows of
// every kind each target and version can express (DEFAULT and FLEX FDEs,
// mangled RAs, registers holding the RA or FP).
func TestLibsframeAgreesWithBuiltin(t *testing.T) {
	t.Parallel()
	c := builtC(t, newLibsframeConsumer)
	seed := testSeed(t)
	declared := map[string]int{}
	defer func() {
		for why, n := range declared {
			t.Logf("declared difference, %d states: %s", n, why)
		}
	}()
	for _, tg := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			rnd := rand.New(rand.NewSource(seed + int64(tg)*10 + int64(v)))
			total, same, flex, mangled, regRA := 0, 0, 0, 0, 0
			for table := 0; table < 20; table++ {
				img, fdes := diffTable(t, tg, v, rnd)
				for _, f := range fdes {
					if f.Type == sframe.FDETypeFlex {
						flex++
					}
					for _, r := range f.Rows {
						if r.MangledRA {
							mangled++
						}
						if r.RA.Kind == sframe.RuleExpr && r.RA.Reg != sframe.RegCFA {
							regRA++
						}
					}
				}
				steps := diffSteps(tg, fdes, 100, rnd)
				s, d := compareWithBuiltin(t, c, img, steps, farPC(img))
				total, same = total+len(steps), same+s
				for why, n := range d {
					declared[why] += n
				}
			}
			t.Logf("%s v%d: %d of %d states unwound alike (%d FLEX FDEs, %d mangled-RA rows, %d RA-in-register rows)", tg, v, same, total, flex, mangled, regRA)
			// The rows the default program mix lacks must be here.
			if v == 3 && flex == 0 {
				t.Errorf("%s v3: no FLEX FDE among the tables", tg)
			}
			if tg.HasLinkRegister() && tg != target.S390X && mangled == 0 {
				t.Errorf("%s v%d: no mangled-RA row among the tables", tg, v)
			}
			if tg == target.S390X && regRA == 0 {
				t.Errorf("%s v%d: no RA-in-register row among the tables", tg, v)
			}
		}
	}
}

// farPC recognises the one known difference of libsframe: sframe_find_fre
// compares a PC's distance from a function start truncated to 32 bits, so a
// PC 4 GiB or more past a function (a return address with a pointer
// authentication code, garbage) gets an FRE of that function where the
// builtin unwinder finds no FDE (TestLibsframeTruncatesPCDistance).
func farPC(img *image.Image) func(want, got Result) string {
	return func(want, got Result) string {
		k := len(want.Frames) - 1
		if !errors.Is(want.Err, frame.ErrNoInfo) || k < 0 || len(got.Frames) <= k {
			return ""
		}
		lookup := want.Frames[k].PC
		if k > 0 {
			lookup--
		}
		if rel := int64(lookup - img.SFrameAddr); rel < 1<<32 {
			return ""
		}
		if fmt.Sprint(want.Frames[:k]) != fmt.Sprint(got.Frames[:k]) || got.Frames[k].PC != want.Frames[k].PC {
			return ""
		}
		return "libsframe finds an FRE for a PC 4 GiB or more past a function start"
	}
}

// libsframe 2.47 compares (uint32_t)(pc - start) with the function size,
// so a PC 2^32 bytes past a function is taken for a PC inside it. When
// this test fails, libsframe has stopped doing so: drop farPC.
func TestLibsframeTruncatesPCDistance(t *testing.T) {
	t.Parallel()
	c := builtC(t, newLibsframeConsumer)
	for _, v := range []sframe.Version{2, 3} {
		fdes := []sframe.FDE{{Start: 0x10000000, Size: 0x40, Rows: []sframe.Row{
			{CFA: reg(target.RegX86SP, 8), RA: atCFA(-8), FP: same},
		}}}
		opt := sframe.EncodeOptions{Version: v, ABI: sframe.ABIAMD64LE, Base: 0x10001000, PCRel: true, CFAFixedRA: -8}
		sec, err := sframe.Encode(fdes, opt)
		if err != nil {
			t.Fatal(err)
		}
		img := &image.Image{Target: target.X86_64, SFrame: sec, SFrameAddr: opt.Base}
		snap := &machine.Snapshot{StackAddr: 0x70000000, Stack: make([]byte, 64)}
		snap.Regs.PC = 0x10000000 + 1<<32 + 4
		snap.Regs.Set(target.RegX86SP, 0x70000000)
		snap.Regs.Set(target.RegX86FP, 0)
		steps := []Step{{Regs: &snap.Regs, Mem: snap, Snapshot: snap}}
		if err := c.Load(img); err != nil {
			t.Fatal(err)
		}
		out := make([]Result, 1)
		if err := c.Unwind(steps, out); err != nil {
			t.Fatal(err)
		}
		// The builtin unwinder: noinfo at frame 0.
		if len(out[0].Frames) == 1 && errors.Is(out[0].Err, frame.ErrNoInfo) {
			t.Errorf("v%d: pc %#x, 4 GiB past the only function: libsframe finds no FRE any more (%v): drop farPC", v, snap.Regs.PC, out[0].Err)
		} else {
			t.Logf("v%d: pc %#x: libsframe found an FRE: %v, %v", v, snap.Regs.PC, out[0].Frames, out[0].Err)
		}
	}
}

func TestLibsframeSupports(t *testing.T) {
	t.Parallel()
	c := builtC(t, newLibsframeConsumer)
	for _, tg := range target.All {
		if err := c.Supports(tg, 1); err == nil {
			t.Errorf("%s: libsframe claims SFrame v1", tg)
		} else if want := "refuses SFrame version 1"; !strings.Contains(err.Error(), want) {
			t.Errorf("%s v1: reason %q does not say %q", tg, err, want)
		}
		for v := 2; v <= 3; v++ {
			if err := c.Supports(tg, v); err != nil {
				t.Errorf("%s v%d: %v", tg, v, err)
			}
		}
	}
}

// libsframe trusts a native-endian section: an FDE count far beyond the
// section's end makes sframe_decode read past it and crash. The crash is
// the consumer's ERROR, reported with the signal and what libsframe was
// asked; the restarted consumer loads the next section.
func TestLibsframeCrashIsReported(t *testing.T) {
	t.Parallel()
	c := builtC(t, newLibsframeConsumer)
	good := x86Image(t)
	bad := *good
	bad.SFrame = append([]byte(nil), good.SFrame...)
	binary.LittleEndian.PutUint32(bad.SFrame[8:], 1<<28) // num_fdes
	err := c.Load(&bad)
	if err == nil {
		t.Fatal("libsframe took a section with 2^28 FDEs in a few bytes")
	}
	for _, want := range []string{"killed by signal 11, segmentation fault", "fatal signal 11 (SEGV)", "in sframe_decode of the section"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash report %q does not say %q", err, want)
		}
	}
	t.Logf("crash: %v", err)
	if err := c.Load(good); err != nil {
		t.Fatalf("the restarted consumer refuses a good section: %v", err)
	}
	out := make([]Result, 1)
	if err := c.Unwind(protocolSteps()[:1], out); err != nil || len(out[0].Frames) != 2 {
		t.Fatalf("after the restart: %v, %v", err, out[0].Frames)
	}
}

// A section libsframe rejects is refused, with libsframe's reason; the
// process lives on.
func TestLibsframeRefuses(t *testing.T) {
	t.Parallel()
	c := builtC(t, newLibsframeConsumer)
	good := x86Image(t)
	for name, edit := range map[string]func([]byte){
		"version 1":    func(b []byte) { b[2] = 1 },
		"bad magic":    func(b []byte) { b[0] = 0 },
		"unknown flag": func(b []byte) { b[3] |= 0x80 },
		"wrong ABI":    func(b []byte) { b[4] = byte(sframe.ABIAArch64LE) },
	} {
		bad := *good
		bad.SFrame = append([]byte(nil), good.SFrame...)
		edit(bad.SFrame)
		err := c.Load(&bad)
		var x *execError
		if err == nil || errors.As(err, &x) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}

func newGlibcConsumer() (Consumer, error) { return NewGlibc(false) }

// glibc reads SFrame v2 in the host's byte order only.
func TestGlibcSupports(t *testing.T) {
	t.Parallel()
	c := builtC(t, newGlibcConsumer)
	for _, tg := range target.All {
		for v := 1; v <= 3; v++ {
			err := c.Supports(tg, v)
			want := v == 2 && tg.ByteOrder() == binary.LittleEndian
			if want != (err == nil) {
				t.Errorf("%s v%d: %v, want supported %v", tg, v, err, want)
			}
		}
	}
}

// glibc reads the section and the stack at their emulated addresses: a
// range the consumer process already uses is refused, naming the mapping
// that holds it (here the stack copy of the step before); the next load
// works.
func TestGlibcRefusesATakenAddress(t *testing.T) {
	t.Parallel()
	c := builtC(t, newGlibcConsumer)
	good := diffImageV2(t)
	if err := c.Load(good); err != nil {
		t.Fatal(err)
	}
	snap := &machine.Snapshot{StackAddr: 0x70000000, Stack: make([]byte, 64)}
	snap.Regs.PC = 0x10000004
	snap.Regs.Set(target.RegX86SP, 0x70000000)
	out := make([]Result, 1)
	if err := c.Unwind([]Step{{Regs: &snap.Regs, Mem: snap, Snapshot: snap}}, out); err != nil {
		t.Fatal(err)
	}
	taken := *good
	taken.SFrameAddr = 0x70000100
	err := c.Load(&taken)
	var x *execError
	if err == nil || errors.As(err, &x) || !strings.Contains(err.Error(), "cannot map [0x70000000, 0x70001000) at its emulated address") ||
		!strings.Contains(err.Error(), "held by: 70000000-70001000") {
		t.Fatalf("section over the stack copy: %v, want a refusal naming the range and its holder", err)
	}
	t.Logf("refused: %v", err)
	if err := c.Load(good); err != nil {
		t.Fatalf("the next load: %v", err)
	}
}

// diffImageV2 is a small x86-64 v2 section, PCREL as gas 2.45 writes it.
func diffImageV2(t *testing.T) *image.Image {
	t.Helper()
	img, _ := diffTable(t, target.X86_64, 2, rand.New(rand.NewSource(1)))
	return img
}

// The C protocol decodes a step's stack copy byte for byte, every hex
// digit (a table since the copy became most of a C consumer's input), and
// a digit that is not hex is a protocol error, not a byte: the session of
// docs/consumer-protocol.md's example, with the return address spelled in
// all sixteen digits.
func TestCProtocolStackHex(t *testing.T) {
	t.Parallel()
	a, _ := Lookup("libsframe")
	b, err := builtBinary(a.Kind, "libsframe", "sfconform-libsframe", a.Setup)
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	session := func(stack string) (string, error) {
		cmd := exec.Command(b.bin)
		cmd.Stdin = strings.NewReader("hello sfconform-unwind 3\n" +
			"load x86-64 4000 e2de03050300f8000100000001000000080000000000000010000000e4cfffffffffffff20000000000000000100000000000308\n" +
			"code 1\ntext 1000 90909090909090909090909090909090909090909090909090909090909090c3\n" +
			"unwind 1\nstep 3 pc=1004 6=aaaa 7=7ff8 stack=7ff8:" + stack + "\nquit\n")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := session("efcdab8967452301")
	if err != nil || !strings.Contains(out, "\nframe pc=123456789abcdef sp=8000 fp=aaaa") {
		t.Errorf("return address 0x0123456789abcdef: %v\n%s", err, out)
	}
	for _, bad := range []string{"efcdab89674523g1", "efcdab8967452 01", "efcdab896745230"} {
		out, err := session(bad)
		if err == nil || !strings.Contains(out, "stack") || strings.Contains(out, "\nresult") {
			t.Errorf("stack %q: %v, want a protocol error\n%s", bad, err, out)
		}
	}
}

// Version 4 in the C protocol: a stack copy sent as differences from the
// step before is the copy the consumer unwinds, across batches, and one
// that leaves a byte to nothing, or comes with no copy held, is a
// protocol error. The protocol example's section: frame 1's PC is the
// return address the copy holds at 0x7ff8.
func TestCProtocolStackDiff(t *testing.T) {
	t.Parallel()
	a, _ := Lookup("libsframe")
	b, err := builtBinary(a.Kind, "libsframe", "sfconform-libsframe", a.Setup)
	testenv.IfNotProvisioned(t, err)
	if err != nil {
		t.Fatal(err)
	}
	const load = "load x86-64 4000 e2de03050300f8000100000001000000080000000000000010000000e4cfffffffffffff20000000000000000100000000000308\n" +
		"code 1\ntext 1000 90909090909090909090909090909090909090909090909090909090909090c3\n"
	session := func(steps ...string) (string, error) {
		in := "hello sfconform-unwind 4\n" + load
		for _, s := range steps {
			in += s + "\n"
		}
		cmd := exec.Command(b.bin)
		cmd.Stdin = strings.NewReader(in + "quit\n")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	ras := func(out string) []string {
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[0] == "frame" && f[2] == "sp=8000" {
				got = append(got, f[1])
			}
		}
		return got
	}
	out, err := session("unwind 3",
		"step 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:1111111111111111",
		"step 2 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8",                            // the same copy
		"step 3 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff0:10:0:0000000000000000:9:2233", // a word below, two bytes changed
		"unwind 1", "step 4 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8:7:44", // the next batch
		"load x86-64 4000 e2de03050300f8000100000001000000080000000000000010000000e4cfffffffffffff20000000000000000100000000000308",
		"code 1", "text 1000 90909090909090909090909090909090909090909090909090909090909090c3",
		"unwind 1", "step 5 pc=1004 6=aaaa 7=7ff8 stack=7ff8:5555555555555555") // whole after a load
	want := []string{"pc=1111111111111111", "pc=1111111111111111", "pc=1111111111332211", "pc=4411111111332211", "pc=5555555555555555"}
	if got := ras(out); err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("return addresses %v, want %v (%v)\n%s", got, want, err, out)
	}
	for name, steps := range map[string][]string{
		"a byte to nothing":   {"unwind 2", "step 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:1111111111111111", "step 2 pc=1004 6=aaaa 7=7ff0 stackdiff=7ff0:10:0:00000000000000"},
		"no copy held":        {"unwind 1", "step 1 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8:0:1111111111111111"},
		"overlapping patches": {"unwind 2", "step 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:1111111111111111", "step 2 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8:2:0000:3:00"},
		"a patch past LEN":    {"unwind 2", "step 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:1111111111111111", "step 2 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8:6:000000"},
		"a patch not hex":     {"unwind 2", "step 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:1111111111111111", "step 2 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:8:6:0x"},
	} {
		out, err := session(steps...)
		if err == nil || !strings.Contains(out, "stackdiff") || strings.Count(out, "\nresult") >= len(steps)-1 {
			t.Errorf("%s: %v, want a protocol error on the stackdiff= step\n%s", name, err, out)
		}
	}
	// A version 3 session has no stackdiff=.
	out, err = session("unwind 1", "step 1 pc=1004 6=aaaa 7=7ff8 stackdiff=7ff8:0")
	if !strings.Contains(out, "hello sfconform-unwind 4") {
		t.Errorf("the consumer does not speak version 4:\n%s", out)
	}
	cmd := exec.Command(b.bin)
	cmd.Stdin = strings.NewReader("hello sfconform-unwind 3\n" + load + "unwind 1\nstep 1 pc=1004 6=aaaa 7=7ff8 stack=7ff8:0000000000000000 stackdiff=7ff8:8:0:1111111111111111\nquit\n")
	if out, err := cmd.CombinedOutput(); err == nil || strings.Contains(string(out), "\nresult") {
		t.Errorf("stackdiff= in a version 3 session: %v\n%s", err, out)
	}
}
