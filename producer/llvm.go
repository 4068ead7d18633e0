package producer

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// llvmObjects is how many objects llvm-mc makes of a batch: GNU ld does
// not merge llvm-mc's sections (see LLVMMC), so the linked .sframe is that
// many sections laid end to end, and every image exercises a consumer's
// reading of several sections.
const llvmObjects = 3

// The llvm-mc producers, one per provisioned LLVM (llvm-mc-23).
func init() {
	for _, major := range toolchain.SetupLLVMMajors {
		Expect(About{Name: "llvm-mc-" + major, Setup: toolchain.SetupLLVM, Summary: llvmSummary(major)})
	}
	ExpectFamily("llvm-mc-", toolchain.SetupLLVM)
	for _, name := range toolchain.LLVMNames() {
		name := name
		Register(About{Name: name, Setup: toolchain.SetupLLVM, Summary: llvmSummary(strings.TrimPrefix(name, "llvm-mc-"))}, func(_, arg string) (Producer, error) {
			if arg != "" {
				return nil, fmt.Errorf("producer %s takes no argument", name)
			}
			return &LLVMMC{name: name, builds: map[target.Target]*toolBuild{}}, nil
		})
	}
}

// LLVMMC assembles the Program's assembly text with llvm-mc --gsframe and
// links the objects with GNU ld at gen's addresses, like GAS.
//
// No linker merges llvm-mc's sections (measured, LLVM 23.1.4, x86-64,
// SFrame version 2 with the FDE_FUNC_START_PCREL flag): lld has no SFrame
// support; GNU ld 2.40 and 2.44 do not know the PCREL flag, print "error
// in b0.o(.sframe); no .sframe will be created", exit 0 and copy the input
// sections one after the other into .sframe (with their relocations
// applied, so every function start is right, but unsorted and one header
// per object) under a PT_GNU_SFRAME segment; GNU ld 2.47 refuses version 2
// input ("unexpected SFrame format version 2", "SFrame section ignored")
// and writes an empty .sframe. LLVMMC therefore links with the newest
// provisioned GNU ld that keeps the section (2.44 today), found by
// linking a probe, and records ld's message with every image. A batch is
// llvmObjects objects, so the linked section holds that many sections:
// llvm-mc's own tables, laid end to end as these linkers leave them.
type LLVMMC struct {
	name   string
	mu     sync.Mutex
	builds map[target.Target]*toolBuild
	tcs    map[target.Target]toolchain.Toolchain
	err    error
}

func (l *LLVMMC) Name() string { return l.name }

func llvmSummary(major string) string {
	return "llvm-mc --gsframe of LLVM " + major + " (Debian sid), linked with GNU ld"
}

// ExactVersion names the llvm-mc the producer runs and its Debian
// package (the ld it links with is in each image's record).
func (l *LLVMMC) ExactVersion() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	tcs, err := l.toolchains()
	if err != nil {
		return l.name
	}
	return toolsVersion("llvm-mc", "llvm-toolchain-"+strings.TrimPrefix(l.name, "llvm-mc-"), tcs)
}

func (l *LLVMMC) toolchains() (map[target.Target]toolchain.Toolchain, error) {
	if l.tcs != nil || l.err != nil {
		return l.tcs, l.err
	}
	all, err := toolchain.LLVM()
	l.tcs = map[target.Target]toolchain.Toolchain{}
	for _, tc := range all {
		if tc.Name == l.name {
			l.tcs[tc.Target] = tc
		}
	}
	if len(l.tcs) == 0 {
		if err == nil {
			err = toolchain.NotProvisioned(toolchain.SetupLLVM, "%s", l.name)
		}
		l.tcs, l.err = nil, err
	}
	return l.tcs, l.err
}

// SFrameVersion is what llvm-mc was measured to emit for t, or why it
// emits nothing usable (LLVM 23: no .sframe for s390x; for AArch64 an
// empty table, every function "omitted" for its return column).
func (l *LLVMMC) SFrameVersion(t target.Target) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.versionLocked(t)
}

func (l *LLVMMC) versionLocked(t target.Target) (int, error) {
	tcs, err := l.toolchains()
	return emitted(l.name, "llvm-mc", tcs, err, t)
}

