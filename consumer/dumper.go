package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sfconform/sfconform/dumper"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

func init() {
	RegisterFamily("dumper", func() []About { return dumperAbout(dumperNames()) }, func() []About { return dumperAbout(setupDumpers()) }, describeDumper, func(name, arg string) (Consumer, error) {
		if arg != "" {
			return nil, fmt.Errorf("consumer %s takes no argument (got %q)", name, name)
		}
		return NewDumper(name)
	})
}

// Dumper is an SFrame dumper of a provisioned toolchain used as a
// consumer: GNU objdump --sframe or readelf --sframe of one binutils
// release series (objdump-2.47, readelf-2.44, ...), or LLVM's
// llvm-readobj --sframe (llvm-readobj-23).
//
// Load wraps the image's section in a minimal ELF file (dumper.ELF: the
// section at the image's SFrameAddr, the target's byte order and
// machine), runs the dumper on it once, parses what it printed
// (dumper.ParseGNU, dumper.ParseLLVM) and turns the rows into an SFrame
// table (dumper.Listing.Table). Unwind then walks that table with the
// sframe package's unwinder, exactly as the builtin consumer walks the
// decoded section: the only difference between the two is where the rows
// come from, so a row the dumper misprints is a WRONG or NOINFO verdict.
//
// GNU dumpers do not print the repetition size of a PCMASK function;
// Load takes it from the section itself (sframe.Decode, the FDE of the
// same index). Everything else comes from the dumper's text.
//
// A dumper that crashes, hangs (DefaultExecTimeout, or
// SFCONFORM_CONSUMER_TIMEOUT), complains on standard error, exits with a
// non-zero status or prints text the parser cannot read makes Load fail,
// with the command and its output in the error: every step of that image
// is ERROR, and the run goes on with the next image.
type Dumper struct {
	name    string // objdump-2.47
	tool    string // objdump, readelf, llvm-readobj
	series  string // 2.47 (binutils), 23 (LLVM major)
	version string // as the tool reports it: 2.47.50.20261021, 23.1.4
	pkg     string // the Debian package it came from, for ExactVersion
	paths   map[target.Target]string
	timeout time.Duration

	listing *dumper.Listing
	output  []byte // the dumper's standard output of the last Load
	table   *sframe.Table
	loadErr error
	u       sframe.Unwinder
	frames  []sframe.Frame
}

// dumperTools are the GNU dumpers, in the order names are listed.
var dumperTools = []string{"objdump", "readelf"}

// NewDumper makes the dumper consumer called name: objdump-<series> or
// readelf-<series> for a provisioned binutils release series
// (toolchain.All), llvm-readobj-<major> for a provisioned LLVM.
func NewDumper(name string) (*Dumper, error) {
	d := &Dumper{name: name, paths: map[target.Target]string{}, timeout: DefaultExecTimeout}
	if v, err := time.ParseDuration(os.Getenv("SFCONFORM_CONSUMER_TIMEOUT")); err == nil && v > 0 {
		d.timeout = v
	}
	tool, series, ok := strings.Cut(name, "-")
	if strings.HasPrefix(name, "llvm-readobj-") {
		tool, series, ok = "llvm-readobj", strings.TrimPrefix(name, "llvm-readobj-"), true
	}
	if !ok || series == "" {
		return nil, fmt.Errorf("consumer %q: want objdump-<series>, readelf-<series> or llvm-readobj-<major>", name)
	}
	d.tool, d.series = tool, series
	if tool == "llvm-readobj" {
		for _, l := range llvmReadobjs() {
			if l.major == series {
				d.version, d.pkg = l.version, fmt.Sprintf("Debian %s llvm-%s %s", l.suite, l.major, l.pkg)
				for _, t := range target.All {
					d.paths[t] = l.path
				}
				return d, nil
			}
		}
		return nil, toolchain.NotProvisioned(toolchain.SetupLLVM, "consumer %s: no llvm-readobj %s under %s", name, series,
			filepath.Join(toolchain.CacheDir(), "toolchains"))
	}
	if !slices.Contains(dumperTools, tool) {
		return nil, fmt.Errorf("consumer %q: want objdump-<series>, readelf-<series> or llvm-readobj-<major>", name)
	}
	all, err := toolchain.All()
	for _, tc := range all {
		if toolchain.Series(tc.Version) != series {
			continue
		}
		d.version, d.pkg = tc.Version, fmt.Sprintf("Debian %s binutils %s", tc.Suite, tc.Package)
		if tool == "objdump" {
			d.paths[tc.Target] = tc.Objdump
		} else {
			d.paths[tc.Target] = tc.Readelf
		}
	}
	if len(d.paths) == 0 {
		missing := toolchain.NotProvisioned(toolchain.SetupBinutils, "consumer %s: no binutils %s under %s", name, series, filepath.Join(toolchain.CacheDir(), "toolchains"))
		if err != nil {
			return nil, fmt.Errorf("%w; also: %w", missing, err)
		}
		return nil, missing
	}
	return d, nil
}

