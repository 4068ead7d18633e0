package gen

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/sfconform/sfconform/sframe"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// TestS390XPatternsMatchGasSFrame is TestGasSFrameMatchesRows for each
// s390x pattern alone, so that every one of them, however rare in the
// default mix, goes through GNU as: the rendered .cfi_* directives
// (.cfi_register to an FPR, .cfi_def_cfa on %r11 with a negative offset,
// CFA offsets of 256 KiB) must give gen's rows. Beyond the rows, the FRE
// bytes of the linked section must equal those sframe.Encode writes for
// gen's rows: the data word sizes (cfa-edges' words at the edges), the
// FLEX encoding of registers and the RA padding word as GNU as writes
// them. Only gas 2.47 emits SFrame for s390x; the older ones say why not,
// which the log shows.
func TestS390XPatternsMatchGasSFrame(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no provisioned GNU toolchain to compare SFrame rows with: %v", err)
	}
	seeds := int64(6)
	if testing.Short() {
		seeds = 2
	}
	for _, tc := range all {
		if tc.Target != target.S390X {
			continue
		}
		if tc.SFrameVersion == 0 {
			t.Logf("%s: no SFrame for s390x: %s", tc.Name, tc.SFrameUnsupportedReason())
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, pat := range isaFor(target.S390X).own {
				for seed := int64(1); seed <= seeds; seed++ {
					p, err := Generate(target.S390X, seed, Options{Patterns: []string{pat.name}})
					if err != nil {
						t.Fatal(err)
					}
					compareFDEs(t, tc.Name+" "+pat.name, p, gasSFrame(t, tc, dir, p, p.Assembly()), compareOpts{withStub: tc.SFrameVersion >= 3, withParts: true})
					compareFREBytes(t, tc, filepath.Join(dir, "p"), p, pat.name)
				}
			}
		})
	}
}

// compareFREBytes compares the FRE sub-section (v3: with the function
// attributes) of the linked executable exe with sframe.Encode's for p's
// rows at the same address, each FDE typed as GNU as would type it.
func compareFREBytes(t *testing.T, tc toolchain.Toolchain, exe string, p *Program, what string) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".sframe")
	if sec == nil {
		t.Fatalf("%s: no .sframe", exe)
	}
	gas, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	opt := sframe.EncodeOptions{Version: sframe.Version(tc.SFrameVersion), ABI: sframe.ABI(p.Target), Base: sec.Addr, PCRel: true}
	opt.CFAFixedFP, opt.CFAFixedRA = sframe.DefaultFixedOffsets(opt.ABI)
	fdes := p.FDEs()
	for i := range fdes {
		fdes[i].Type = sframe.ChooseFDEType(&fdes[i], opt)
	}
	own, err := sframe.Encode(fdes, opt)
	if err != nil {
		t.Fatal(err)
	}
	fres := func(b []byte) []byte {
		if len(b) < sframe.HeaderSize {
			t.Fatalf("%d-byte section", len(b))
		}
		return b[sframe.HeaderSize+int(b[7])+int(binary.BigEndian.Uint32(b[24:])):]
	}
	if g, o := fres(gas), fres(own); !bytes.Equal(g, o) {
		t.Fatalf("%s %s seed %d: FRE bytes differ\n%s % x\nsframe.Encode % x", tc.Name, what, p.Seed, tc.Name, g, o)
	}
}
