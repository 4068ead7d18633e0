package gen_test

import (
	"bytes"
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func mustGenerate(t testing.TB, abi target.Target, seed int64, opt gen.Options) *gen.Program {
	t.Helper()
	p, err := gen.Generate(abi, seed, opt)
	if err != nil {
		t.Fatalf("%s seed %d: %v", abi.Name(), seed, err)
	}
	return p
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		args := map[uint64]int64{}
		codes := map[string]bool{}
		for seed := int64(-3); seed <= 20; seed++ {
			a := mustGenerate(t, abi, seed, gen.Options{})
			b := mustGenerate(t, abi, seed, gen.Options{})
			if !reflect.DeepEqual(a.Code, b.Code) || a.Assembly() != b.Assembly() ||
				!reflect.DeepEqual(a.FDEs(), b.FDEs()) || !reflect.DeepEqual(a.Args, b.Args) ||
				!reflect.DeepEqual(a.Symbols(), b.Symbols()) || a.Entry != b.Entry || a.Exit != b.Exit {
				t.Fatalf("%s seed %d: two programs differ", abi.Name(), seed)
			}
			for i := range a.Funcs {
				if !reflect.DeepEqual(a.Funcs[i].Insns, b.Funcs[i].Insns) {
					t.Fatalf("%s seed %d: %s differs", abi.Name(), seed, a.Funcs[i].Name)
				}
			}
			if prev, dup := args[a.Args[0]]; dup {
				t.Errorf("%s seeds %d and %d give the same first argument 0x%x", abi.Name(), prev, seed, a.Args[0])
			}
			args[a.Args[0]] = seed
			codes[string(a.Code)] = true
		}
		if len(codes) < 20 {
			t.Errorf("%s: 24 seeds made only %d different programs", abi.Name(), len(codes))
		}
	}
}

func TestLayoutRelocates(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		// Calls to and from far functions load absolute addresses:
		// relocating them changes the code.
		near := slices.DeleteFunc(gen.Patterns(abi), func(n string) bool { return n == "far-code" })
		p := mustGenerate(t, abi, 7, gen.Options{Funcs: 12, Patterns: near})
		code := slices.Clone(p.Code)
		syms := p.Symbols()
		entry, exit := p.Entry, p.Exit
		const base = 0x7f00_1230_0000
		if err := p.Layout(base); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(code, p.Code) {
			t.Errorf("%s: code changed when relocated", abi.Name())
		}
		delta := base - uint64(gen.DefaultBase)
		if p.Base != base || p.Entry != entry+delta || p.Exit != exit+delta {
			t.Errorf("%s: base 0x%x entry 0x%x exit 0x%x after relocating by 0x%x from entry 0x%x exit 0x%x", abi.Name(), p.Base, p.Entry, p.Exit, delta, entry, exit)
		}
		for i, s := range p.Symbols() {
			if s.Addr != syms[i].Addr+delta || s.Size != syms[i].Size || s.Name != syms[i].Name {
				t.Errorf("%s: symbol %v became %v", abi.Name(), syms[i], s)
			}
		}
		if err := p.Layout(base + 1); err == nil && abi != target.X86_64 {
			t.Errorf("%s: odd layout base accepted", abi.Name())
		}
	}
}

