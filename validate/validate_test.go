package validate

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func builtin(t *testing.T, tg target.Target, v sframe.Version, edit func([]sframe.FDE)) *image.Image {
	t.Helper()
	p, err := gen.Generate(tg, 3, gen.Options{SFrameVersion: int(v)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Layout(0x10000000); err != nil {
		t.Fatal(err)
	}
	fdes := p.FDEs()
	if edit != nil {
		edit(fdes)
	}
	img, err := producer.BuiltinFrom(p, v, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestBuiltinSectionsAreValid(t *testing.T) {
	t.Parallel()
	for _, tg := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			if vs := Section(builtin(t, tg, v, nil)); len(vs) != 0 {
				t.Errorf("%v v%d: %v", tg, v, vs)
			}
		}
	}
}

func TestViolations(t *testing.T) {
	t.Parallel()
	overlap := builtin(t, target.X86_64, 3, func(f []sframe.FDE) { f[2].Size = uint32(f[3].Start-f[2].Start) + 4 }) // over any gap, into the next
	wrongTarget := builtin(t, target.AArch64, 3, nil)
	wrongTarget.Target = target.X86_64
	truncated := builtin(t, target.S390X, 2, nil)
	truncated.SFrame = truncated.SFrame[:40]
	for _, c := range []struct {
		name string
		img  *image.Image
		rule string
	}{
		{"overlap", overlap, "functions overlap"},
		{"section for another target", wrongTarget, "ABI differs from the target"},
		{"truncated", truncated, "truncated"},
	} {
		vs := Section(c.img)
		if !Invalid(vs) {
			t.Errorf("%s: not invalid: %v", c.name, vs)
			continue
		}
		if vs[0].Rule != c.rule {
			t.Errorf("%s: rule %q, want %q (%v)", c.name, vs[0].Rule, c.rule, vs)
		}
	}
}

// An FRE at the function's end is a warning: GNU as writes it, libsframe
// accepts it.
func TestFREAtEndIsAWarning(t *testing.T) {
	t.Parallel()
	img := builtin(t, target.X86_64, 3, func(f []sframe.FDE) {
		last := &f[len(f)-1]
		r := last.Rows[len(last.Rows)-1]
		r.Start = last.Size
		last.Rows = append(last.Rows, r)
	})
	vs := Section(img)
	if len(vs) != 1 || !vs[0].Warning || Invalid(vs) || vs[0].Rule != "FRE starts at the function's end" {
		t.Fatalf("violations %+v", vs)
	}
}
