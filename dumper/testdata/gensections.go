//go:build ignore

// gensections writes the builtin-encoded sections of dumper/testdata:
//
//	go run ./dumper/testdata/gensections.go
//
// For each target and SFrame version 2 and 3 it generates programs of the
// generator's default mix (24 functions, seeds from 1 up) and keeps the
// first whose section has every construct a dumper must print on that
// target and version: a PCMASK function, an outermost row, on AArch64 a
// signed RA and a B-key function, in version 3 on x86-64 and s390x a
// flexible function and in version 3 a function without rows. The seed
// is in the file name; the same generator gives the same bytes.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func main() {
	dir := filepath.Join("dumper", "testdata", "sections")
	old, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, t := range target.All {
		for _, v := range []int{2, 3} {
			if err := one(dir, t, v); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}

func one(dir string, t target.Target, v int) error {
	prod, err := producer.New(fmt.Sprintf("builtin-v%d", v))
	if err != nil {
		return err
	}
	for seed := int64(1); seed <= 500; seed++ {
		prog, err := gen.Generate(t, seed, gen.Options{Funcs: 24, SFrameVersion: v})
		if err != nil {
			return err
		}
		if err := prog.Layout(0x10000000); err != nil {
			return err
		}
		img, err := prod.Produce(prog)
		if err != nil {
			return err
		}
		tab, err := sframe.Decode(img.SFrame, img.SFrameAddr)
		if err != nil {
			return err
		}
		fdes, err := tab.Sections[0].FDEs()
		if err != nil {
			return err
		}
		need := map[string]bool{"pcmask": true, "outermost": true}
		if t.IsAArch64() {
			need["signed"], need["keyB"] = true, true
		}
		if v == 3 {
			need["empty"] = true
			if t == target.X86_64 || t == target.S390X {
				need["flex"] = true
			}
		}
		for _, f := range fdes {
			if f.PCType == sframe.PCMask {
				delete(need, "pcmask")
			}
			if f.PAuthKey == sframe.PAuthKeyB {
				delete(need, "keyB")
			}
			if f.Type == sframe.FDETypeFlex {
				delete(need, "flex")
			}
			if len(f.Rows) == 0 {
				delete(need, "empty")
			}
			for _, r := range f.Rows {
				if r.RA.Kind == sframe.RuleUndefined {
					delete(need, "outermost")
				}
				if r.MangledRA {
					delete(need, "signed")
				}
			}
		}
		if len(need) > 0 {
			continue
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-v%d-seed%d", t.Name(), v, seed))
		if err := os.WriteFile(name+".sframe", img.SFrame, 0o644); err != nil {
			return err
		}
		return os.WriteFile(name+".sframe.addr", []byte(fmt.Sprintf("%#x\n", img.SFrameAddr)), 0o644)
	}
	return fmt.Errorf("%s v%d: no seed up to 500 has every construct", t.Name(), v)
}