func TestProgramShape(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		// Enough functions for the planner to deal every pattern once and
		// find each a slot it fits.
		funcs := 2 * len(gen.Patterns(abi))
		for seed := int64(1); seed <= 20; seed++ {
			p := mustGenerate(t, abi, seed, gen.Options{Funcs: funcs, MaxDepth: 5})
			if n := plannedFuncs(t, p); n != funcs || p.Funcs[0].Pattern != "entry" {
				t.Fatalf("%s: %d functions planned, first %q", abi.Name(), n, p.Funcs[0].Pattern)
			}
			if p.Entry != p.Funcs[0].Addr || p.Exit <= p.Entry || p.Exit >= p.Funcs[0].Addr+uint64(p.Funcs[0].Size) {
				t.Fatalf("%s: entry 0x%x exit 0x%x outside the stub %+v", abi.Name(), p.Entry, p.Exit, p.Symbols()[0])
			}
			if len(p.ArgRegs) == 0 || len(p.ArgRegs) != len(p.Args) {
				t.Fatalf("%s: %d argument registers, %d values", abi.Name(), len(p.ArgRegs), len(p.Args))
			}
			var seen []string
			// Near functions follow each other from Base, far ones from
			// FarBase = Base + FarOffset, each followed by its gap.
			next, nextFar := p.Base, p.Base+gen.FarOffset
			for _, f := range p.Funcs {
				at := &next
				if f.Far {
					at = &nextFar
				}
				if f.Addr != *at {
					t.Fatalf("%s: %s at 0x%x, previous function and its gap end at 0x%x", abi.Name(), f.Name, f.Addr, *at)
				}
				end := f.Addr + uint64(f.Size)
				if (f.After == gen.EdgeNext) != (len(f.Gap) == 0) || !bytes.HasPrefix(p.CodeAt(end), f.Gap) {
					t.Fatalf("%s: %s is followed by %s, % x; the code there is % x", abi.Name(), f.Name, f.After, f.Gap, p.CodeAt(end)[:min(len(p.CodeAt(end)), len(f.Gap))])
				}
				*at += uint64(f.Size) + uint64(len(f.Gap))
				seen = append(seen, f.Pattern)
			}
			checkFDEs(t, p)
			checkShapes(t, p)
			if uint64(len(p.Code)) != next-p.Base {
				t.Fatalf("%s: %d code bytes for functions spanning %d", abi.Name(), len(p.Code), next-p.Base)
			}
			if !slices.IsSortedFunc(p.Symbols(), func(a, b image.Symbol) int { return cmp.Compare(a.Addr, b.Addr) }) {
				t.Fatalf("%s: symbols not in address order: %v", abi.Name(), p.Symbols())
			}
			if far := nextFar - (p.Base + gen.FarOffset); uint64(len(p.FarCode)) != far || (far > 0) != (p.FarBase == p.Base+gen.FarOffset) {
				t.Fatalf("%s: %d far code bytes at 0x%x for far functions spanning %d", abi.Name(), len(p.FarCode), p.FarBase, far)
			}
			for _, name := range gen.Patterns(abi) {
				if !slices.Contains(seen, name) {
					t.Errorf("%s seed %d: pattern %s not used among %d functions (%v)", abi.Name(), seed, name, funcs, seen)
				}
			}
		}
	}
}

// plannedFuncs counts the functions Options.Funcs asks for: a PLT block
// counts once, a cold part and a noreturn callee not at all. Every part
// must name a function that is not itself a part.
func plannedFuncs(t *testing.T, p *gen.Program) int {
	t.Helper()
	n := 0
	for i, f := range p.Funcs[1:] {
		switch {
		case f.PartOf != "":
			owner := slices.IndexFunc(p.Funcs, func(g *gen.Func) bool { return g.Name == f.PartOf })
			if owner < 0 || p.Funcs[owner].PartOf != "" {
				t.Fatalf("%s seed %d: %s is a part of %q, no function of its own", p.Target.Name(), p.Seed, f.Name, f.PartOf)
			}
		case f.Pattern == "noreturn", f.Kind == image.KindSignalRestorer, f.Idle:
		case f.StubBlock != "" && p.Funcs[i].StubBlock == f.StubBlock:
		default:
			n++
		}
	}
	return n
}

// checkShapes checks what the new patterns promise of their functions:
// a noreturn-call function ends with a call, to a function that never
// returns; a PLT stub ends in a jump; a part is marked in the symbols.
func checkShapes(t *testing.T, p *gen.Program) {
	t.Helper()
	syms := map[string]image.Symbol{}
	for _, s := range p.Symbols() {
		syms[s.Name] = s
	}
	for _, f := range p.Funcs {
		last := f.Insns[len(f.Insns)-1]
		switch f.Pattern {
		case "noreturn-call":
			callee := last.Text[strings.LastIndexAny(last.Text, " ,")+1:]
			k := slices.IndexFunc(p.Funcs, func(g *gen.Func) bool { return g.Name == callee })
			if !last.Call || k < 0 || p.Funcs[k].Pattern != "noreturn" {
				t.Fatalf("%s seed %d: %s ends with %q, not a call to a noreturn function", p.Target.Name(), p.Seed, f.Name, last.Text)
			}
		}
		if (f.Kind == image.KindSignalHandler) != ((f.Pattern == "signal" || f.Pattern == "signal-empty-fde") && f.PartOf == "" && f.Kind != image.KindSignalRestorer) {
			t.Fatalf("%s seed %d: %s of pattern %s has symbol kind %q", p.Target.Name(), p.Seed, f.Name, f.Pattern, f.Kind)
		}
		if s, ok := syms[f.Name]; !ok || s.Addr != f.Addr || s.Size != f.Size || s.PartOf != f.PartOf || s.Kind != f.Kind {
			t.Fatalf("%s seed %d: symbol %+v for %s at 0x%x (part of %q)", p.Target.Name(), p.Seed, s, f.Name, f.Addr, f.PartOf)
		}
	}
}

