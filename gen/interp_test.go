package gen_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"

	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// This file checks gen's rows without using them as expected values: a
// small interpreter executes the program from the disassembler's text (not
// gen's), records the truth at every function entry (CFA, return address,
// caller's FP) as the target ABI defines it, and at every executed
// instruction evaluates gen's row against the machine state.

type machine struct {
	abi   target.Target
	reg   map[string]uint64
	mem   map[uint64]uint64
	zf    bool // x86 ZF, AArch64 Z, s390x CC == 0
	pc    uint64
	steps int
}

type truth struct {
	fn          *gen.Func
	cfa, ra, fp uint64
	tails       int          // tail calls in a row that led to fn
	sig         *interrupted // a signal trampoline's truth (interp_signal_test.go)
}

const stackTop = 0x7fff_0000

// AltStackGuard is how far below a fresh stack an SP counts as having run
// off it rather than having moved elsewhere.
const AltStackGuard = gen.AltStackSize

var (
	hexNum   = regexp.MustCompile(`^-?(0x[0-9a-fA-F]+|[0-9]+)$`)
	memRef   = regexp.MustCompile(`^(-?(?:0x[0-9a-f]+|[0-9]+))?\(%(\w+)\)$`)
	arm64Mem = regexp.MustCompile(`^\[(\w+)(?:,#(-?\w+))?\](!?)(?:,#(-?\w+))?$`)
)