// dumperNames lists the dumper consumers the provisioned toolchains
// offer: for each binutils release series objdump-<series> and
// readelf-<series> (a series provisioned twice, say a snapshot and its
// release, is one consumer: the newest), and llvm-readobj-<major>.
func dumperNames() []string {
	var out []string
	all, _ := toolchain.All()
	for _, tool := range dumperTools {
		for _, tc := range all {
			if n := tool + "-" + toolchain.Series(tc.Version); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	for _, l := range llvmReadobjs() {
		out = append(out, "llvm-readobj-"+l.major)
	}
	return out
}

type llvmReadobj struct {
	major, version, suite, pkg, path string
}

// dumperAbout describes the dumper consumers called names: binutils'
// come from setup step 4, LLVM's from step 5.
func dumperAbout(names []string) []About {
	out := make([]About, len(names))
	for i, n := range names {
		// Modules: each module's section is printed on its own and
		// unwound as its module's (Dumper.load).
		out[i] = About{Kind: n, Setup: toolchain.SetupBinutils, Layouts: []string{"modules"},
			Summary: "GNU " + strings.Replace(n, "-", " --sframe of binutils ", 1)}
		if strings.HasPrefix(n, "llvm-readobj-") {
			out[i].Setup, out[i].Summary = toolchain.SetupLLVM, "llvm-readobj --sframe of LLVM "+strings.TrimPrefix(n, "llvm-readobj-")
		}
	}
	return out
}

// describeDumper is the entry of a dumper consumer's name: tool-series
// of a GNU dumper, llvm-readobj-major.
func describeDumper(kind string) (About, bool) {
	tool, series, ok := strings.Cut(kind, "-")
	if strings.HasPrefix(kind, "llvm-readobj-") {
		series, ok = strings.TrimPrefix(kind, "llvm-readobj-"), true
	} else if !slices.Contains(dumperTools, tool) {
		return About{}, false
	}
	if !ok || series == "" || strings.Trim(series, "0123456789.") != "" {
		return About{}, false
	}
	return dumperAbout([]string{kind})[0], true
}

// setupDumpers names the dumper consumers setup provides: one of each
// tool for every binutils series and LLVM major it provisions.
func setupDumpers() []string {
	var out []string
	for _, tool := range dumperTools {
		for _, s := range toolchain.SetupBinutilsSeries {
			out = append(out, tool+"-"+s)
		}
	}
	for _, m := range toolchain.SetupLLVMMajors {
		out = append(out, "llvm-readobj-"+m)
	}
	return out
}

// llvmReadobjs finds ci/setup.sh step 5's llvm-readobj:
// toolchains/llvm-<major>/bin/llvm-readobj, its version from llvm.conf.
func llvmReadobjs() []llvmReadobj {
	paths, _ := filepath.Glob(filepath.Join(toolchain.CacheDir(), "toolchains", "llvm-*", "bin", "llvm-readobj"))
	var out []llvmReadobj
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			continue
		}
		dir := filepath.Dir(filepath.Dir(p))
		l := llvmReadobj{major: strings.TrimPrefix(filepath.Base(dir), "llvm-"), path: p}
		if conf, err := toolchain.ReadConf(filepath.Join(dir, "llvm.conf")); err == nil {
			l.version, l.suite, l.pkg = conf["version"], conf["suite"], conf["package"]
		}
		out = append(out, l)
	}
	return out
}

