package gen_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// pinnedGeneration holds, for every target and SFrame version (0: the
// default mix of every pattern), the SHA-256 of the programs
// fingerprintPrograms makes: computed once and written here, so that a
// change that only moves code around (renaming files, types, pattern
// properties) is shown to generate the same programs byte for byte. A
// change meant to alter generation updates them, and says why in its
// commit message.
var pinnedGeneration = map[string]string{
	"aarch64/v0":    "3899c481dc55554741477b00724f1ef93cffa96b896e15246d20900a04b28509",
	"aarch64/v2":    "10ae24d334d8d98473df4e6204e909038a7b16b3c18ad7f6a33092a161b75107",
	"aarch64/v3":    "7cce6beecd9dc650bd08025a8c208f47d8a2a1dac105ba6c66ec7d715f271827",
	"aarch64_be/v0": "6825edf482758febff36ed84ee3d6fa8a3d463be911c7d88f0d9224f9f4873f4",
	"aarch64_be/v2": "47e21f7baf150a7402252a57c987d8955bedd64fce7a20c87d65e5948d02ce91",
	"aarch64_be/v3": "2bc0562394302a7c7929c15f02b4732a55e47763bf81fa7da5ff27ccd40fbaf2",
	"s390x/v0":      "22ec8690e544cc9c3b3d0d11a43d6a37e42ff3d286b87bebbda669897a539aaa",
	"s390x/v2":      "ad58a9f37194e56ea1b1fe473896ee7da03d1f3268f90b080513d5521263095d",
	"s390x/v3":      "d88f44989c2f18d669e3d069cabe0cee84685b9122e17ccef8c9623de3285de3",
	"x86-64/v0":     "5c7d31df8fa7a429b3342437a32766a7b2ea4f41e33cb884ecd5778b1a43c586",
	"x86-64/v2":     "e4892a3810812e3abb9a2b925f10c2f2b6680d4e5512c6e19838df19409018a6",
	"x86-64/v3":     "ecb8c9996551b221ca74b1b0d8dc54a5f16ea754bb96c62499069004643f5e6d",
}

// fingerprintSeeds are the seeds of every program set: the default mix gets
// them all, each pattern alone the first few.
var fingerprintSeeds = []int64{0, 1, 2, 3, 7, 42, 1000, -5, 1 << 40, 123456789}

const singlePatternSeeds = 4

// fingerprint hashes what one program is: its code in both segments, entry
// and exit, the arguments of every path, its symbols, stacks and signals,
// the rows of every instruction, the FDEs and the SFrame section the
// builtin encoder makes of them in version v, the assembly text, and what
// every reduction makes of it (plain rebuilds, then the first reduction of
// each other kind).
func fingerprint(h hash.Hash, p *gen.Program, v int) {
	fmt.Fprintf(h, "seed %d base %#x entry %#x exit %#x far %#x\n", p.Seed, p.Base, p.Entry, p.Exit, p.FarBase)
	h.Write(p.Code)
	h.Write(p.FarCode)
	fmt.Fprintf(h, "args %v %v %v\n", p.ArgRegs, p.Args, p.ArgSets)
	fmt.Fprintf(h, "symbols %+v\nstacks %+v\nsignals %+v\nruleregs %v\n", p.Symbols(), p.Stacks(), p.Signals(), p.RuleRegs())
	for _, f := range p.Funcs {
		fmt.Fprintf(h, "func %s %s %#x %d %q %q far=%v empty=%v kind=%q\n", f.Name, f.Pattern, f.Addr, f.Size, f.PartOf, f.StubBlock, f.Far, f.EmptyFDE, f.Kind)
		for _, in := range f.Insns {
			fmt.Fprintf(h, "%d %x %q %+v %v %d\n", in.Off, in.Bytes, in.Text, in.Row, in.Call, in.Pad)
		}
		fmt.Fprintf(h, "rows %+v\n", f.Rows)
	}
	fdes := p.FDEs()
	fmt.Fprintf(h, "fdes %+v\n", fdes)
	if v == 0 {
		v = 3
	}
	abi := sframe.ABI(p.Target)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(abi)
	opt := sframe.EncodeOptions{Version: sframe.Version(v), ABI: abi, Base: 0x40000000, PCRel: true, CFAFixedFP: fixedFP, CFAFixedRA: fixedRA}
	for i := range fdes {
		fdes[i].Type = sframe.ChooseFDEType(&fdes[i], opt)
	}
	sec, err := sframe.Encode(fdes, opt)
	fmt.Fprintf(h, "sframe v%d %x %v\n", v, sec, err)
	h.Write([]byte(p.Assembly()))
	fmt.Fprintf(h, "reductions %+v\n", p.Reductions())
}

