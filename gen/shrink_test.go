package gen_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
)

// funcShape is what a function is made of, apart from its address: the
// instructions' text (branches by name, their size left out: x86-64 jumps
// take their short or long form by distance) and the rows. In a program with far
// code, calls between near and far code load absolute addresses, which
// move with the layout: numbers are left out of the text there.
func funcShape(f *gen.Func, far bool) string {
	s := fmt.Sprintf("%s %s:", f.Name, f.Pattern)
	for _, in := range f.Insns {
		text := in.Text
		if far {
			text = number.ReplaceAllString(text, "N")
		}
		s += fmt.Sprintf(" %q %+v;", text, in.Row)
	}
	return s
}

var number = regexp.MustCompile(`0x[0-9a-f]+|\d+`)

func shapes(p *gen.Program) map[string]string {
	out := map[string]string{}
	for _, f := range p.Funcs {
		out[f.Name] = funcShape(f, len(p.FarCode) > 0)
	}
	return out
}

// Every reduction of every program makes a program whose rows hold at
// every instruction its paths execute (the interpreter of interp_test.go
// judges them from the disassembled code, not from gen's rows), that is
// smaller than the one it came from, and in which the functions the
// reduction did not touch are built exactly as before.
func TestReductionsKeepTheRowsTrue(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			opts := []gen.Options{{}, {Patterns: []string{"signal", "plt-stubs", "noreturn-call", "tail-call", "new-stack"}}}
			kinds := map[string]int{}
			for _, seed := range testSeeds(t, 6) {
				for _, opt := range opts {
					p, err := gen.Generate(abi, seed, opt)
					if err != nil {
						t.Fatal(err)
					}
					before := shapes(p)
					for _, r := range p.Reductions() {
						q, err := p.Reduce(r)
						if errors.Is(err, gen.ErrNotReducible) {
							continue
						}
						if err != nil {
							t.Fatalf("seed %d %+v: %s: %v", seed, opt, r, err)
						}
						kinds[r.Op]++
						for _, args := range q.ArgSets {
							run(t, q, args)
						}
						ps, qs := p.Size(), q.Size()
						// A long function pads itself back to its size
						// class, in more instructions of padding when a
						// call goes; nothing grows in bytes.
						// (A function built plainer may take more bytes:
						// the minimizer keeps it only when it is smaller.)
						if qs.Functions > ps.Functions || qs.Bytes > ps.Bytes && r.Op != gen.ReducePlain {
							t.Errorf("seed %d %+v: %s: %v, was %v", seed, opt, r, qs, ps)
						}
						// A reduction inside one function leaves every
						// other function as it was.
						if r.Op == gen.ReduceLoop || r.Op == gen.ReduceFillers || r.Op == gen.ReducePlain {
							for name, shape := range shapes(q) {
								if name != r.Func && !strings.HasPrefix(name, r.Func+".") && before[name] != shape {
									t.Errorf("seed %d %+v: %s changed %s:\n%s\nwas\n%s", seed, opt, r, name, shape, before[name])
								}
							}
						}
						if got := q.Applied(); !slices.Equal(got, []gen.Reduction{r}) {
							t.Errorf("Applied() = %v, want [%v]", got, r)
						}
					}
				}
			}
			for _, op := range []string{gen.ReduceFunc, gen.ReduceCall, gen.ReduceLoop, gen.ReduceFillers, gen.ReducePlain} {
				if kinds[op] == 0 {
					t.Errorf("no %s reduction applied", op)
				}
			}
			t.Logf("reductions applied: %v", kinds)
		})
	}
}

// reduceGreedily applies the first reduction that applies, n times.
func reduceGreedily(t *testing.T, p *gen.Program, n int) *gen.Program {
	t.Helper()
	for i := 0; i < n; i++ {
		reduced := false
		for _, r := range p.Reductions() {
			q, err := p.Reduce(r)
			if err == nil {
				p, reduced = q, true
				break
			}
		}
		if !reduced {
			break
		}
	}
	return p
}

// A reduced program comes back from its seed, options and Applied.
func TestRegenerate(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		for _, seed := range testSeeds(t, 5) {
			opt := gen.Options{Paths: 3}
			p, err := gen.Generate(abi, seed, opt)
			if err != nil {
				t.Fatal(err)
			}
			q, err := p.Reduce(gen.Reduction{Op: gen.ReducePath, N: 2})
			if err != nil {
				t.Fatal(err)
			}
			q = reduceGreedily(t, q, 6)
			if len(q.Applied()) < 5 {
				t.Fatalf("%s seed %d: only %v applied", abi.Name(), seed, q.Applied())
			}
			back, err := gen.Regenerate(abi, seed, q.GenOptions(), q.Applied())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back.Code, q.Code) || back.Assembly() != q.Assembly() || !slices.Equal(back.ArgSets[0], p.ArgSets[2]) {
				t.Errorf("%s seed %d: %v does not regenerate the same program", abi.Name(), seed, q.Applied())
			}
		}
	}
}

// Keeping one path keeps its arguments and its signal, and the program.
func TestReducePathKeepsItsSignal(t *testing.T) {
	t.Parallel()
	found := 0
	for _, abi := range target.All {
		for seed := int64(1); seed <= 20; seed++ {
			p, err := gen.Generate(abi, seed, gen.Options{Patterns: []string{"signal", "fp-frame", "leaf"}})
			if err != nil {
				t.Fatal(err)
			}
			for k := range p.Paths() {
				q, err := p.Reduce(gen.Reduction{Op: gen.ReducePath, N: k})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(q.Code, p.Code) || q.Paths() != 1 || !slices.Equal(q.Args, p.ArgSets[k]) {
					t.Fatalf("%s seed %d path %d: the program or its arguments changed", abi.Name(), seed, k)
				}
				var want []image.Signal
				for _, s := range p.Signals() {
					if s.Path == k {
						s.Path = 0
						want = append(want, s)
						found++
					}
				}
				if got := q.Signals(); !slices.Equal(got, want) {
					t.Errorf("%s seed %d path %d: signals %+v, want %+v", abi.Name(), seed, k, got, want)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no path with a signal")
	}
}

func TestReduceRefuses(t *testing.T) {
	t.Parallel()
	p, err := gen.Generate(target.X86_64, 7, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := p.Funcs[1].Name
	for _, r := range []gen.Reduction{
		{Op: gen.ReduceFunc, Func: root},
		{Op: gen.ReduceFunc, Func: "nosuch"},
		{Op: gen.ReduceCall, Func: root, Callee: "nosuch"},
		{Op: gen.ReducePath, N: 99},
		{Op: "shuffle", Func: root},
	} {
		if _, err := p.Reduce(r); !errors.Is(err, gen.ErrNotReducible) {
			t.Errorf("%s: %v, want ErrNotReducible", r, err)
		}
	}
}
