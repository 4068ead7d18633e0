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
	"aarch64/v0":    "4f0920fda14a7e69fe8941fe0f8cff9c98f76cf01e2bb40f6ced3f4287da54da",
	"aarch64/v2":    "f772967d9f2a028cb6d3315c6af8bba6e48fbfc3efe71a2736d65a190a5f4216",
	"aarch64/v3":    "edce1c1f65100fb9fc41bd6ca9a48369e52f6be8d3dcaa4e33d690f9ad4108d7",
	"aarch64_be/v0": "089eaffa1ead51feee05419c3683863c4ea2f5aded5af2af83d892791f4b1978",
	"aarch64_be/v2": "6f5e832e2a813f335a70afd586a5d673ad744c3e2a7365a03ee770af2e309196",
	"aarch64_be/v3": "b7e53509202c9967dd5827ee37c4092a28723ead6ee9adf805556e4fa1316f57",
	"s390x/v0":      "f5a3035c7abb012216709bfc6a564e1d0826a8b35921c786a32612dc9a19d434",
	"s390x/v2":      "c45890d326c7881550e3ea9be2990095009bfc23894b8bbacc6f0fe6751368b3",
	"s390x/v3":      "50c9e8cf1423d616ce77c9be382a17e0bf5bd9ebd3a476a7ab9220648de868ea",
	"x86-64/v0":     "ff2daf1052f1b16509986bf4ebaf73b7faa229e2f55f7d4fca064c0e86da663a",
	"x86-64/v2":     "334fb5e9c5eabf82b5593121e58643661af8032cdb4fec2403a6050d9411d6ee",
	"x86-64/v3":     "a1d8ff561798e824e1261df506341eab241393d644ad7c6b9766522f724e514f",
}

// fingerprintSeeds are the seeds of every program set: the default mix gets
// them all, each pattern alone the first few. They are made without idle
// functions (gen.Options.Idle -1), which idleSeeds pin: seed 10 gets
// hundreds, 20 thousands and 500 ten thousand (gen.IdleCount), each with
// one reduction that drops some.
var fingerprintSeeds = []int64{0, 1, 2, 3, 7, 42, 1000, -5, 1 << 40, 123456789}

var idleSeeds = []int64{10, 20, 500}

const singlePatternSeeds = 4

// fingerprint hashes what one program is: its code in both segments, entry
// and exit, the arguments of every path, its symbols, stacks and signals,
// the rows of every instruction, the FDEs and the SFrame section the
// builtin encoder makes of them in version v, the assembly text, and what
// every reduction makes of it (plain rebuilds, then the first reduction of
// each other kind).
//
// Rows and FDEs are hashed with %#v, field by field, and an encoding error
// by its presence: how a rule or an error prints is not generation.
func fingerprint(h hash.Hash, p *gen.Program, v int) {
	fmt.Fprintf(h, "seed %d base %#x entry %#x exit %#x far %#x\n", p.Seed, p.Base, p.Entry, p.Exit, p.FarBase)
	h.Write(p.Code)
	h.Write(p.FarCode)
	fmt.Fprintf(h, "args %v %v %v\n", p.ArgRegs, p.Args, p.ArgSets)
	fmt.Fprintf(h, "symbols %+v\nstacks %+v\nsignals %+v\nruleregs %v\n", p.Symbols(), p.Stacks(), p.Signals(), p.RuleRegs())
	for _, f := range p.Funcs {
		fmt.Fprintf(h, "func %s %s %#x %d %q %q far=%v empty=%v kind=%q idle=%v\n", f.Name, f.Pattern, f.Addr, f.Size, f.PartOf, f.StubBlock, f.Far, f.EmptyFDE, f.Kind, f.Idle)
		for _, in := range f.Insns {
			fmt.Fprintf(h, "%d %x %q %#v %v %d\n", in.Off, in.Bytes, in.Text, in.Row, in.Call, in.Pad)
		}
		fmt.Fprintf(h, "rows %#v\n", f.Rows)
	}
	fdes := p.FDEs()
	fmt.Fprintf(h, "fdes %#v\n", fdes)
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
	fmt.Fprintf(h, "sframe v%d %x %v\n", v, sec, err != nil)
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
		gen1(seed, gen.Options{SFrameVersion: v, Idle: -1}, true)
	}
	gen1(fingerprintSeeds[0], gen.Options{SFrameVersion: v, Funcs: 24, MaxDepth: 6, Paths: 6, Idle: -1}, false)
	for _, name := range gen.Patterns(abi) {
		for _, seed := range fingerprintSeeds[:singlePatternSeeds] {
			gen1(seed, gen.Options{SFrameVersion: v, Patterns: []string{name}, Idle: -1}, seed == fingerprintSeeds[0])
		}
	}
	for _, seed := range idleSeeds {
		p, err := gen.Generate(abi, seed, gen.Options{SFrameVersion: v})
		fmt.Fprintf(h, "generate %s %d idle: %v\n", abi.Name(), seed, err)
		if err != nil {
			continue
		}
		if p.IdleFuncs() != gen.IdleCount(seed) || p.IdleFuncs() < 100 {
			t.Errorf("%s seed %d: %d idle functions, IdleCount says %d", abi.Name(), seed, p.IdleFuncs(), gen.IdleCount(seed))
		}
		fingerprint(h, p, v)
		n++
		q, err := p.Reduce(gen.Reduction{Op: gen.ReduceIdle, N: p.IdleFuncs() / 2})
		fmt.Fprintf(h, "reduce idle: %v\n", err)
		if err == nil {
			fingerprint(h, q, v)
			n++
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
