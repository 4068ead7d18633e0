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
	"aarch64/v0":    "eb94d7fb21d6eb21fcdc919e99e63d495d0e762fad0707fab5d8499891ec69c6",
	"aarch64/v2":    "c0146a5998216d62c8b624be10cf95b9f9ac90112c13650f9dde2bf25402167f",
	"aarch64/v3":    "781019e15b60d157425edb8e495a483ebc5ca8bcbfbe64ddae26e50eae632d41",
	"aarch64_be/v0": "9531214dfd7971c00e51fd4299f5bacc35b97898e34ae0b73e7315b3c4288c03",
	"aarch64_be/v2": "83f8ac1cd562599a0e4fd1203a155d173ad85a95cc2a671f2df5adbf4b838739",
	"aarch64_be/v3": "a949bd3e079888c8c45fe9208bc74135850f7ad915d8e8a4d80f81f98125a19c",
	"s390x/v0":      "389bd71689cb97f7248328565cdb69783d1e6dd5e519dcae4ac8b4defb779156",
	"s390x/v2":      "04c2e82880b4c6208f8d49629a8291f938a3ffb79fcdf9d1663cb62cb3c4476e",
	"s390x/v3":      "c1c741276dd3a61539fac2356523b0506a9f228b2a93213d6516dfcea1bdc18e",
	"x86-64/v0":     "a68b883a4948d98eda2aeb10100ad8602f184b0d256cd17330eee7917c299c61",
	"x86-64/v2":     "445dc2be4314400bea30694e09db405ae4fd11b1959a356f2c4fe123e73ab152",
	"x86-64/v3":     "db381322fd84f106f951e86ae0038a2db2260e31d32df5023563aa0a24712340",
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
		fmt.Fprintf(h, "func %s %s %#x %d %q %q far=%v empty=%v kind=%q\n", f.Name, f.Pattern, f.Addr, f.Size, f.PartOf, f.StubBlock, f.Far, f.EmptyFDE, f.Kind)
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