// checkFDEs walks the program's FDEs alongside its functions: one PCINC
// FDE per function, except that a run of PLT stubs of one block is one
// PCMASK FDE covering them all, its repetition size the stub size, its
// rows each stub's rows.
func checkFDEs(t *testing.T, p *gen.Program) {
	t.Helper()
	fdes := p.FDEs()
	k := 0
	for i := 0; i < len(p.Funcs); k++ {
		if k >= len(fdes) {
			t.Fatalf("%s seed %d: %d FDEs end before function %s", p.Target.Name(), p.Seed, len(fdes), p.Funcs[i].Name)
		}
		fde, f := fdes[k], p.Funcs[i]
		if f.StubBlock == "" {
			if fde.PCType != sframe.PCInc {
				t.Fatalf("%s seed %d %s: PC type %v", p.Target.Name(), p.Seed, f.Name, fde.PCType)
			}
			checkFDE(t, p, f, fde)
			i++
			continue
		}
		j := i
		for j < len(p.Funcs) && p.Funcs[j].StubBlock == f.StubBlock {
			j++
		}
		span := uint32(p.Funcs[j-1].Addr + uint64(p.Funcs[j-1].Size) - f.Addr)
		if fde.PCType != sframe.PCMask || fde.Start != f.Addr || fde.Size != span || uint32(fde.RepSize) != f.Size {
			t.Fatalf("%s seed %d block %s: FDE %v [0x%x,+%d) rep %d; stubs [0x%x,+%d), %d bytes each",
				p.Target.Name(), p.Seed, f.StubBlock, fde.PCType, fde.Start, fde.Size, fde.RepSize, f.Addr, span, f.Size)
		}
		for _, s := range p.Funcs[i:j] {
			one := fde
			one.Start, one.Size = s.Addr, s.Size
			checkFDE(t, p, s, one)
		}
		i = j
	}
	if k != len(fdes) {
		t.Fatalf("%s seed %d: %d FDEs for %d", p.Target.Name(), p.Seed, len(fdes), k)
	}
}

// checkFDE checks that fde, which the builtin producer encodes, says
// exactly what f's per-instruction rows say: one row at the function start
// and one wherever the rule changes, none elsewhere, each starting at an
// instruction. This is about the compression only; whether the rows are
// true is for TestRowsAgainstExecution (interp_test.go: an interpreter
// running the disassembled code) and TestRowsMatchGasSCFI (GNU as deriving
// the rows from the instructions) to say.
func checkFDE(t *testing.T, p *gen.Program, f *gen.Func, fde sframe.FDE) {
	t.Helper()
	if fde.Start != f.Addr || fde.Size != f.Size {
		t.Fatalf("%s seed %d %s at 0x%x, size %d: FDE at 0x%x, size %d", p.Target.Name(), p.Seed, f.Name, f.Addr, f.Size, fde.Start, fde.Size)
	}
	var want []sframe.Row
	end := uint32(0)
	for _, in := range f.Insns {
		if in.Off != end || in.Row.Start != in.Off {
			t.Fatalf("%s seed %d %s: instruction at +0x%x (row start %d) after one ending at +0x%x", p.Target.Name(), p.Seed, f.Name, in.Off, in.Row.Start, end)
		}
		end += uint32(len(in.Bytes))
		if n := len(want); n > 0 {
			prev, cur := want[n-1], in.Row
			prev.Start = cur.Start
			if prev == cur {
				continue
			}
		}
		want = append(want, in.Row)
	}
	if end != f.Size {
		t.Fatalf("%s seed %d %s: instructions end at +0x%x, function size %d", p.Target.Name(), p.Seed, f.Name, end, f.Size)
	}
	if f.EmptyFDE && fde.Signal {
		// A trampoline's empty FDE: the signal flag says it all.
		if len(fde.Rows) != 0 || !want[0].Signal {
			t.Fatalf("%s seed %d %s: empty signal FDE with rows %+v, instructions' rows %+v", p.Target.Name(), p.Seed, f.Name, fde.Rows, want)
		}
		return
	}
	if f.EmptyFDE {
		// No rows: the whole function must be outermost.
		if len(want) != 1 || want[0].RA.Kind != sframe.RuleUndefined || len(fde.Rows) != 0 {
			t.Fatalf("%s seed %d %s: empty FDE with rows %+v, instructions' rows %+v", p.Target.Name(), p.Seed, f.Name, fde.Rows, want)
		}
		return
	}
	if !slices.Equal(fde.Rows, want) {
		t.Fatalf("%s seed %d %s: FDE rows\n %+v\nwant, from the instructions' rows,\n %+v", p.Target.Name(), p.Seed, f.Name, fde.Rows, want)
	}
}