// fingerprintReductions returns how many reduced programs it hashed.
func fingerprintReductions(h hash.Hash, p *gen.Program, v int) int {
	n := 0
	seen := map[string]bool{}
	for _, r := range p.Reductions() {
		if r.Op != gen.ReducePlain && seen[r.Op] {
			continue
		}
		seen[r.Op] = true
		q, err := p.Reduce(r)
		fmt.Fprintf(h, "reduce %+v: %v\n", r, err)
		if err == nil {
			fingerprint(h, q, v)
			n++
		}
	}
	return n
}

// fingerprintPrograms hashes the programs of one target and version: the
// default mix for every seed, and every pattern the version expresses
// alone for the first seeds. It returns the hash and how many programs it
// made.
func fingerprintPrograms(t *testing.T, abi target.Target, v int) (string, int) {
	h := sha256.New()
	n := 0
	gen1 := func(seed int64, opt gen.Options, reduce bool) {
		p, err := gen.Generate(abi, seed, opt)
		fmt.Fprintf(h, "generate %s %d %+v: %v\n", abi.Name(), seed, opt, err)
		if err != nil {
			return
		}
		n++
		fingerprint(h, p, v)
		if reduce {
			n += fingerprintReductions(h, p, v)
		}
	}
	for _, seed := range fingerprintSeeds {
		gen1(seed, gen.Options{SFrameVersion: v}, true)
	}
	gen1(fingerprintSeeds[0], gen.Options{SFrameVersion: v, Funcs: 24, MaxDepth: 6, Paths: 6}, false)
	for _, name := range gen.Patterns(abi) {
		for _, seed := range fingerprintSeeds[:singlePatternSeeds] {
			gen1(seed, gen.Options{SFrameVersion: v, Patterns: []string{name}}, seed == fingerprintSeeds[0])
		}
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// TestGenerationPinned checks that generation is what it was when the
// hashes were pinned: the same programs, byte for byte, for a fixed set of
// seeds, targets, SFrame versions and patterns.
func TestGenerationPinned(t *testing.T) {
	t.Parallel()
	total := 0
	var got []string
	for _, abi := range target.All {
		for _, v := range []int{0, 2, 3} {
			key := fmt.Sprintf("%s/v%d", abi.Name(), v)
			sum, n := fingerprintPrograms(t, abi, v)
			total += n
			got = append(got, fmt.Sprintf("\t%q: %q,", key, sum))
			if want, ok := pinnedGeneration[key]; !ok {
				t.Errorf("%s: no pinned hash", key)
			} else if sum != want {
				t.Errorf("%s: the %d programs hash to %s, pinned %s: generation changed", key, n, sum, want)
			}
		}
	}
	if len(pinnedGeneration) != len(got) {
		t.Errorf("%d pinned hashes for %d target/version pairs", len(pinnedGeneration), len(got))
	}
	if t.Failed() {
		slices.Sort(got)
		t.Logf("hashes of this tree:\n%s", joinLines(got))
	}
	t.Logf("%d programs checked", total)
}

func joinLines(s []string) string {
	out := ""
	for _, l := range s {
		out += l + "\n"
	}
	return out
}
