package producer

import (
	"debug/elf"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
)

// fakeLinked is what a linker would have made of p alone, exactly.
func fakeLinked(p *gen.Program, prefix string) *linked {
	l := &linked{text: slices.Clone(p.Code), textAddr: p.Base, far: slices.Clone(p.FarCode), farAddr: p.FarBase,
		funcs: map[string]elf.Symbol{}, objects: map[string]elf.Symbol{}, version: 3}
	for _, s := range p.Symbols() {
		l.funcs[prefix+s.Name] = elf.Symbol{Name: prefix + s.Name, Value: s.Addr, Size: uint64(s.Size)}
	}
	for _, s := range p.Stacks() {
		l.objects[prefix+s.Name] = elf.Symbol{Name: prefix + s.Name, Value: s.Addr, Size: uint64(s.Size)}
	}
	return l
}

// TestLoadRefusesWhatGenDidNotLayOut: an image is cut out of the linked
// file only where the toolchain put gen's code and symbols exactly where
// gen laid them out; anything else is an error naming the place.
func TestLoadRefusesWhatGenDidNotLayOut(t *testing.T) {
	t.Parallel()
	p, err := gen.Generate(target.AArch64, 5, gen.Options{Patterns: []string{"far-code", "new-stack", "fp-frame"}, SFrameVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.LayoutAt(0x10000040, 0x150000040); err != nil {
		t.Fatal(err)
	}
	b := &toolBuild{producer: "gas-test", target: target.AArch64}
	pt := &part{prog: p, prefix: "p0_"}
	img, err := b.load(fakeLinked(p, "p0_"), pt, &image.Record{})
	if err != nil {
		t.Fatalf("the exact layout refused: %v", err)
	}
	if img.CodeAddr != p.Base || len(img.Segments) != 1 || len(img.Symbols) != len(p.Funcs)+len(p.Stacks()) {
		t.Fatalf("image %+v", img)
	}
	f := p.Funcs[2]
	for _, c := range []struct {
		name string
		edit func(l *linked)
		want string
	}{
		{"a byte of code", func(l *linked) { l.text[f.Addr-p.Base+4] ^= 1 }, "differs from gen's at"},
		{"far code", func(l *linked) { l.far[0] ^= 1 }, "far code differs"},
		{"text too short", func(l *linked) { l.text = l.text[:len(l.text)-1] }, "does not hold the program's"},
		{"symbol moved", func(l *linked) {
			s := l.funcs["p0_"+f.Name]
			s.Value += 4
			l.funcs["p0_"+f.Name] = s
		}, "function " + f.Name + " is at"},
		{"symbol gone", func(l *linked) { delete(l.funcs, "p0_"+f.Name) }, "no function symbol p0_" + f.Name},
		{"stack gone", func(l *linked) { clear(l.objects) }, "stack stack_level"},
	} {
		l := fakeLinked(p, "p0_")
		c.edit(l)
		if _, err := b.load(l, pt, &image.Record{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestCheckLayout: a batch's programs lie one after the other on
// batchAlign boundaries, all of one target.
func TestCheckLayout(t *testing.T) {
	t.Parallel()
	mk := func(seed int64, base uint64) *gen.Program {
		p, err := gen.Generate(target.X86_64, seed, gen.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Layout(base); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := &toolBuild{producer: "gas-test", target: target.X86_64}
	a := mk(1, 0x10000000)
	next := alignUp(a.Base+uint64(len(a.Code)), batchAlign)
	if err := b.checkLayout([]*gen.Program{a, mk(2, next)}); err != nil {
		t.Errorf("packed programs refused: %v", err)
	}
	for name, progs := range map[string][]*gen.Program{
		"overlap":    {a, mk(2, next-batchAlign)},
		"unaligned":  {a, mk(2, next+8)},
		"descending": {mk(2, next), a},
	} {
		if err := b.checkLayout(progs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	other, _ := gen.Generate(target.S390X, 1, gen.Options{})
	if err := b.checkLayout([]*gen.Program{other}); err == nil || !strings.Contains(err.Error(), "s390x") {
		t.Errorf("a program of another target: %v", err)
	}
}

// TestAttribute: the assemblers' messages as they print them go to the
// program and function whose line they name; the rest stand apart.
func TestAttribute(t *testing.T) {
	t.Parallel()
	o := &asmObject{src: "/tmp/x/b1.s", parts: []*part{
		{prefix: "p0_", first: 3, lines: 10, funcs: []funcLine{{"_start", 3}, {"f1", 7}}},
		{prefix: "p1_", first: 14, lines: 10, funcs: []funcLine{{"_start", 3}, {"f2", 5}}},
	}}
	out := strings.Join([]string{
		"/tmp/x/b1.s: Assembler messages:",
		"/tmp/x/b1.s:12: Warning: about p0_f1 at line 9 of program 0",
		"/tmp/x/b1.s:20:2: warning: canonical Frame Address not in stack- or frame-pointer. Omitting SFrame unwind info for this function",
		"        .cfi_def_cfa %r10, 0",
		"        ^",
		"/tmp/x/b1.s: Warning: skipping SFrame FDE; non-SP/FP register 10 in .cfi_def_cfa",
		"<unknown>:0: warning: non-default RA register",
		"/tmp/x/b2.s:5: Warning: another file",
	}, "\n")
	per, rest := attribute(out, "as", o)
	want0 := image.Warning{Tool: "as", Function: "f1", Line: 9, Text: "Warning: about f1 at line 9 of program 0"}
	want1 := image.Warning{Tool: "as", Function: "f2", Line: 6, Text: "warning: canonical Frame Address not in stack- or frame-pointer. Omitting SFrame unwind info for this function"}
	if len(per[0]) != 1 || per[0][0] != want0 || len(per[1]) != 1 || per[1][0] != want1 {
		t.Errorf("attributed %+v", per)
	}
	if len(rest) != 3 || rest[0].Text != "Warning: skipping SFrame FDE; non-SP/FP register 10 in .cfi_def_cfa" ||
		rest[1].Text != "<unknown>:0: warning: non-default RA register" || !strings.Contains(rest[2].Text, "another file") {
		t.Errorf("left apart %+v", rest)
	}
}