func TestPatternSelection(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		names := gen.Patterns(abi)
		if len(names) < 6 {
			t.Fatalf("%s: only patterns %v", abi.Name(), names)
		}
		for _, name := range names {
			p := mustGenerate(t, abi, 3, gen.Options{Patterns: []string{name}})
			n := 0
			for _, f := range p.Funcs[1:] {
				if f.Pattern == name {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s: Patterns [%s] made no such function", abi.Name(), name)
			}
		}
		_, err := gen.Generate(abi, 1, gen.Options{Patterns: []string{"fp-frame", "no-such"}})
		if err == nil || !strings.Contains(err.Error(), `"no-such"`) {
			t.Errorf("%s: unknown pattern: err = %v", abi.Name(), err)
		}
	}
	if _, err := gen.Generate(target.Target(9), 1, gen.Options{}); err == nil {
		t.Error("ABI 9 accepted")
	}
	if gen.Patterns(target.Target(9)) != nil {
		t.Error("patterns for ABI 9")
	}
}

// TestAssemblyCFI checks the rendered CFI of the stub and of a frame
// against the directives GNU as needs to build the same SFrame rows.
func TestAssemblyCFI(t *testing.T) {
	t.Parallel()
	ra := map[target.Target]string{target.X86_64: "%rip", target.AArch64: "x30", target.AArch64BE: "x30", target.S390X: "%r14"}
	for _, abi := range target.All {
		p := mustGenerate(t, abi, 11, gen.Options{})
		asm := p.Assembly()
		stub := asm[strings.Index(asm, "_start:"):strings.Index(asm, ".size _start")]
		switch {
		case p.Funcs[0].EmptyFDE:
			// No initial CFA and nothing else: an FDE without rows.
			if !strings.Contains(stub, ".cfi_startproc simple\n") || strings.Count(stub, ".cfi_") != 2 {
				t.Errorf("%s: stub with an empty FDE has CFI directives:\n%s", abi.Name(), stub)
			}
		case !strings.Contains(stub, ".cfi_undefined "+ra[abi]):
			t.Errorf("%s: stub does not mark %s undefined:\n%s", abi.Name(), ra[abi], stub)
		}
		for _, f := range p.Funcs {
			if !strings.Contains(asm, "\t.type "+f.Name+", ") || !strings.Contains(asm, "\t.size "+f.Name+", .-"+f.Name) {
				t.Errorf("%s: %s lacks .type or .size", abi.Name(), f.Name)
			}
		}
		if strings.Count(asm, ".cfi_startproc") != len(p.Funcs) || strings.Count(asm, ".cfi_endproc") != len(p.Funcs) {
			t.Errorf("%s: unbalanced .cfi_startproc/.cfi_endproc", abi.Name())
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, abi := range target.All {
		b.Run(abi.Name(), func(b *testing.B) {
			seed := int64(0)
			for b.Loop() {
				seed++
				if _, err := gen.Generate(abi, seed, gen.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
		})
	}
}