func (d *Dumper) Name() string   { return d.name }
func (d *Dumper) BatchSize() int { return 1 }

// Version is the dumper's version as the tool reports it.
func (d *Dumper) Version() string { return d.version }

// ExactVersion is the tool, its version and the Debian package it came
// from.
func (d *Dumper) ExactVersion() string { return fmt.Sprintf("%s %s (%s)", d.tool, d.version, d.pkg) }

// Listing is the parsed text of the last Load, for reports; Output is the
// text itself.
func (d *Dumper) Listing() *dumper.Listing { return d.listing }
func (d *Dumper) Output() []byte           { return d.output }

// Close does nothing: Load removes its file before it returns.
func (d *Dumper) Close() error { return nil }

// Supports says what each dumper prints, as measured on binutils 2.40,
// 2.44 and 2.47.50 and LLVM 23 (dumper/dumper_ext_test.go keeps the
// measurements honest); the boundaries in between follow the releases
// that brought each version: SFrame v2 in binutils 2.41, the s390x ABI
// in 2.45, v3 in 2.46.
//
//   - binutils 2.40 prints version 1 only: of a version 2 or 3 section
//     objdump says "file format not recognized" and readelf "SFrame
//     decode failure: Out of Memory".
//   - binutils 2.41-2.45 print version 2 only. Of a version 1 section
//     2.44 prints the header and "No further information can be
//     displayed. SFrame version not supported" (and aborts on a
//     big-endian one, libsframe/sframe.c:277); a version 3 section is
//     "file format not recognized". A version 2 section with
//     PC-relative function starts (erratum 1, binutils 2.45) is refused
//     the same way: Supports cannot tell, such a Load fails.
//   - binutils 2.46 and later print versions 2 and 3 and refuse version
//     1 ("SFrame decode failure: Buffer does not contain SFrame data").
//   - before 2.45 no release knows the s390x ABI: 2.40 and 2.44 print
//     its CFA offsets as stored ((offset-160)/8: "sp+23" for sp+344).
//   - llvm-readobj 23 reads version 2 only ("invalid/unsupported version
//     number"), and not s390x, whose ABI it prints as a bare number
//     ("ABI: 0x4") and whose CFA words it prints undecoded.
func (d *Dumper) Supports(t target.Target, v int) error {
	if _, ok := d.paths[t]; !ok {
		return fmt.Errorf("%s: no %s for %s provisioned", d.name, d.tool, t.Name())
	}
	if d.tool == "llvm-readobj" {
		switch {
		case t == target.S390X:
			return fmt.Errorf("llvm-readobj %s does not know the s390x SFrame ABI: it prints \"ABI: 0x4\" and the CFA offsets undecoded", d.version)
		case v != 2:
			return fmt.Errorf("llvm-readobj %s reads SFrame version 2 only (version %d: \"invalid/unsupported version number\")", d.version, v)
		}
		return nil
	}
	series := d.series
	at := func(min string) bool { return toolchain.CompareVersions(series, min) >= 0 }
	switch {
	case v < 1 || v > 3:
		return fmt.Errorf("%s %s knows SFrame versions 1 to 3 at most, not %d", d.tool, d.version, v)
	case v == 1 && at("2.46"):
		return fmt.Errorf("%s %s refuses SFrame version 1 (\"SFrame decode failure: Buffer does not contain SFrame data\")", d.tool, d.version)
	case v == 1 && at("2.41"):
		return fmt.Errorf("%s %s prints only the header of an SFrame version 1 section (\"No further information can be displayed. SFrame version not supported\"; it aborts on a big-endian one)", d.tool, d.version)
	case v == 2 && !at("2.41"), v == 3 && !at("2.46"):
		return fmt.Errorf("%s %s refuses SFrame version %d (%s)", d.tool, d.version, v, refusal(d.tool))
	case t == target.S390X && !at("2.45"):
		return fmt.Errorf("%s %s predates the s390x SFrame ABI (binutils 2.45): it prints s390x CFA offsets as stored, (offset-160)/8", d.tool, d.version)
	}
	return nil
}

