package producer

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// The GNU producers: one per provisioned binutils series (gas-2.40,
// gas-2.44, gas-2.47: Debian bookworm, trixie and sid), found when the
// program starts, and gas:<dir> for a binutils developer's own build.
func init() {
	for _, series := range toolchain.SetupBinutilsSeries {
		Expect(About{Name: "gas-" + series, Setup: toolchain.SetupBinutils, Summary: gasSummary(series)})
	}
	ExpectFamily("gas-", toolchain.SetupBinutils)
	names, _ := toolchain.Names()
	for _, name := range names {
		name := name
		Register(About{Name: name, Setup: toolchain.SetupBinutils, Summary: gasSummary(strings.TrimPrefix(name, "gas-"))}, func(_, arg string) (Producer, error) {
			if arg != "" {
				return nil, fmt.Errorf("producer %s takes no argument", name)
			}
			return newGAS(name, func() ([]toolchain.Toolchain, error) {
				all, err := toolchain.All()
				var out []toolchain.Toolchain
				for _, tc := range all {
					if tc.Name == name {
						out = append(out, tc)
					}
				}
				if len(out) > 0 {
					err = nil // another toolchain's trouble is not this one's
				}
				return out, err
			}), nil
		})
	}
	Register(About{Name: "gas", Setup: toolchain.NoSetup, NeedsArg: true,
		Summary: "gas:DIR, GNU as and ld (or as-new and ld-new) of a binutils build of one's own"}, func(name, dir string) (Producer, error) {
		if dir == "" {
			return nil, fmt.Errorf("producer gas needs a directory: gas:<dir> with as and ld, or as-new and ld-new of a build tree (provisioned: %s)",
				strings.Join(namesWithPrefix("gas-"), ", "))
		}
		p := newGAS(name, func() ([]toolchain.Toolchain, error) { return toolchain.FromDir(dir) })
		// A directory without tools is a usage error, said at once.
		if _, err := p.toolchains(); err != nil {
			return nil, err
		}
		return p, nil
	})
}

func gasSummary(series string) string {
	return "GNU as --gsframe and ld of binutils " + series + " (Debian)"
}

