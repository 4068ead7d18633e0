package pipelines

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Status is a row's result.
type Status string

const (
	Clean       Status = "clean"
	Finding     Status = "finding"
	NotPossible Status = "not possible"
)

// Scenario names, in the order they run.
const (
	PostLink   = "post-link tools"
	GCSections = "gc-sections"
	LDR        = "ld -r chain"
	COMDAT     = "C++ COMDAT"
	Mixed      = "mixed SFrame versions"
	LTO        = "LTO"
	FarCode    = "large code model, far code"
	LLD        = "lld"
	BOLT       = "BOLT"
	Generated  = "generated programs"
)

// Scenarios lists every scenario in order (sfconform pipelines numbers
// them from 1 in this order).
var Scenarios = []string{PostLink, GCSections, LDR, COMDAT, Mixed, LTO, FarCode, LLD, BOLT, Generated}

// Row is one output of one scenario, built with one toolchain for one
// target, and what check says about it.
type Row struct {
	Scenario  string `json:"scenario"`
	Case      string `json:"case"`      // "excpt: strip --strip-debug"
	Toolchain string `json:"toolchain"` // "gas-2.47"
	Target    string `json:"target"`
	Status    Status `json:"status"`
	// Detail says what happened to the section (kept, dropped, merged)
	// and, for a finding, the errors; for not possible, why.
	Detail string `json:"detail"`
	// Judged: rows compared with CFI and dynamic steps judged, so a clean
	// row that judged nothing is visible.
	Compared int `json:"compared"`
	Steps    int `json:"steps"`
	// Control is the negative control's outcome for the row it was run
	// on: "red (N errors: kinds)", or "GREEN" when check missed it.
	Control string `json:"control,omitempty"`
	// Known names the write-up that explains a finding: a file of
	// docs/findings, or a sentence for behaviour by design.
	Known string `json:"known,omitempty"`
	// Commands rebuild the output (without sfconform).
	Commands []string `json:"commands,omitempty"`
}

// Config selects what Run builds.
type Config struct {
	Targets   []target.Target // nil: x86-64, aarch64, s390x
	Series    []string        // binutils series ("2.47"); nil: every provisioned one
	Scenarios []string        // nil: all
	Dynamic   bool            // also judge linked programs by emulation
	Variants  int             // dynamic runs per function; 0 means 2
	Dir       string          // work directory (kept); "" makes and removes a temporary one
	Sources   string          // check/testdata/programs; "" finds it from the working directory up
	Log       func(format string, args ...any)
	// Seeds are the generated programs' seeds; nil: 1, 2 and 3.
	Seeds []int64

	tools tools // the post-link tools and linkers besides GNU's, found by Run
}

// Result is a whole run.
type Result struct {
	Rows     []Row         `json:"rows"`
	Versions []string      `json:"versions"` // exact versions of every tool used
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Shards are the elapsed times of the shards Merge joined.
	Shards []time.Duration `json:"shards_ns,omitempty"`
}

// ControlsFailed counts negative controls check did not report.
func (r *Result) ControlsFailed() int {
	n := 0
	for _, row := range r.Rows {
		if strings.HasPrefix(row.Control, "GREEN") {
			n++
		}
	}
	return n
}

// compilers are the gcc and g++ 12 of each target (host packages).
var compilers = map[target.Target][2]string{
	target.X86_64:  {"gcc", "g++"},
	target.AArch64: {"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"},
	target.S390X:   {"s390x-linux-gnu-gcc", "s390x-linux-gnu-g++"},
}

// DefaultTargets are the targets with a gcc.
var DefaultTargets = []target.Target{target.X86_64, target.AArch64, target.S390X}

// FindSources returns check/testdata/programs, looked up from the working
// directory towards the root (the module's copy: reused, not copied).
func FindSources() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "check", "testdata", "programs")
		if _, err := os.Stat(filepath.Join(p, "excpt.cc")); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("check/testdata/programs not found from %s up: run in the sfconform checkout", wd)
		}
	}
}

// ErrNoToolchain: nothing provisioned to build with.
var ErrNoToolchain = errors.New("no provisioned GNU toolchain")