// refusal is what an old GNU dumper says of a version it does not know.
func refusal(tool string) string {
	if tool == "readelf" {
		return "\"SFrame decode failure: Out of Memory\""
	}
	return "\"file format not recognized\""
}

// RefusesPCRelV2 says why the dumper refuses an SFrame version 2 section
// with PC-relative function starts (erratum 1, binutils 2.45; finding
// 011), which Supports cannot tell from the version: nil when it reads
// one.
func (d *Dumper) RefusesPCRelV2() error {
	if d.tool != "llvm-readobj" && toolchain.CompareVersions(d.series, "2.45") < 0 {
		return fmt.Errorf("%s refuses SFrame version 2 with PC-relative function starts (erratum 1, binutils 2.45; finding 011)", d.name)
	}
	return nil
}

// maxDumperOutput bounds what a dumper may print for one section; more is
// a failure (a malformed count can make a dumper print without end).
const maxDumperOutput = 64 << 20

// Load runs the dumper on the image's section and reads its rows.
func (d *Dumper) Load(img *image.Image) error {
	d.listing, d.output, d.table, d.loadErr = nil, nil, nil, nil
	err := d.load(img)
	if err != nil {
		d.loadErr = fmt.Errorf("%s: %w", d.name, err)
	}
	return d.loadErr
}

func (d *Dumper) load(img *image.Image) error {
	path, ok := d.paths[img.Target]
	if !ok {
		return fmt.Errorf("no %s for %s provisioned", d.tool, img.Target.Name())
	}
	if len(img.Modules) == 0 {
		l, out, t, err := d.loadSection(path, img.Target, img.SFrame, img.SFrameAddr)
		d.listing, d.output, d.table = l, out, t
		if err != nil {
			return err
		}
		d.u = sframe.Unwinder{Table: d.table}
		return nil
	}
	// A process image: the dumper prints each module's section, as it
	// would each object's, and each module's rows describe its range.
	if err := img.CheckModules(); err != nil {
		return err
	}
	ms := make(sframe.Modules, len(img.Modules))
	var all []byte
	for i, m := range img.Modules {
		l, out, t, err := d.loadSection(path, img.Target, m.SFrame, m.SFrameAddr)
		all = append(append(all, fmt.Sprintf("=== module %s [%#x, %#x), section at %#x\n", m.Name, m.Start, m.End, m.SFrameAddr)...), out...)
		d.output = all
		if i == 0 {
			d.listing = l
		}
		if err != nil {
			return fmt.Errorf("module %s: %w", m.Name, err)
		}
		ms[i] = sframe.Module{Start: m.Start, End: m.End, Table: t}
	}
	d.table = ms[0].Table
	d.u = sframe.Unwinder{Modules: ms}
	return nil
}

