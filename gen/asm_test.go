package gen

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// TestAssemblyWithPrefix: the prefixed text is Assembly's line for line,
// with every symbol and label of the program renamed and nothing else
// changed, so programs sharing one source file define no name twice.
func TestAssemblyWithPrefix(t *testing.T) {
	t.Parallel()
	const prefix = "q7_"
	for _, abi := range target.All {
		for seed := int64(1); seed <= 12; seed++ {
			p, err := Generate(abi, seed, Options{Funcs: 12, MaxDepth: 5})
			if err != nil {
				t.Fatal(err)
			}
			plain := strings.Split(p.Assembly(), "\n")
			renamed := strings.Split(p.AssemblyWith(AsmOptions{Prefix: prefix, InFile: true}), "\n")
			if len(plain) != len(renamed) {
				t.Fatalf("%s seed %d: %d lines with the prefix, %d without", abi.Name(), seed, len(renamed), len(plain))
			}
			names := map[string]bool{}
			for _, f := range p.Funcs {
				names[f.Name] = true
				for _, o := range f.ops {
					for _, l := range o.labels {
						names[l] = true
					}
				}
			}
			for _, s := range p.stacks {
				names[s.Name] = true
			}
			for i := range plain {
				got := renamed[i]
				if (strings.Contains(got, CFISections) || strings.Contains(got, ".note.GNU-stack")) && !strings.HasPrefix(got, "#") {
					t.Errorf("%s seed %d line %d: %q in a text for a file that says it", abi.Name(), seed, i+1, got)
				}
				want := plain[i]
				switch want {
				case "\t" + CFISections:
					want = "# " + CFISections + " (at the top of the file)"
				case "\t" + p.NoExecStack():
					want = "# " + p.NoExecStack() + " (at the end of the file)"
				}
				if strings.ReplaceAll(got, prefix, "") != want {
					t.Fatalf("%s seed %d line %d: %q renders as %q", abi.Name(), seed, i+1, plain[i], got)
				}
				for n := range names {
					if renameToken(got, n, "#") != got {
						t.Fatalf("%s seed %d line %d: %q still names %s", abi.Name(), seed, i+1, got, n)
					}
				}
			}
		}
	}
}

func TestRenameToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, old, want string }{
		{"call f1", "f1", "call X"},
		{"call f12", "f1", "call f12"},
		{"brasl %r14,f1", "f1", "brasl %r14,X"},
		{"lgr %r1,%r2", "r1", "lgr %r1,%r2"},
		{"jmp f1.cold", "f1", "jmp f1.cold"},
		{"jmp f1.cold", "f1.cold", "jmp X"},
		{"b.ne .Lf1_2", ".Lf1_2", "b.ne X"},
		{"f1 f1", "f1", "X X"},
	} {
		if got := renameToken(c.text, c.old, "X"); got != c.want {
			t.Errorf("renameToken(%q, %q) = %q, want %q", c.text, c.old, got, c.want)
		}
	}
}

// TestLayoutAtFarBase: the far functions go where LayoutAt says, the rest
// where its base says, and a far base within 4 GiB of the code is refused.
func TestLayoutAtFarBase(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		p, err := Generate(abi, 3, Options{Patterns: []string{"far-code", "fp-frame"}, SFrameVersion: 3})
		if err != nil {
			t.Fatal(err)
		}
		const base, farBase = 0x10004000, 0x150040000
		if err := p.LayoutAt(base, farBase); err != nil {
			t.Fatal(err)
		}
		if p.Base != base || p.FarBase != farBase || len(p.FarCode) == 0 {
			t.Fatalf("%s: base %#x far base %#x (%d bytes)", abi.Name(), p.Base, p.FarBase, len(p.FarCode))
		}
		for _, f := range p.Funcs {
			lo, hi := uint64(base), base+uint64(len(p.Code))
			if f.Far {
				lo, hi = farBase, farBase+uint64(len(p.FarCode))
			}
			if f.Addr < lo || f.Addr+uint64(f.Size) > hi {
				t.Errorf("%s: %s at [%#x,+%d) outside [%#x,%#x)", abi.Name(), f.Name, f.Addr, f.Size, lo, hi)
			}
		}
		if err := p.LayoutAt(base, base+1<<32); err == nil {
			t.Errorf("%s: a far base 4 GiB above the code accepted", abi.Name())
		}
	}
}
