package target

import (
	"encoding/binary"
	"testing"
)

func TestNamesRoundTrip(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tg := range All {
		n := tg.Name()
		if seen[n] {
			t.Fatalf("name %q used twice", n)
		}
		seen[n] = true
		p, err := Parse(n)
		if err != nil || p != tg {
			t.Errorf("Parse(%q) = %v, %v", n, p, err)
		}
		b, err := tg.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var u Target
		if err := u.UnmarshalText(b); err != nil || u != tg {
			t.Errorf("text round trip of %v gives %v, %v", tg, u, err)
		}
	}
	if _, err := Parse("mips"); err == nil {
		t.Error("Parse accepted mips")
	}
	if _, err := Target(9).MarshalText(); err == nil {
		t.Error("an invalid target marshals")
	}
}

// The facts below are the psABIs' and SFrame's, written out here
// independently of the switch statements that implement them.
func TestABIFacts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tg         Target
		sframeABI  uint8
		big        bool
		sp, fp, ra int
		lr         bool
	}{
		{X86_64, 3, false, 7, 6, 16, false},
		{AArch64, 2, false, 31, 29, 30, true},
		{AArch64BE, 1, true, 31, 29, 30, true},
		{S390X, 4, true, 15, 11, 14, true},
	}
	if len(cases) != len(All) {
		t.Fatalf("%d targets, %d cases", len(All), len(cases))
	}
	for _, c := range cases {
		if uint8(c.tg) != c.sframeABI {
			t.Errorf("%v: value %d, SFrame ABI id %d", c.tg, uint8(c.tg), c.sframeABI)
		}
		if (c.tg.ByteOrder() == binary.BigEndian) != c.big {
			t.Errorf("%v: byte order %v", c.tg, c.tg.ByteOrder())
		}
		if c.tg.SP() != c.sp || c.tg.FP() != c.fp || c.tg.RA() != c.ra || c.tg.HasLinkRegister() != c.lr {
			t.Errorf("%v: sp %d fp %d ra %d lr %v", c.tg, c.tg.SP(), c.tg.FP(), c.tg.RA(), c.tg.HasLinkRegister())
		}
	}
}