// loadSection runs the dumper on one section at addr and reads its rows.
func (d *Dumper) loadSection(path string, tg target.Target, sec []byte, addr uint64) (*dumper.Listing, []byte, *sframe.Table, error) {
	abi := sframe.ABI(tg)
	file, err := dumper.ELF(abi, tg.ByteOrder(), sec, addr)
	if err != nil {
		return nil, nil, nil, err
	}
	// A directory per Load, gone before Load returns: a run killed
	// between images leaves nothing behind.
	// The tool's name, not the consumer's: objdump:DIR holds a path.
	dir, err := os.MkdirTemp("", "sfconform-"+d.tool+"-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(dir)
	elfPath := filepath.Join(dir, "sframe.elf")
	if err := os.WriteFile(elfPath, file, 0o644); err != nil {
		return nil, nil, nil, err
	}
	out, err := d.run(path, elfPath)
	if err != nil {
		return nil, out, nil, err
	}
	var l *dumper.Listing
	if d.tool == "llvm-readobj" {
		l, err = dumper.ParseLLVM(string(out), abi)
	} else {
		l, err = dumper.ParseGNU(string(out), abi)
	}
	if err != nil {
		return nil, out, nil, fmt.Errorf("%s printed what cannot be read: %w\n%s", d.command(path, elfPath), err, excerpt(out))
	}
	fillRepSizes(l, sec, addr)
	t, err := l.Table(addr)
	if err != nil {
		return l, out, nil, fmt.Errorf("%s: %w", d.command(path, elfPath), err)
	}
	return l, out, t, nil
}

// fillRepSizes gives the PCMASK functions whose repetition size the
// dumper did not print the size the section stores for the FDE of the
// same index. A section that does not decode leaves them unknown.
func fillRepSizes(l *dumper.Listing, data []byte, addr uint64) {
	var sec *sframe.Section
	for i := range l.Funcs {
		f := &l.Funcs[i]
		if f.PCType != sframe.PCMask || f.RepSizeKnown {
			continue
		}
		if sec == nil {
			t, err := sframe.Decode(data, addr)
			if err != nil || len(t.Sections) != 1 {
				return
			}
			sec = t.Sections[0]
		}
		if f.Index < int(sec.Header.NumFDEs) {
			f.RepSize = sec.Func(f.Index).RepSize
		}
	}
}

func (d *Dumper) command(path, file string) string {
	return fmt.Sprintf("%s --sframe=.sframe %s", path, file)
}

// run runs the dumper on file and returns its standard output; a crash,
// a hang, a non-zero exit or anything on standard error is an error with
// the command and the output in it.
func (d *Dumper) run(path, file string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--sframe=.sframe", file)
	// Untranslated messages, whatever the caller's locale.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxDumperOutput, 1<<20
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	out := stdout.Bytes()
	describe := func(what string) error {
		return fmt.Errorf("%s %s\n%s", d.command(path, file), what, excerpt(append(append([]byte(nil), stderr.Bytes()...), out...)))
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return out, describe(fmt.Sprintf("hung: killed after %v", d.timeout))
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out, describe(fmt.Sprintf("crashed (signal %d, %v)", int(ws.Signal()), ws.Signal()))
		}
		return out, describe(fmt.Sprintf("failed: %v", err))
	case err != nil:
		return out, fmt.Errorf("running %s: %w", d.command(path, file), err)
	case stdout.overflow:
		return out, describe(fmt.Sprintf("printed more than %d bytes", maxDumperOutput))
	case stderr.Len() > 0:
		return out, describe("complained")
	}
	return out, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.overflow = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// excerpt is a dumper's output for an error message: up to 24 lines and
// 2 KiB, the rest elided.
func excerpt(out []byte) string {
	s := strings.TrimRight(string(out), "\n")
	if s == "" {
		return "(no output)"
	}
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > 24 {
		lines, cut = lines[:24], true
	}
	s = strings.Join(lines, "\n")
	if len(s) > 2048 {
		s, cut = s[:2048], true
	}
	if cut {
		s += fmt.Sprintf("\n... (%d bytes in all)", len(out))
	}
	return s
}

// Unwind walks the dumper's rows with the sframe package's unwinder.
func (d *Dumper) Unwind(steps []Step, out []Result) error {
	if d.table == nil {
		return fmt.Errorf("%s: no section loaded: %v", d.name, d.loadErr)
	}
	d.frames = backtraces(&d.u, d.frames, steps, out)
	return nil
}