// Run builds every scenario for every target and series.
func Run(cfg Config) (*Result, error) {
	t0 := time.Now()
	if cfg.Targets == nil {
		cfg.Targets = DefaultTargets
	}
	if cfg.Scenarios == nil {
		cfg.Scenarios = Scenarios
	}
	if cfg.Variants <= 0 {
		cfg.Variants = 2
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if cfg.Sources == "" {
		s, err := FindSources()
		if err != nil {
			return nil, err
		}
		cfg.Sources = s
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "sfconform-pipelines-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	}
	all, err := toolchain.All()
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: %v", ErrNoToolchain, err)
	}
	tools, err := findTools(cfg.Scenarios)
	if err != nil {
		return nil, err
	}
	cfg.tools = tools
	res := &Result{}
	vers := map[string]bool{}
	for _, tg := range cfg.Targets {
		cc, ok := compilers[tg]
		if !ok {
			return nil, fmt.Errorf("no compiler for target %s (targets: x86-64, aarch64, s390x)", tg.Name())
		}
		for _, c := range cc {
			if _, err := exec.LookPath(c); err != nil {
				return nil, toolchain.NotProvisioned(toolchain.SetupHost, "%s: %v", c, err)
			}
			vers[toolVersion(c, "--version")] = true
		}
		var tcs []toolchain.Toolchain
		var noSF []toolchain.Toolchain
		for _, tc := range all {
			if tc.Target != tg || tc.LD == "" || !wanted(cfg.Series, toolchain.Series(tc.Version)) {
				continue
			}
			if tc.SFrameVersion == 0 {
				noSF = append(noSF, tc)
				continue
			}
			tcs = append(tcs, tc)
		}
		sort.Slice(tcs, func(i, j int) bool { return toolchain.CompareVersions(tcs[i].Version, tcs[j].Version) < 0 })
		for _, sc := range cfg.Scenarios {
			if sc == BOLT && tg == target.S390X {
				res.Rows = append(res.Rows, Row{Scenario: sc, Case: "all", Toolchain: "all", Target: tg.Name(), Status: NotPossible,
					Detail: "BOLT rewrites x86-64, AArch64 and RISC-V code only"})
				continue
			}
			for _, tc := range noSF {
				res.Rows = append(res.Rows, Row{Scenario: sc, Case: "all", Toolchain: tc.Name, Target: tg.Name(), Status: NotPossible,
					Detail: fmt.Sprintf("gas %s writes no SFrame for %s: %s", tc.Version, tg.Name(), oneLine(tc.SFrameUnsupportedReason()))})
			}
			if sc == Mixed {
				rows, v := runMixed(cfg, tg, cc, tcs)
				res.Rows = append(res.Rows, rows...)
				addAll(vers, v)
				continue
			}
			for _, tc := range tcs {
				b, err := newBuild(cfg, tg, cc, tc)
				if err != nil {
					return nil, err
				}
				addAll(vers, b.versions())
				cfg.Log("%s %s %s", sc, tc.Name, tg.Name())
				res.Rows = append(res.Rows, b.scenario(sc)...)
			}
		}
	}
	for i := range res.Rows {
		res.Rows[i].Detail = strings.ReplaceAll(res.Rows[i].Detail, cfg.Dir+"/", "")
		if res.Rows[i].Status == Finding {
			res.Rows[i].Known = known(res.Rows[i], seriesOf(res.Rows[i].Toolchain))
		}
	}
	for v := range vers {
		if v != "" {
			res.Versions = append(res.Versions, v)
		}
	}
	sort.Strings(res.Versions)
	res.Elapsed = time.Since(t0)
	return res, nil
}

func addAll(m map[string]bool, vs []string) {
	for _, v := range vs {
		m[v] = true
	}
}

// wanted: s is in a selection (nil selects everything).
func wanted(list []string, s string) bool { return len(list) == 0 || slices.Contains(list, s) }

// build is one toolchain for one target: the driver directory for gcc's
// -B, and the series' own strip and objcopy.
type build struct {
	cfg      Config
	tg       target.Target
	cc, cxx  string
	tc       toolchain.Toolchain
	dir      string // outputs of this toolchain and target
	bdir     string // holds "as" and "ld" for -B
	strip    string
	objcopy  string
	toolErrs string // why strip/objcopy are missing
}

func newBuild(cfg Config, tg target.Target, cc [2]string, tc toolchain.Toolchain) (*build, error) {
	b := &build{cfg: cfg, tg: tg, cc: cc[0], cxx: cc[1], tc: tc}
	b.dir = filepath.Join(cfg.Dir, tc.Name+"-"+tg.Name())
	b.bdir = filepath.Join(b.dir, "B")
	if err := os.MkdirAll(b.bdir, 0o755); err != nil {
		return nil, err
	}
	for name, to := range map[string]string{"as": tc.AS, "ld": tc.LD} {
		if err := os.Symlink(to, filepath.Join(b.bdir, name)); err != nil && !os.IsExist(err) {
			return nil, err
		}
	}
	var errs []string
	var err error
	if b.strip, err = sibling(tc, "strip", b.dir); err != nil {
		errs = append(errs, err.Error())
	}
	if b.objcopy, err = sibling(tc, "objcopy", b.dir); err != nil {
		errs = append(errs, err.Error())
	}
	b.toolErrs = strings.Join(errs, "; ")
	return b, nil
}

func (b *build) versions() []string {
	out := []string{fmt.Sprintf("%s (%s): as/ld %s, Debian package %s", b.tc.Name, b.tg.Name(), b.tc.Version, orDash(b.tc.Package))}
	out = append(out, b.cfg.tools.versions...)
	if b.strip != "" {
		out = append(out, fmt.Sprintf("%s (%s): %s", b.tc.Name, b.tg.Name(), toolVersion(b.strip, "--version")))
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sibling returns the series' own binutils program name (strip, objcopy)
// next to its as: the provisioned as is a wrapper script that runs the
// suite's binary with the suite's C library, so the same script with the
// program's name runs that program the same way.
func sibling(tc toolchain.Toolchain, name, dir string) (string, error) {
	asName := tc.Triple + "-as"
	data, err := os.ReadFile(tc.AS)
	if err != nil {
		return "", err
	}
	var p string
	if bytes.HasPrefix(data, []byte("#!")) && bytes.Contains(data, []byte(asName)) {
		s := strings.ReplaceAll(string(data), "/"+asName, "/"+tc.Triple+"-"+name)
		p = filepath.Join(dir, tc.Triple+"-"+name)
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			return "", err
		}
	} else {
		p = filepath.Join(filepath.Dir(tc.AS), tc.Triple+"-"+name)
	}
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s of %s: %v: %s", name, tc.Name, err, oneLine(string(out)))
	}
	return p, nil
}

func toolVersion(p string, arg string) string {
	out, err := exec.Command(p, arg).CombinedOutput()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return filepath.Base(p) + ": " + strings.TrimSpace(line)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

// runCmd runs a tool; the returned string is its shell form, with paths
// made relative to the work directory where they are inside it.
func (b *build) run(name string, args ...string) (cmdline, stderr string, err error) {
	cmd := exec.Command(name, args...)
	var eb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &eb, &eb
	err = cmd.Run()
	cmdline = b.shell(name, args)
	out := b.clean(eb.String())
	if err != nil {
		err = fmt.Errorf("%s (%s: %v)", errorLine(out), cmdline, err)
	}
	return cmdline, out, err
}

// clean makes a tool's messages readable in a table: paths in the work
// directory relative to it, and a program's own path ("/var/cache/.../
// x86_64-linux-gnu-ld: " or the dynamic loader it runs under) cut to its
// name.
func (b *build) clean(s string) string {
	s = strings.ReplaceAll(s, b.cfg.Dir+"/", "")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if first, rest, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(first, "/") && !strings.Contains(first, " ") {
			name := filepath.Base(first)
			if strings.HasPrefix(name, "ld-linux") {
				name = "ld"
			}
			l = name + ": " + rest
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// errorLine is the line of a tool's output that says what went wrong:
// the first naming an error, an assertion or a fatal condition, else the
// first; the compiler driver's summary ("collect2: error: ld returned 1
// exit status") only when there is nothing else.
func errorLine(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "collect2:") {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		ll := strings.ToLower(l)
		if strings.Contains(ll, "error") || strings.Contains(ll, "assert") || strings.Contains(ll, "fatal") {
			return l
		}
	}
	if len(lines) > 0 {
		return lines[0]
	}
	return strings.TrimSpace(out)
}

func (b *build) shell(name string, args []string) string {
	parts := []string{filepath.Base(name)}
	for _, a := range args {
		a = strings.ReplaceAll(a, b.cfg.Dir+"/", "")
		a = strings.ReplaceAll(a, b.cfg.Sources+"/", "")
		parts = append(parts, a)
	}
	return toolchain.ShellJoin(parts)
}

// compile runs gcc or g++ with the toolchain's as and ld: -O2 -g
// -Wa,--gsframe plus extra, on the sources, into out.
func (b *build) compile(cxx bool, out string, extra []string, srcs ...string) (string, error) {
	driver := b.cc
	if cxx {
		driver = b.cxx
	}
	args := []string{"-Wa,--gsframe", "-B" + b.bdir + "/"}
	args = append(args, extra...)
	args = append(args, "-o", out)
	for _, s := range srcs {
		if !filepath.IsAbs(s) {
			s = filepath.Join(b.cfg.Sources, s)
		}
		args = append(args, s)
	}
	c, _, err := b.run(driver, args...)
	return c, err
}

// program is a source set of check/testdata/programs.
type program struct {
	name string
	cxx  bool
	srcs []string
}

var programs = []program{
	{"hello", false, []string{"hello.c"}},
	{"excpt", true, []string{"excpt.cc", "excpt2.cc"}},
}

// judge checks path: static always, dynamic for linked files when
// cfg.Dynamic.
func (b *build) judge(path string) (*check.Report, error) {
	return judgeFile(path, b.cfg)
}

// judgeFile: a relocatable object, or a file without .symtab (whose
// function starts check takes from .eh_frame, the linker's PLT among
// them, which it would then run as functions), is checked statically
// only.
func judgeFile(path string, cfg Config) (*check.Report, error) {
	opts := check.Options{Static: true}
	if cfg.Dynamic {
		if f, err := elf.Open(path); err == nil {
			opts.Dynamic = f.Type != elf.ET_REL && f.Section(".symtab") != nil
			f.Close()
		}
		opts.Variants = cfg.Variants
	}
	return check.File(path, opts)
}

// row fills a row from a report: clean when check found no error.
func row(sc, cs string, tc toolchain.Toolchain, tg target.Target, r *check.Report, err error) Row {
	rw := Row{Scenario: sc, Case: cs, Toolchain: tc.Name, Target: tg.Name()}
	if err != nil {
		rw.Status, rw.Detail = Finding, "check: "+oneLine(err.Error())
		return rw
	}
	rw.Compared, rw.Steps = r.Summary.Compared, r.Summary.Steps
	if r.Summary.Errors == 0 {
		rw.Status = Clean
		return rw
	}
	rw.Status = Finding
	rw.Detail = errorText(r)
	return rw
}

// errorText summarises a report's errors: counts by kind and the first
// message.
func errorText(r *check.Report) string {
	kinds := map[string]int{}
	first := ""
	for _, f := range r.Findings {
		if f.Severity != check.SevError {
			continue
		}
		kinds[f.Kind]++
		if first == "" {
			first = f.Message
			if f.Func != "" {
				first = f.Func + ": " + first
			}
		}
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	for _, g := range r.Gaps {
		if g.Error {
			ks = append(ks, fmt.Sprintf("gap %q %d (%s)", g.Cause, g.Functions, strings.Join(firstN(g.Names, 4), " ")))
		}
	}
	return fmt.Sprintf("%d errors: %s; first: %s", r.Summary.Errors, strings.Join(ks, ", "), oneLine(first))
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), "…")
	}
	return s
}

// control runs the negative control on path (a linked output of the
// scenario): one FDE moved onto the next function must be reported.
func (b *build) control(path string) string {
	return Control(path, b.dir)
}

// Control copies path with one FDE's start moved onto the next
// function's (an FDE pointing at foreign code) and checks the copy and
// the original statically: "red (...)" when check reports in the copy an
// error the original does not have (by kind, function and message: the
// two files differ in those bytes only, so a check blind to them would
// report the same errors), "GREEN ..." when not. Counting errors is not
// enough: a badly broken original (lld's output) can have as many.
func Control(path, dir string) string {
	bad, what, err := Corrupt(path, dir)
	if err != nil {
		return "GREEN: could not corrupt: " + err.Error()
	}
	base := map[string]bool{}
	nbase := 0
	if r, err := check.File(path, check.Options{Static: true}); err == nil {
		nbase = r.Summary.Errors
		for _, f := range r.Findings {
			if f.Severity == check.SevError {
				base[errorKey(f)] = true
			}
		}
	}
	r, err := check.File(bad, check.Options{Static: true})
	if err != nil {
		return fmt.Sprintf("red (%s: unusable: %v)", what, err)
	}
	kinds := map[string]bool{}
	fresh := 0
	for _, f := range r.Findings {
		if f.Severity == check.SevError && !base[errorKey(f)] {
			kinds[f.Kind] = true
			fresh++
		}
	}
	if fresh == 0 {
		return fmt.Sprintf("GREEN: %s: %d errors, none that the original's %d lack", what, r.Summary.Errors, nbase)
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	more := ""
	if nbase > 0 {
		more = fmt.Sprintf(", %d of them new (the original %d)", fresh, nbase)
	}
	return fmt.Sprintf("red (%s: %d errors%s: %s)", what, r.Summary.Errors, more, strings.Join(ks, " "))
}

// errorKey identifies a finding across two checks of nearly the same file.
func errorKey(f check.Finding) string {
	return f.Kind + "|" + f.Func + "|" + f.PC + "|" + f.Message
}
