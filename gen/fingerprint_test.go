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
	"aarch64/v0":    "cb64c69fca180bac8e900b24127ada5df59eb2bb75331e726d09ef6ffdba8a8f",
	"aarch64/v2":    "03b7c196e86f704138fc39276bffc882a6006b01380b0ff239df888af5901d7b",
	"aarch64/v3":    "ffa0200b8a3eff9b9dedb997c0e5fa23f81c92e5fb42961abb1d82f20602e0d4",
	"aarch64_be/v0": "5ef307e0d1e0c1174e75d3f93cb44e8683e32f3d9d6c5d2719dabe821b4e7632",
	"aarch64_be/v2": "00e6ea81b81e962a2ecc2e5df6adb6d6054510147224cc5e4d0210d7e89de0f9",
	"aarch64_be/v3": "2d56c3317b8300ee7dbd1e6f421e167ad5955022b8d029f1d29a4118cffd2b2e",
	"s390x/v0":      "c3bfecaf098acaa231f220a258e869a22a4d9c4c31892797804924f4bc2cd0b8",
	"s390x/v2":      "d380b420b9a03be956a7196a15e68b862a28d83291ad5c7d769941d5c2f6a1ce",
	"s390x/v3":      "85d2e0466c9942813f290a8b14fb0a36c459e4b8e5732734f32331cb79d91c5e",
	"x86-64/v0":     "cc80643a29df8882c38338af598dea3cefc9f9ebb57ed0fb8316ece7dee5a226",
	"x86-64/v2":     "25ef81e4ed162f6f82c450c29f917e739f3266a9c276682ed234c47de44b2f71",
	"x86-64/v3":     "db8de1d55600c595111a673be671e31418b70bc78ef6da7912d36644c391579f",
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