func num(s string) uint64 {
	s = strings.TrimLeft(s, "$#")
	if !hexNum.MatchString(s) {
		panic(fmt.Sprintf("not a number: %q", s))
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var v uint64
	var err error
	if strings.HasPrefix(s, "0x") {
		v, err = strconv.ParseUint(s[2:], 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		panic(err)
	}
	if neg {
		return -v
	}
	return v
}

var amd64Wide = map[string]string{"eax": "rax", "ebx": "rbx", "ecx": "rcx", "edx": "rdx", "esi": "rsi", "edi": "rdi", "ebp": "rbp", "esp": "rsp"}

// amd64Reg returns the 64-bit register an operand names and whether the
// operand is its 32-bit half.
func amd64Reg(op string) (string, bool) {
	r := strings.TrimPrefix(op, "%")
	if w, ok := amd64Wide[r]; ok {
		return w, true
	}
	if strings.HasSuffix(r, "d") && strings.HasPrefix(r, "r") {
		return strings.TrimSuffix(r, "d"), true
	}
	return r, false
}

func (m *machine) spName() string {
	switch m.abi {
	case target.X86_64:
		return "rsp"
	case target.S390X:
		return "r15"
	}
	return "sp"
}

func (m *machine) fpName() string {
	switch m.abi {
	case target.X86_64:
		return "rbp"
	case target.S390X:
		return "r11"
	}
	return "x29"
}

func dwarfName(abi target.Target, r int) string {
	switch abi {
	case target.X86_64:
		return map[int]string{0: "rax", 1: "rdx", 2: "rcx", 3: "rbx", 4: "rsi", 5: "rdi", 6: "rbp", 7: "rsp",
			8: "r8", 9: "r9", 10: "r10", 11: "r11", 12: "r12", 13: "r13", 14: "r14", 15: "r15"}[r]
	case target.S390X:
		return s390xDwarfName(r)
	}
	if r == 31 {
		return "sp"
	}
	return fmt.Sprintf("x%d", r)
}

// control is what an instruction did to the flow of execution.
type control int

const (
	ctlNext control = iota
	ctlJump
	ctlCall
	ctlRet
	ctlHalt
)

// step executes one instruction given as text; it returns the control
// effect and, for jumps and calls, the target.
func (m *machine) step(text string, next uint64) (control, uint64) {
	mn, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	ops := strings.Split(strings.ReplaceAll(rest, " ", ""), ",")
	switch m.abi {
	case target.X86_64:
		return m.stepAMD64(mn, ops, next)
	case target.S390X:
		return m.stepS390X(mn, ops, next)
	}
	return m.stepARM64(mn, strings.ReplaceAll(rest, " ", ""), ops, next)
}

func (m *machine) push(v uint64) {
	m.reg["rsp"] -= 8
	m.mem[m.reg["rsp"]] = v
}

func (m *machine) pop() uint64 {
	v := m.mem[m.reg["rsp"]]
	m.reg["rsp"] += 8
	return v
}

// entryTruth is the frame a function entered at this moment has, by the
// ABI: x86-64 CFA = SP + 8 with the RA on the stack; AArch64 CFA = SP with
// the RA in x30; s390x CFA = SP + 160 with the RA in r14.
func (m *machine) entryTruth(f *gen.Func) truth {
	switch m.abi {
	case target.X86_64:
		return truth{f, m.reg["rsp"] + 8, m.mem[m.reg["rsp"]], m.reg["rbp"], 0, nil}
	case target.S390X:
		return truth{f, m.reg["r15"] + 160, m.reg["r14"], m.reg["r11"], 0, nil}
	}
	return truth{f, m.reg["sp"], m.reg["x30"], m.reg["x29"], 0, nil}
}

func (m *machine) raName() string {
	if m.abi == target.S390X {
		return "r14"
	}
	return "x30"
}

// eval applies one rule; ok is false when the rule cannot give a value.
func (m *machine) eval(r sframe.Rule, cfa uint64, same string) (uint64, bool) {
	switch r.Kind {
	case sframe.RuleSame:
		if same == "" {
			return 0, false
		}
		return m.reg[same], true
	case sframe.RuleExpr:
		base := cfa
		if r.Reg != sframe.RegCFA {
			base = m.reg[dwarfName(m.abi, r.Reg)]
		}
		a := base + uint64(r.Offset)
		if !r.Deref {
			return a, true
		}
		v, ok := m.mem[a]
		return v, ok
	}
	return 0, false
}

type runStats struct {
	steps, maxDepth int
	minSP           uint64 // the lowest SP the run reached
	signalSteps     int    // in a signal handler or trampoline, not in steps
	// maxTails is the longest run of tail calls; tailsFrom counts tail
	// calls by the pattern that made them, tailsInto by the callee's.
	maxTails             int
	tailsFrom, tailsInto map[string]int
	// switched: a function moved to a fresh stack and ended the run
	// from there, so the depth chain may be cut short; so may a run that
	// ended in a signal handler's callee (inSignal).
	switched, inSignal bool
}

// freshStack reports whether sp lies in one of p's declared stacks, (Addr,
// End], and that stack holds no CFA of the active frames: the running
// function switched to a fresh stack and is the outermost frame now.
func freshStack(p *gen.Program, sp uint64, active []truth) bool {
	for _, s := range p.Stacks() {
		if sp <= s.Addr || sp > s.End() {
			continue
		}
		for _, a := range active {
			if a.cfa > s.Addr && a.cfa <= s.End() {
				return false
			}
		}
		return true
	}
	return false
}

// run executes p and checks every row; it returns execution statistics.
func run(t *testing.T, p *gen.Program, args []uint64) runStats {
	t.Helper()
	m := &machine{abi: p.Target, reg: map[string]uint64{}, mem: map[uint64]uint64{}, pc: p.Entry}
	// A misaligned start: the stub must align the stack itself.
	m.reg[m.spName()] = stackTop - 0x24
	for i, r := range p.ArgRegs {
		m.reg[dwarfName(p.Target, r)] = args[i]
	}
	starts := map[uint64]*gen.Func{}
	type at struct {
		f  *gen.Func
		in gen.Insn
	}
	insns := map[uint64]at{}
	type dis struct {
		text string
		n    int
	}
	decoded := map[uint64]dis{}
	for _, f := range p.Funcs {
		starts[f.Addr] = f
		for _, in := range f.Insns {
			insns[f.Addr+uint64(in.Off)] = at{f, in}
		}
	}
	var stack []truth
	st := runStats{minSP: m.reg[m.spName()], tailsFrom: map[string]int{}, tailsInto: map[string]int{}}
	var fresh image.Symbol // the fresh stack SP moved to last
	sig := pathSignal(p, args)
	raSame := ""
	if p.Target != target.X86_64 {
		raSame = m.raName()
	}
	var last control // how the previous instruction left
	for {
		// A run stops when the PC reaches the exit, before executing it:
		// the root returned to the entry stub, or a function that never
		// returns jumped there.
		if m.pc == p.Exit {
			// A jump gets there from a function that never returns (frames
			// live) or from one that moved to a fresh stack (the outermost
			// frame now); a return, from the root.
			if (last == ctlRet && len(stack) != 0) || (last == ctlJump && len(stack) == 0 && !st.switched) || (last != ctlRet && last != ctlJump) {
				t.Fatalf("%s seed %d: reached the exit with %d frames, after control %d", p.Target.Name(), p.Seed, len(stack), last)
			}
			for _, tr := range stack {
				st.inSignal = st.inSignal || tr.sig != nil
			}
			st.steps = m.steps - st.signalSteps
			return st
		}
		if m.steps++; m.steps > 100000 {
			t.Fatalf("%s seed %d: more than 100000 steps: runaway", p.Target.Name(), p.Seed)
		}
		if stack = m.deliver(p, sig, stack); callDepth(stack) < len(stack) {
			st.signalSteps++
		}
		d, ok := decoded[m.pc]
		if !ok {
			text, n, err := disasm.Instruction(p.Target, p.CodeAt(m.pc), m.pc)
			if err != nil {
				t.Fatal(err)
			}
			d = dis{text, n}
			decoded[m.pc] = d
		}
		text, n := d.text, d.n
		cur, ok := insns[m.pc]
		if !ok {
			t.Fatalf("%s seed %d: pc 0x%x is not the start of any instruction gen made", p.Target.Name(), p.Seed, m.pc)
		}
		f, in := cur.f, cur.in
		pc := m.pc // the step below moves m.pc before a failure message reads it
		where := lazy(func() string {
			return fmt.Sprintf("%s seed %d: %s+0x%x %q (gen %q)", p.Target.Name(), p.Seed, f.Name, pc-f.Addr, text, in.Text)
		})
		if len(stack) == 0 {
			if in.Row.RA.Kind != sframe.RuleUndefined || in.Row.CFA.Kind != sframe.RuleUndefined {
				t.Fatalf("%s: a row of the outermost frame (the entry stub, or a function on its fresh stack) is not outermost: %+v", where, in.Row)
			}
		} else if top := stack[len(stack)-1]; top.sig != nil {
			if top.fn != f {
				t.Fatalf("%s: executing outside the signal trampoline %s", where, top.fn.Name)
			}
			checkSignalRow(t, m, where, in.Row, top.sig)
		} else {
			top := stack[len(stack)-1]
			if in.Row.Signal {
				t.Fatalf("%s: a signal frame's row outside the signal trampoline", where)
			}
			if top.fn != f && top.fn.Name != f.PartOf {
				t.Fatalf("%s: executing outside the current function %s", where, top.fn.Name)
			}
			row := in.Row
			if row.CFA.Kind != sframe.RuleExpr || row.CFA.Reg == sframe.RegCFA {
				t.Fatalf("%s: CFA rule %+v has no base register", where, row.CFA)
			}
			cfa, ok := m.eval(row.CFA, 0, "")
			if !ok || cfa != top.cfa {
				t.Fatalf("%s: row CFA %+v gives 0x%x, true CFA 0x%x", where, row.CFA, cfa, top.cfa)
			}
			ra, ok := m.eval(row.RA, cfa, raSame)
			if ok && row.MangledRA {
				var err error
				if ra, err = m.unsign(ra, row.PAuthKey, cfa); err != nil {
					t.Fatalf("%s: row RA %+v is signed: %v", where, row.RA, err)
				}
			}
			if !ok || ra != top.ra {
				t.Fatalf("%s: row RA %+v gives 0x%x (ok %v), true RA 0x%x", where, row.RA, ra, ok, top.ra)
			}
			if fp, ok := m.eval(row.FP, cfa, m.fpName()); !ok || fp != top.fp {
				t.Fatalf("%s: row FP %+v gives 0x%x (ok %v), caller's FP 0x%x", where, row.FP, fp, ok, top.fp)
			}
		}
		next := m.pc + uint64(n)
		spBefore := m.reg[m.spName()]
		if s, ok := m.sigreturn(t, where, text, stack); ok {
			stack = s
			continue
		}
		ctl, tgt := m.step(text, next)
		last = ctl
		switch ctl {
		case ctlNext:
			m.pc = next
		case ctlHalt:
			t.Fatalf("%s: halted at 0x%x, before the exit 0x%x", where, m.pc, p.Exit)
		case ctlRet:
			if len(stack) == 0 {
				t.Fatalf("%s: return from the entry stub", where)
			}
			if tgt != stack[len(stack)-1].ra {
				t.Fatalf("%s: returns to 0x%x, entered with RA 0x%x", where, tgt, stack[len(stack)-1].ra)
			}
			stack = stack[:len(stack)-1]
			m.pc = tgt
		case ctlCall, ctlJump:
			m.pc = tgt
			if tgt == p.Exit {
				if ctl != ctlJump {
					t.Fatalf("%s: calls the exit", where)
				}
				break
			}
			g, isFunc := starts[tgt]
			if !isFunc || g.PartOf != "" {
				// Within one logical function: its own code, or between a
				// function and its part (a cold part and back).
				if owner(findFunc(p, tgt)) != owner(f) || ctl == ctlCall {
					t.Fatalf("%s: jumps into the middle of another function", where)
				}
				break
			}
			if ctl == ctlCall {
				if a := callAlign(p.Target); spBefore%a != 0 {
					t.Fatalf("%s: SP 0x%x not %d-aligned at a call", where, spBefore, a)
				}
				if len(stack) > 0 && g == f {
					t.Fatalf("%s: recursion", where)
				}
				stack = append(stack, m.entryTruth(g))
				st.maxDepth = max(st.maxDepth, callDepth(stack))
				break
			}
			// A tail call: the new function takes over the frame.
			nt := m.entryTruth(g)
			old := stack[len(stack)-1]
			if nt.cfa != old.cfa || nt.ra != old.ra || nt.fp != old.fp {
				t.Fatalf("%s: tail call with a frame not torn down: %+v vs %+v", where, nt, old)
			}
			nt.tails = old.tails + 1
			stack[len(stack)-1] = nt
			st.maxTails = max(st.maxTails, nt.tails)
			st.tailsFrom[f.Pattern]++
			st.tailsInto[g.Pattern]++
		}
		sp := m.reg[m.spName()]
		if sp != spBefore && len(stack) > 0 && freshStack(p, sp, stack) {
			stack, st.switched = stack[:0], true
			for _, s := range p.Stacks() {
				if sp > s.Addr && sp <= s.End() {
					fresh = s
				}
			}
		}
		if !st.switched { // a fresh stack is not the one the run started on
			st.minSP = min(st.minSP, sp)
		}
		// Running off a fresh stack's low end would put SP in the next
		// one, where it reads as a switch to a third stack.
		if fresh.Size != 0 && sp <= fresh.Addr && sp > fresh.Addr-AltStackGuard {
			t.Fatalf("%s: SP 0x%x ran off the fresh stack %s [0x%x, 0x%x)", where, sp, fresh.Name, fresh.Addr, fresh.End())
		}
	}
}

// owner names the logical function f belongs to: itself, or the
// function it is a part of.
func owner(f *gen.Func) string {
	if f.PartOf != "" {
		return f.PartOf
	}
	return f.Name
}

func callAlign(abi target.Target) uint64 {
	if abi == target.S390X {
		return 8
	}
	return 16
}

func findFunc(p *gen.Program, pc uint64) *gen.Func {
	for _, f := range p.Funcs {
		if pc >= f.Addr && pc < f.Addr+uint64(f.Size) {
			return f
		}
	}
	panic(fmt.Sprintf("pc 0x%x outside every function", pc))
}

// TestRowsAgainstExecution runs programs of every target, pattern and many
// seeds through the interpreter and checks each executed row, the call
// depth, the instruction count and the stack alignment at calls.
func TestRowsAgainstExecution(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			opts := []gen.Options{{}, {Funcs: 20, MaxDepth: 7}}
			for _, name := range gen.Patterns(abi) {
				opts = append(opts, gen.Options{Patterns: []string{name}})
			}
			minSteps, maxSteps := 1<<30, 0
			maxTails := 0
			tailsFrom, tailsInto := map[string]int{}, map[string]int{}
			for _, seed := range testSeeds(t, 40) {
				for _, opt := range opts {
					p, err := gen.Generate(abi, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					// Other argument values take other paths through the
					// same code: check those rows too.
					var st runStats
					for _, args := range [][]uint64{make([]uint64, len(p.Args)), {^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}, {0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0x3333333333333333, 0xcccccccccccccccc}, p.Args} {
						st = run(t, p, args[:len(p.Args)])
						maxTails = max(maxTails, st.maxTails)
						for k, n := range st.tailsFrom {
							tailsFrom[k] += n
						}
						for k, n := range st.tailsInto {
							tailsInto[k] += n
						}
					}
					depth := opt.MaxDepth
					if depth == 0 {
						depth = 4
					}
					if st.maxDepth > depth || (st.maxDepth != depth && !st.switched && !st.inSignal) {
						t.Fatalf("seed %d %+v: reached call depth %d, want %d", seed, opt, st.maxDepth, depth)
					}
					// A run that ended in a signal handler's noreturn callee
					// skips the rest of the program, as one on a fresh stack.
					if opt.Funcs == 0 && opt.Patterns == nil && !st.switched && !st.inSignal {
						minSteps, maxSteps = min(minSteps, st.steps), max(maxSteps, st.steps)
					}
				}
			}
			t.Logf("default programs execute %d..%d instructions", minSteps, maxSteps)
			// A run that ends in a noreturn callee skips whatever follows
			// the depth chain; the callee's loop keeps it above the floor.
			if minSteps < 90 || maxSteps > 2500 {
				t.Errorf("default programs execute %d..%d instructions, want about 100..2000", minSteps, maxSteps)
			}
			// Tail calls reach through several levels, and the new
			// patterns take part: PLT stubs jump on, tail calls and stubs
			// jump into stubs.
			t.Logf("tail calls: up to %d in a row; from %v; into %v", maxTails, tailsFrom, tailsInto)
			if !testing.Short() && (maxTails < 3 || tailsFrom["plt-stubs"] == 0 || tailsFrom["tail-call"] == 0 || tailsInto["plt-stubs"] == 0 || tailsInto["tail-call"] == 0) {
				t.Errorf("tail calls: up to %d in a row, want 3; from %v; into %v", maxTails, tailsFrom, tailsInto)
			}
		})
	}
}