func (l *LLVMMC) build(t target.Target) (*toolBuild, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.versionLocked(t); err != nil {
		return nil, err
	}
	if b := l.builds[t]; b != nil {
		return b, nil
	}
	mc := l.tcs[t]
	ld, err := linkerFor(mc)
	if err != nil {
		return nil, err
	}
	mcTool, err := toolOf("llvm-mc", mc.AS, mc)
	if err != nil {
		return nil, err
	}
	ldTool, err := toolOf("ld", ld.LD, ld)
	if err != nil {
		return nil, err
	}
	b := &toolBuild{producer: l.name, target: t, version: mc.SFrameVersion, as: mc, asFlags: []string{"--gsframe"},
		ld: ld, tools: []image.Tool{mcTool, ldTool}, objects: llvmObjects}
	l.builds[t] = b
	return b, nil
}

// linkerFor picks the GNU ld that keeps llvm-mc's .sframe: the newest
// provisioned one whose output of a probe still has the section.
func linkerFor(mc toolchain.Toolchain) (toolchain.Toolchain, error) {
	all, err := toolchain.All()
	var tried []string
	for i := len(all) - 1; i >= 0; i-- {
		ld := all[i]
		if ld.Target != mc.Target {
			continue
		}
		ok, why := keepsSFrame(mc, ld)
		if ok {
			return ld, nil
		}
		tried = append(tried, fmt.Sprintf("ld %s: %s", ld.Version, why))
	}
	if len(tried) == 0 {
		return toolchain.Toolchain{}, fmt.Errorf("no GNU ld for %s to link llvm-mc's objects with: %v", mc.Target.Name(), err)
	}
	return toolchain.Toolchain{}, fmt.Errorf("no provisioned GNU ld keeps llvm-mc %s's .sframe for %s: %s", mc.Version, mc.Target.Name(), strings.Join(tried, "; "))
}

// Produce makes the image of one laid-out program.
func (l *LLVMMC) Produce(p *gen.Program) (*image.Image, error) {
	imgs, errs := l.ProduceBatch([]*gen.Program{p})
	return imgs[0], errs[0]
}

// ProduceBatch assembles the programs as llvmObjects objects (fewer for a
// smaller batch) and links them once.
func (l *LLVMMC) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	return produceWith(progs, l.build)
}

var _ BatchProducer = (*LLVMMC)(nil)

// keepProbe is a one-function source for linkerFor's probe.
const keepProbe = `	.text
	.type f, @function
f:
	.cfi_startproc
	nop
	.cfi_endproc
	.size f, .-f
`

var keeps sync.Map // "mc\x00ld" -> keepResult

type keepResult struct {
	ok  bool
	why string
}

// keepsSFrame links a probe assembled by mc with ld and says whether the
// executable still has .sframe contents, and if not what ld said.
func keepsSFrame(mc, ld toolchain.Toolchain) (bool, string) {
	key := mc.AS + "\x00" + strings.Join(mc.ASFlags, " ") + "\x00" + ld.LD
	if r, ok := keeps.Load(key); ok {
		return r.(keepResult).ok, r.(keepResult).why
	}
	r := func() keepResult {
		dir, err := os.MkdirTemp("", "sfconform-keeps-")
		if err != nil {
			return keepResult{why: err.Error()}
		}
		defer os.RemoveAll(dir)
		src, obj, exe := filepath.Join(dir, "k.s"), filepath.Join(dir, "k.o"), filepath.Join(dir, "k")
		if err := os.WriteFile(src, []byte(keepProbe), 0o644); err != nil {
			return keepResult{why: err.Error()}
		}
		if _, err := mc.Assemble(src, obj, "--gsframe"); err != nil {
			return keepResult{why: err.Error()}
		}
		run, err := ld.Link(toolchain.Link{Output: exe, Objects: []string{obj}, Text: 0x10000000, Entry: 0x10000000})
		if err != nil {
			return keepResult{why: err.Error()}
		}
		f, err := elf.Open(exe)
		if err != nil {
			return keepResult{why: err.Error()}
		}
		defer f.Close()
		if s := f.Section(".sframe"); s != nil && s.Size > 0 {
			return keepResult{ok: true}
		}
		why := "no .sframe in the output"
		if run.Output != "" {
			why += " (" + strings.Join(strings.Fields(linkerText(run.Output, dir)), " ") + ")"
		}
		return keepResult{why: why}
	}()
	keeps.Store(key, r)
	return r.ok, r.why
}

// linkerText is ld's output without program paths and the temporary
// directory.
func linkerText(out, dir string) string {
	var lines []string
	for _, w := range linkerWarnings(out, dir) {
		lines = append(lines, w.Text)
	}
	return strings.Join(lines, "; ")
}