func namesWithPrefix(prefix string) []string {
	var out []string
	for _, n := range Names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// GAS assembles the Program's assembly text (.cfi_* directives derived
// from gen's rows, and nothing else of them) with GNU as --gsframe, links
// it with the same binutils' ld at the addresses gen laid it out at, and
// loads the executable: its .sframe, found through the PT_GNU_SFRAME
// segment, is the image's section, the toolchain's own table. The image's
// code and symbols are the linked file's, checked against gen's layout.
type GAS struct {
	name string
	find func() ([]toolchain.Toolchain, error)

	once sync.Once
	tcs  map[target.Target]toolchain.Toolchain
	err  error
	mu   sync.Mutex
	// builds are made once per target: they hold the tools' versions.
	builds map[target.Target]*toolBuild
}

func newGAS(name string, find func() ([]toolchain.Toolchain, error)) *GAS {
	return &GAS{name: name, find: find, builds: map[target.Target]*toolBuild{}}
}

func (g *GAS) Name() string { return g.name }

// ExactVersion names the binutils the producer runs and its Debian
// package; of several targets' toolchains, the first's.
func (g *GAS) ExactVersion() string {
	tcs, err := g.toolchains()
	if err != nil {
		return g.name
	}
	return toolsVersion("GNU as and ld", "binutils", tcs)
}

// toolsVersion is tool's version in tcs and the Debian package (source
// package pkg) it came from.
func toolsVersion(tool, pkg string, tcs map[target.Target]toolchain.Toolchain) string {
	for _, t := range target.All {
		if tc, ok := tcs[t]; ok {
			if tc.Package == "" {
				return fmt.Sprintf("%s %s (%s)", tool, tc.Version, tc.AS)
			}
			return fmt.Sprintf("%s %s (Debian %s %s %s)", tool, tc.Version, tc.Suite, pkg, tc.Package)
		}
	}
	return tool
}

// toolchains finds (once) the producer's toolchain for every target.
func (g *GAS) toolchains() (map[target.Target]toolchain.Toolchain, error) {
	g.once.Do(func() {
		all, err := g.find()
		g.tcs = map[target.Target]toolchain.Toolchain{}
		for _, tc := range all {
			if _, dup := g.tcs[tc.Target]; !dup {
				g.tcs[tc.Target] = tc
			}
		}
		if len(g.tcs) == 0 {
			if err == nil {
				err = toolchain.NotProvisioned(toolchain.SetupBinutils, "%s: no toolchain", g.name)
			}
			g.err = err
		}
	})
	return g.tcs, g.err
}

// SFrameVersion is what the assembler was measured to emit for t; a
// version that cannot (GNU as before 2.46 for s390x) says why in its own
// words.
func (g *GAS) SFrameVersion(t target.Target) (int, error) {
	tcs, err := g.toolchains()
	return emitted(g.name, "GNU as", tcs, err, t)
}

// emitted is the SFrame version the toolchain of tcs for t was measured
// to emit, or why there is none: no toolchain for t, or an assembler
// (tool, as a message names it) that emits no SFrame for t.
func emitted(name, tool string, tcs map[target.Target]toolchain.Toolchain, err error, t target.Target) (int, error) {
	if err != nil {
		return 0, err
	}
	tc, ok := tcs[t]
	if !ok {
		step := 0 // a toolchain of one's own (gas:DIR): no setup step provides it
		if a, ok := Lookup(name); ok && a.Setup > 0 {
			step = a.Setup
		}
		return 0, toolchain.NotProvisioned(step, "%s has no toolchain for %s", name, t.Name())
	}
	if tc.SFrameVersion == 0 {
		return 0, fmt.Errorf("%s %s does not emit SFrame for %s: %s", tool, tc.Version, t.Name(), tc.SFrameUnsupportedReason())
	}
	return tc.SFrameVersion, nil
}

func (g *GAS) build(t target.Target) (*toolBuild, error) {
	if _, err := g.SFrameVersion(t); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if b := g.builds[t]; b != nil {
		return b, nil
	}
	tc := g.tcs[t]
	as, err := toolOf("as", tc.AS, tc)
	if err != nil {
		return nil, err
	}
	ld, err := toolOf("ld", tc.LD, tc)
	if err != nil {
		return nil, err
	}
	b := &toolBuild{producer: g.name, target: t, version: tc.SFrameVersion, as: tc, asFlags: []string{"--gsframe"},
		ld: tc, tools: []image.Tool{as, ld}, objects: 1}
	g.builds[t] = b
	return b, nil
}

// Produce makes the image of one laid-out program.
func (g *GAS) Produce(p *gen.Program) (*image.Image, error) {
	imgs, errs := g.ProduceBatch([]*gen.Program{p})
	return imgs[0], errs[0]
}

// ProduceBatch assembles the programs as one source file and links them
// once. Each image carries the whole linked .sframe, as the toolchain
// wrote it for all of them.
func (g *GAS) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	return produceWith(progs, g.build)
}

// produceWith runs the target's build over progs, or reports on every
// program why there is none.
func produceWith(progs []*gen.Program, build func(target.Target) (*toolBuild, error)) ([]*image.Image, []error) {
	return produceLayout(progs, build, false)
}

// produceLayout is produceWith, the programs the modules layout picks
// built one ELF per module when modules is set (toolmodules.go).
func produceLayout(progs []*gen.Program, build func(target.Target) (*toolBuild, error), modules bool) ([]*image.Image, []error) {
	if len(progs) == 0 {
		return nil, nil
	}
	b, err := build(progs[0].Target)
	if err != nil {
		errs := make([]error, len(progs))
		for i := range errs {
			errs[i] = err
		}
		return make([]*image.Image, len(progs)), errs
	}
	return b.produceLayout(progs, modules)
}

// IsToolchain reports whether p runs real tools (and so its table may
// differ from sfconform's own encoding of the same program).
func IsToolchain(p Producer) bool {
	_, builtin := p.(Builtin)
	return !builtin
}

var _ BatchProducer = (*GAS)(nil)
