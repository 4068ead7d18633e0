package producer

import (
	"fmt"

	"github.com/sfconform/sfconform/toolchain"
)

// gas-src: GNU as and ld of binutils built from Debian sid's source
// package (make binutils-src, ci/binutils-src.sh). Registered only when the
// build is there: make setup does not provide it, so its absence is not a
// broken setup.
func init() {
	b, err := toolchain.FindSourceBuild()
	if err != nil && len(b.Toolchains) == 0 {
		return
	}
	name := "gas-src"
	Register(About{Name: name, Setup: toolchain.SetupBinutilsSrc,
		Summary: fmt.Sprintf("GNU as --gsframe and ld of binutils %s built from source (Debian sid source package %s)", b.Version, b.Package)},
		func(_, arg string) (Producer, error) {
			if arg != "" {
				return nil, fmt.Errorf("producer %s takes no argument", name)
			}
			p := newGAS(name, func() ([]toolchain.Toolchain, error) {
				b, err := toolchain.FindSourceBuild()
				if err != nil && len(b.Toolchains) == 0 {
					return nil, err
				}
				return b.Probed()
			})
			if _, err := p.toolchains(); err != nil {
				return nil, err
			}
			return p, nil
		})
}
