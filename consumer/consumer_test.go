package consumer

import (
	"errors"
	"testing"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

func TestNew(t *testing.T) {
	c, err := New("builtin")
	if err != nil || c.Name() != "builtin" || c.BatchSize() != 1 {
		t.Fatalf("builtin: %v, %v", c, err)
	}
	if _, err := New("nonesuch:arg"); err == nil {
		t.Fatal("unknown consumer accepted")
	}
}

func TestBuiltinRefusesMalformedSection(t *testing.T) {
	b := NewBuiltin()
	img := &producer.Image{ABI: sframe.ABIAMD64LE, SFrame: []byte{0xe2, 0xde, 3}}
	err := b.Load(img)
	var fe *sframe.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("Load of a 3-byte section: %v, want a FormatError", err)
	}
	out := make([]Result, 1)
	if err := b.Unwind([]Step{{Regs: &sframe.RegisterFile{}}}, out); err == nil {
		t.Fatal("Unwind after a refused Load succeeded")
	}
}
