package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/target"
)

// pltPatterns are the patterns the PLT rendering tests mix: stubs, what
// else branches to them (tail calls) and far code, whose calls to a stub
// go through a register and must stay as they are.
var pltPatterns = []string{"plt-stubs", "tail-call", "far-code", "fp-frame", "leaf"}

// TestPLTRendering: the PLT rendering is the ordinary one line for line,
// but that every direct call to a stub calls the stub's PLT name through
// the PLT, and the line ending each stub defines that name as the stub's
// jump target. Nothing else changes: far calls, tail jumps and the stubs'
// own jumps still name the stubs and their targets.
func TestPLTRendering(t *testing.T) {
	t.Parallel()
	const prefix = "q3_"
	for _, abi := range target.All {
		suffix := isaFor(abi).pltSuffix()
		stubsSeen := 0
		for seed := int64(1); seed <= 16; seed++ {
			p, err := Generate(abi, seed, Options{Funcs: 12, MaxDepth: 5, Patterns: pltPatterns})
			if err != nil {
				t.Fatal(err)
			}
			plain := strings.Split(p.AssemblyWith(AsmOptions{Prefix: prefix, InFile: true}), "\n")
			plt := strings.Split(p.AssemblyWith(AsmOptions{Prefix: prefix, InFile: true, PLT: true}), "\n")
			if len(plain) != len(plt) {
				t.Fatalf("%s seed %d: %d lines through the PLT, %d without", abi.Name(), seed, len(plt), len(plain))
			}
			stubs := p.PLTStubs()
			stubsSeen += len(stubs)
			calls := map[string]int{}
			aliases := map[string]string{}
			for i := range plain {
				if plain[i] == plt[i] {
					continue
				}
				if rest, ok := strings.CutPrefix(plt[i], plain[i]+"; .globl "); ok {
					a, _, _ := strings.Cut(rest, ";")
					tgt := rest[strings.LastIndex(rest, ", ")+2:]
					aliases[strings.TrimPrefix(a, prefix)] = strings.TrimPrefix(tgt, prefix)
					continue
				}
				found := false
				for _, s := range stubs {
					if renameToken(plain[i], prefix+s, prefix+PLTName(s)+suffix) == plt[i] {
						calls[s]++
						found = true
					}
				}
				if !found {
					t.Fatalf("%s seed %d line %d: %q became %q", abi.Name(), seed, i+1, plain[i], plt[i])
				}
			}
			for _, f := range p.Funcs {
				if f.StubBlock == "" {
					continue
				}
				if got, want := aliases[PLTName(f.Name)], stubTarget(f); got != want {
					t.Errorf("%s seed %d: %s defined as %q, the stub jumps to %q", abi.Name(), seed, PLTName(f.Name), got, want)
				}
			}
			want := map[string]int{}
			for _, f := range p.Funcs {
				for _, o := range f.ops {
					if o.call && o.br != nil && o.br.textAt == nil && p.funcNamed(o.br.target).StubBlock != "" {
						if f.Far {
							t.Fatalf("%s seed %d: far function %s calls %s directly", abi.Name(), seed, f.Name, o.br.target)
						}
						want[o.br.target]++
					}
				}
			}
			if fmt.Sprint(calls) != fmt.Sprint(want) || len(want) != len(stubs) {
				t.Errorf("%s seed %d: calls through the PLT %v, direct calls to stubs %v, PLTStubs %v", abi.Name(), seed, calls, want, stubs)
			}
		}
		if stubsSeen == 0 {
			t.Errorf("%s: no program called a stub: the rendering went unchecked", abi.Name())
		}
	}
}

// TestCodeWithCalls: the code with the calls to the stubs sent elsewhere
// differs from Code only in those calls, each of which the disassembler
// reads as a call to its new target; sent to the stubs themselves it is
// Code; a target out of a call's reach is an error.
func TestCodeWithCalls(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		p, err := Generate(abi, 3, Options{Funcs: 12, MaxDepth: 5, Patterns: pltPatterns})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Layout(0x10000000); err != nil {
			t.Fatal(err)
		}
		stubs := p.PLTStubs()
		if len(stubs) == 0 {
			t.Fatalf("%s seed 3 calls no stub", abi.Name())
		}
		same, to := map[string]uint64{}, map[string]uint64{}
		for i, s := range stubs {
			same[s] = p.funcNamed(s).Addr
			to[s] = 0x0fe01000 + 32*uint64(i+1)
		}
		if code, err := p.CodeWithCalls(same); err != nil || string(code) != string(p.Code) {
			t.Errorf("%s: calls sent to the stubs themselves: %v, code equal %v", abi.Name(), err, string(code) == string(p.Code))
		}
		code, err := p.CodeWithCalls(to)
		if err != nil {
			t.Fatal(err)
		}
		changed := map[uint64]bool{}
		for _, f := range p.Funcs {
			for k, o := range f.ops {
				if o.br == nil || !o.call || o.br.textAt != nil {
					continue
				}
				tgt, ok := to[o.br.target]
				if !ok {
					continue
				}
				in := f.Insns[k]
				pc := f.Addr + uint64(in.Off)
				changed[pc] = true
				text, _, err := disasm.Instruction(abi, code[pc-p.Base:], pc)
				if err != nil || !strings.HasSuffix(text, fmt.Sprintf("0x%x", tgt)) {
					t.Errorf("%s: %s+0x%x %q reads %q (%v), want a call to 0x%x", abi.Name(), f.Name, in.Off, in.Text, text, err, tgt)
				}
			}
		}
		for i := range code {
			if code[i] != p.Code[i] {
				in := false
				for pc := range changed {
					in = in || p.Base+uint64(i) >= pc && p.Base+uint64(i) < pc+6
				}
				if !in {
					t.Errorf("%s: byte at 0x%x changed outside a redirected call", abi.Name(), p.Base+uint64(i))
				}
			}
		}
		far := map[string]uint64{stubs[0]: p.Base + 1<<33}
		if _, err := p.CodeWithCalls(far); err == nil {
			t.Errorf("%s: a call sent 8 GiB away encoded without an error", abi.Name())
		}
	}
}