// testSeeds returns seeds 1..n, or only the seed in $SFCONFORM_SEED to
// replay one failure.
func testSeeds(t *testing.T, n int64) []int64 {
	if os.Getenv(testenv.SeedVar) != "" {
		return []int64{int64(testenv.Seed(t, 0))}
	}
	if testing.Short() {
		n = min(n, 10)
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// FuzzGenerate: any seed and size makes a program whose every executed row
// holds, that reaches its depth and stops at Exit.
func FuzzGenerate(f *testing.F) {
	f.Add(int64(1), uint8(8), uint8(4), uint8(0))
	f.Add(int64(-77), uint8(30), uint8(9), uint8(3))
	f.Fuzz(func(t *testing.T, seed int64, funcs, depth, tgt uint8) {
		abi := target.All[int(tgt)%len(target.All)]
		opt := gen.Options{Funcs: int(funcs % 40), MaxDepth: int(depth % 10)}
		p, err := gen.Generate(abi, seed, opt)
		if err != nil {
			t.Fatalf("%s seed %d %+v: %v", abi.Name(), seed, opt, err)
		}
		st := run(t, p, p.Args)
		want := opt.MaxDepth
		if want == 0 {
			want = 4
		}
		if st.maxDepth > want || (st.maxDepth != want && !st.switched && !st.inSignal) {
			t.Fatalf("%s seed %d %+v: depth %d, want %d", abi.Name(), seed, opt, st.maxDepth, want)
		}
	})
}

// lazy formats a failure location only when a message prints it.
type lazy func() string

func (l lazy) String() string { return l() }
