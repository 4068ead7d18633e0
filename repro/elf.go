package repro

import (
	"encoding/base64"

	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
)

// elfOf wraps an image's section in the minimal ELF file the dumper
// consumers give objdump, readelf and llvm-readobj.
func elfOf(img *image.Image) ([]byte, error) {
	return dumper.ELF(sframe.ABI(img.Target), img.Target.ByteOrder(), img.SFrame, img.SFrameAddr)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
