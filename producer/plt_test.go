package producer

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
)

// fakePLT is what a linker would have made of p, alone, linked through
// the PLT: one x86-64 PLT entry per stub called, after PLT0 at plt, each
// bound to the stub's target, and the calls reaching the entries.
func fakePLT(t *testing.T, p *gen.Program, prefix string, plt uint64) *linked {
	t.Helper()
	l := fakeLinked(p, prefix)
	abi := pltABIs[target.X86_64]
	l.plt = &pltLinked{addr: plt, abi: abi, entries: map[string]pltEntry{}}
	to := map[string]uint64{}
	for i, s := range p.PLTStubs() {
		e := pltEntry{addr: plt + uint64(abi.first+i*abi.entry), symbol: prefix + gen.PLTName(s), value: l.funcs[prefix+p.StubTarget(s)].Value}
		l.plt.entries[e.symbol] = e
		to[s] = e.addr
	}
	l.plt.code = make([]byte, abi.first+len(to)*abi.entry)
	l.plt.got = []image.Segment{{Addr: 0x10100000, Code: make([]byte, 8*(3+len(to)))}}
	var err error
	if l.text, err = p.CodeWithCalls(to); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPLTImage: a program linked through the PLT gets the .plt and the
// GOT as segments and a symbol for PLT0 and each of its entries, but only
// when the linked file has an entry for every stub it calls, bound to the
// stub's target, and its code is gen's with each such call reaching the
// stub's entry; anything else is an error naming what differs.
func TestPLTImage(t *testing.T) {
	t.Parallel()
	p, err := gen.Generate(target.X86_64, 3, gen.Options{Patterns: []string{"plt-stubs", "fp-frame", "leaf"}, SFrameVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Layout(0x10000000); err != nil {
		t.Fatal(err)
	}
	stubs := p.PLTStubs()
	if len(stubs) < 2 {
		t.Fatalf("seed 3 calls %d stubs", len(stubs))
	}
	b := &toolBuild{producer: "gas-test", target: target.X86_64}
	pt := &part{prog: p, prefix: "p0_"}
	const plt = 0xfe01000
	img, err := b.load(fakePLT(t, p, "p0_", plt), pt, &image.Record{})
	if err != nil {
		t.Fatalf("the exact link refused: %v", err)
	}
	if len(img.Segments) != 2 || img.Segments[0].Addr != plt || img.Segments[1].Addr != 0x10100000 {
		t.Errorf("segments %+v, want the .plt and the GOT", img.Segments)
	}
	if s, ok := img.SymbolAt(plt); !ok || s.Name != ".plt" || s.Size != 16 {
		t.Errorf("PLT0: symbol %+v", s)
	}
	for i, st := range stubs {
		if s, ok := img.SymbolAt(plt + 16 + 16*uint64(i) + 5); !ok || s.Name != st+"@plt" || s.Addr != plt+16+16*uint64(i) {
			t.Errorf("PLT entry %d: symbol %+v, want %s@plt", i+1, s, st)
		}
	}
	if img.Record.Assembly != p.AssemblyWith(gen.AsmOptions{PLT: true}) || !strings.Contains(img.Record.Assembly, gen.PLTName(stubs[0])+"@PLT") {
		t.Errorf("the record does not keep the text assembled through the PLT")
	}
	if len(img.Symbols) != len(p.Symbols())+1+len(stubs) {
		t.Errorf("%d symbols, want gen's %d, PLT0 and %d entries", len(img.Symbols), len(p.Symbols()), len(stubs))
	}
	first := "p0_" + gen.PLTName(stubs[0])
	for _, c := range []struct {
		name string
		edit func(l *linked)
		want string
	}{
		{"entry gone", func(l *linked) { delete(l.plt.entries, first) }, "no entry for " + first},
		{"bound elsewhere", func(l *linked) {
			e := l.plt.entries[first]
			e.value += 4
			l.plt.entries[first] = e
		}, "is bound to"},
		{"call to the stub", func(l *linked) { l.text = append(l.text[:0], p.Code...) }, "calls to stubs sent to their PLT entries"},
	} {
		l := fakePLT(t, p, "p0_", plt)
		c.edit(l)
		if _, err := b.load(l, pt, &image.Record{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
