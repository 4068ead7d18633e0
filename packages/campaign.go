package packages

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// Build statuses.
const (
	Built       = "built"
	Failed      = "build failed"
	NotPossible = "not possible"
)

// Config selects what Run builds.
type Config struct {
	Packages []string        // Debian source packages; nil: every recipe
	Targets  []target.Target // nil: Targets
	Series   []string        // binutils series ("2.47"); nil: every provisioned one
	// Opts are the optimisation levels ("-O0"); nil: the package's own
	// (Debian's, -O2 unless the recipe says otherwise).
	Opts  []string
	Work  string // the campaign's directory: one subdirectory per build, kept (logs, results)
	Jobs  int    // make -j
	Force bool   // build again what has a result already
	// Recheck: check the kept outputs of builds with a result again,
	// without building (after a change to check or to the grouping).
	Recheck bool
	Quick   bool // build only each recipe's Quick targets (the package test)
	Dynamic bool // also emulate every function of linked files (check's dynamic check)
	Log     func(format string, args ...any)
}

// BuildResult is one package built for one target with one binutils
// series, and what check says of every ELF file it made. It is stored as
// result.json in the build's directory, which makes the campaign
// resumable per build.
type BuildResult struct {
	Package string `json:"package"`
	Version string `json:"version"`
	Lang    string `json:"lang"`
	System  string `json:"system"`
	Target  string `json:"target"`
	Series  string `json:"series"`
	// Opt is the optimisation level put in place of Debian's; "" for the
	// package's own (OptLevel says which).
	Opt       string `json:"opt,omitempty"`
	Toolchain string `json:"toolchain"` // "gas-2.47 2.47.50.20261021 (Debian 2.47.50.20261021-1)"
	// SFrameVersion is what the series' gas writes for the target.
	SFrameVersion int    `json:"sframe_version"`
	Status        string `json:"status"`
	Why           string `json:"why,omitempty"` // the failed step, or why not possible
	Quick         bool   `json:"quick,omitempty"`
	// Dynamic: the linked files were also checked dynamically (every
	// function emulated), not only statically.
	Dynamic  bool   `json:"dynamic,omitempty"`
	Log      string `json:"log,omitempty"`      // relative to the campaign directory
	LogTail  string `json:"log_tail,omitempty"` // the last lines of the log of a failed build
	Flags    Flags  `json:"flags"`
	Commands []string
	// BuildCPU is the user+system time of the build's processes;
	// CheckCPU that of checking its files.
	BuildCPU time.Duration `json:"build_cpu"`
	CheckCPU time.Duration `json:"check_cpu"`
	Shipped  int           `json:"shipped,omitempty"` // ELF files in the source tree itself, not checked
	Files    []FileResult  `json:"files"`
	// Resumed: this run read the result from an earlier one's
	// result.json, and built nothing.
	Resumed bool `json:"-"`
}

// FileResult is one ELF output and what check says of it.
type FileResult struct {
	Rel      string `json:"rel"`
	Type     string `json:"type"` // REL, EXEC, DYN
	Member   bool   `json:"member,omitempty"`
	Sizes    Sizes  `json:"sizes"`
	Version  int    `json:"version"` // SFrame version of the section; 0 without one
	Unusable string `json:"unusable,omitempty"`
	// NoUnwind: the file has neither .sframe nor .eh_frame (data only,
	// or code built without unwind tables): nothing for SFrame to
	// describe, not an error.
	NoUnwind bool `json:"no_unwind,omitempty"`
	// SameAs names an earlier output with the same bytes (an archive
	// member that is also a file of the tree): checked once.
	SameAs   string  `json:"same_as,omitempty"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
	Groups   []Group `json:"groups,omitempty"`
	// Gaps counts the functions without SFrame by cause (check's gaps:
	// coverage, errors only for a lost FDE or a dropped section).
	Gaps map[string]int `json:"gaps,omitempty"`
	// Dynamic is what the dynamic check ran of a linked file (nil when
	// it did not run).
	Dynamic *DynamicRun `json:"dynamic,omitempty"`
}

// DynamicRun is how much of a file the dynamic check emulated and what
// it judged: check's summary.
type DynamicRun struct {
	Instructions int            `json:"instructions"` // instruction boundaries of the functions
	Executed     int            `json:"executed"`     // distinct instructions executed over all runs
	Steps        int            `json:"steps"`        // judged steps
	Verdicts     map[string]int `json:"verdicts,omitempty"`
	Aside        map[string]int `json:"aside,omitempty"` // judged steps kept out of Verdicts, by why
}

// Group is the errors (and warnings) of one file of one kind and cause:
// the check kind, and the message with its numbers and names taken out.
type Group struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Key      string `json:"key"`
	Count    int    `json:"count"`
	Example  string `json:"example"` // the first finding's function and message
}

// buildDir is where one build lives in the campaign directory: the
// package's own optimisation level without a suffix, another with it
// ("x86-64-2.47-O0").
func buildDir(work, pkg string, tg target.Target, series, opt string) string {
	return filepath.Join(work, pkg, tg.Name()+"-"+series+opt)
}

// OptLevels are the optimisation levels --opt accepts.
var OptLevels = []string{"-O0", "-O1", "-O2", "-O3", "-Os"}

// DefaultOpt is Debian's optimisation level (dpkg-buildflags').
const DefaultOpt = "-O2"

// ownOpt is the optimisation level a recipe builds at by default.
func (r Recipe) ownOpt() string {
	if r.Opt != "" {
		return r.Opt
	}
	return DefaultOpt
}

// OptLevel is the build's optimisation level ("-O2").
func (r *BuildResult) OptLevel() string {
	if r.Opt != "" {
		return r.Opt
	}
	if rc, err := FindRecipe(r.Package); err == nil {
		return rc.ownOpt()
	}
	return DefaultOpt
}

// checkOpts refuses an optimisation level not in OptLevels.
func checkOpts(opts []string) error {
	for _, o := range opts {
		if !slices.Contains(OptLevels, o) {
			return fmt.Errorf("optimisation level %q: want one of %s", o, strings.Join(OptLevels, ", "))
		}
	}
	return nil
}

// Run builds what cfg selects, skipping builds with a result unless
// cfg.Force, and returns the results of this run.
func Run(cfg Config) ([]*BuildResult, error) {
	if cfg.Work == "" {
		return nil, errors.New("packages: no campaign directory")
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if cfg.Targets == nil {
		cfg.Targets = Targets
	}
	if err := checkOpts(cfg.Opts); err != nil {
		return nil, err
	}
	recipes := Recipes
	if cfg.Packages != nil {
		recipes = nil
		for _, p := range cfg.Packages {
			r, err := FindRecipe(p)
			if err != nil {
				return nil, err
			}
			recipes = append(recipes, r)
		}
	}
	all, err := toolchain.All()
	if len(all) == 0 {
		return nil, toolchain.NotProvisioned(toolchain.SetupBinutils, "no provisioned GNU toolchain: %v", err)
	}
	var out []*BuildResult
	for _, r := range recipes {
		src, err := Locate(r.Package)
		if err != nil {
			return out, err
		}
		for _, tg := range cfg.Targets {
			var tcs []toolchain.Toolchain
			for _, tc := range all {
				if tc.Target == tg && tc.LD != "" && wanted(cfg.Series, toolchain.Series(tc.Version)) {
					tcs = append(tcs, tc)
				}
			}
			sort.Slice(tcs, func(i, j int) bool { return toolchain.CompareVersions(tcs[i].Version, tcs[j].Version) < 0 })
			for _, tc := range tcs {
				series := toolchain.Series(tc.Version)
				opts := cfg.Opts
				if len(opts) == 0 {
					opts = []string{""}
				}
				for _, opt := range opts {
					if opt == r.ownOpt() {
						opt = ""
					}
					res, err := runOne(cfg, r, src, tg, tc, series, opt)
					if res != nil {
						out = append(out, res)
					}
					if err != nil {
						return out, err
					}
				}
			}
		}
	}
	return out, nil
}

// runOne builds (or, resuming, reads; or checks again) one package for
// one target, series and optimisation level ("" the package's own).
func runOne(cfg Config, r Recipe, src Source, tg target.Target, tc toolchain.Toolchain, series, opt string) (*BuildResult, error) {
	dir := buildDir(cfg.Work, r.Package, tg, series, opt)
	resPath := filepath.Join(dir, "result.json")
	name := fmt.Sprintf("%s %s %s%s", r.Package, tg.Name(), series, opt)
	if cfg.Recheck {
		res, err := readResult(resPath)
		if err != nil || res.Status != Built {
			return nil, nil
		}
		cfg.Log("%s: checking again", name)
		checkAll(cfg, res, dir, src)
		return res, writeResult(resPath, res)
	}
	if !cfg.Force {
		if res, err := readResult(resPath); err == nil && res.Quick == cfg.Quick {
			cfg.Log("%s: done before (%s)", name, res.Status)
			res.Resumed = true
			return res, nil
		}
	}
	cfg.Log("%s: building", name)
	res := buildOne(cfg, r, src, tg, tc, dir, opt)
	cfg.Log("%s: %s, %d files, build %.1fs CPU, check %.1fs CPU", name, res.Status, len(res.Files), res.BuildCPU.Seconds(), res.CheckCPU.Seconds())
	return res, writeResult(resPath, res)
}

// wanted: s is in a selection (nil selects everything).
func wanted(list []string, s string) bool { return len(list) == 0 || slices.Contains(list, s) }

func readResult(p string) (*BuildResult, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var r BuildResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &r, nil
}

func writeResult(p string, r *BuildResult) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// Load reads every result stored in the campaign directory, sorted by
// package (in recipe order), target and series.
func Load(work string) ([]*BuildResult, error) {
	paths, err := filepath.Glob(filepath.Join(work, "*", "*", "result.json"))
	if err != nil {
		return nil, err
	}
	var out []*BuildResult
	for _, p := range paths {
		r, err := readResult(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sortResults(out)
	return out, nil
}

// sortResults orders results by package (in recipe order), target (in
// Targets' order), series and optimisation level.
func sortResults(out []*BuildResult) {
	order := map[string]int{}
	for i, r := range Recipes {
		order[r.Package] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return order[a.Package] < order[b.Package]
		}
		if a.Target != b.Target {
			return targetRank(a.Target) < targetRank(b.Target)
		}
		if a.Series != b.Series {
			return toolchain.CompareVersions(a.Series, b.Series) < 0
		}
		return optRank(a.OptLevel()) < optRank(b.OptLevel())
	})
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildOne builds and checks one package for one target and toolchain.
func buildOne(cfg Config, r Recipe, src Source, tg target.Target, tc toolchain.Toolchain, dir, opt string) *BuildResult {
	series := toolchain.Series(tc.Version)
	res := &BuildResult{Package: r.Package, Version: src.Version, Lang: r.Lang(), System: r.System, Target: tg.Name(), Series: series, Opt: opt,
		Toolchain: fmt.Sprintf("%s %s (Debian %s)", tc.Name, tc.Version, tc.Package), SFrameVersion: tc.SFrameVersion, Quick: cfg.Quick}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Why = Failed, err.Error()
		return res
	}
	switch {
	case tc.SFrameVersion == 0:
		res.Status, res.Why = NotPossible, fmt.Sprintf("gas %s writes no SFrame for %s: %s", tc.Version, tg.Name(), oneLine(tc.SFrameUnsupportedReason()))
		return res
	case tg != target.X86_64 && r.NoCross != "":
		res.Status, res.Why = NotPossible, r.NoCross
		return res
	}
	logPath := filepath.Join(dir, "build.log")
	res.Log, _ = filepath.Rel(cfg.Work, logPath)
	lf, err := os.Create(logPath)
	if err != nil {
		res.Status, res.Why = Failed, err.Error()
		return res
	}
	defer lf.Close()
	b, flags, _, err := buildPackage(r, src, tg, tc, dir, opt, cfg.Jobs, cfg.Quick, lf)
	res.Flags, res.BuildCPU, res.Commands = flags, b.cpu, b.commands
	for i, c := range res.Commands {
		res.Commands[i] = strings.ReplaceAll(c, dir+"/", "")
	}
	if err != nil {
		res.Status, res.Why = Failed, strings.ReplaceAll(err.Error(), dir+"/", "")
		fmt.Fprintf(lf, "\n# FAILED: %v\n", err)
		res.LogTail = logTail(logPath, 25)
		return res
	}
	res.Status = Built
	checkAll(cfg, res, dir, src)
	return res
}

// checkAll collects a build's outputs and checks each.
func checkAll(cfg Config, res *BuildResult, dir string, src Source) {
	outs, shipped, err := collect(dir, src.Dir)
	res.Shipped = shipped
	if err != nil {
		res.Status, res.Why = Failed, "collecting the outputs: "+err.Error()
		return
	}
	t0 := cpuNow()
	seen := map[[32]byte]string{}
	res.Files = nil
	res.Dynamic = cfg.Dynamic
	for _, o := range outs {
		res.Files = append(res.Files, checkOutput(o, cfg.Dynamic, seen))
	}
	res.CheckCPU = cpuNow() - t0
}

// checkOutput judges one output with check (statically; dynamically too
// for linked files when dynamic).
func checkOutput(o Output, dynamic bool, seen map[[32]byte]string) FileResult {
	fr := FileResult{Rel: o.Rel, Type: o.Type, Member: strings.HasSuffix(o.Rel, ")")}
	if s, err := sectionSizes(o.Path); err == nil {
		fr.Sizes = s
	}
	data, err := os.ReadFile(o.Path)
	if err == nil {
		h := sha256.Sum256(data)
		if first, ok := seen[h]; ok {
			fr.SameAs = first
		} else {
			seen[h] = o.Rel
		}
	}
	opts := check.Options{Static: true, Dynamic: dynamic && o.Type != "REL"}
	rep, err := check.File(o.Path, opts)
	if err != nil && fr.Sizes.SFrame == 0 && fr.Sizes.EHFrame == 0 {
		fr.NoUnwind = true
		return fr
	}
	if err != nil {
		fr.Unusable = oneLine(rep.Unusable)
		if fr.Unusable == "" {
			fr.Unusable = oneLine(err.Error())
		}
		return fr
	}
	if len(rep.Sections) > 0 {
		fr.Version = rep.Sections[0].Version
	}
	fr.Errors, fr.Warnings = rep.Summary.Errors, rep.Summary.Warnings
	if opts.Dynamic {
		s := rep.Summary
		fr.Dynamic = &DynamicRun{Instructions: s.Instructions, Executed: s.Executed, Steps: s.Steps, Verdicts: s.Verdicts, Aside: s.Aside}
	}
	fr.Groups = groups(rep)
	for _, g := range rep.Gaps {
		if fr.Gaps == nil {
			fr.Gaps = map[string]int{}
		}
		fr.Gaps[g.Cause] += g.Functions
	}
	return fr
}

var (
	hexRE = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	numRE = regexp.MustCompile(`[0-9]+`)
)

// groupKey is a finding's message with what varies from file to file
// (addresses, counts, the function's name) taken out.
func groupKey(f check.Finding) string {
	// Where: the linker's stubs by section (".plt.got+0" is a stub's
	// name), apart from the code of functions, so that a stub's known
	// finding never stands for a function's.
	where := "function"
	if strings.HasPrefix(f.Func, ".") {
		where, _, _ = strings.Cut(f.Func, "+")
	} else if f.Func == "" {
		where = "file"
	}
	m := f.Message
	if f.Func != "" {
		m = strings.ReplaceAll(m, f.Func, "F")
	}
	m = hexRE.ReplaceAllString(m, "X")
	m = numRE.ReplaceAllString(m, "N")
	if f.Cause != "" {
		m = f.Cause + ": " + m
	}
	return f.Kind + " [" + where + "]: " + m
}

// groups totals a report's errors and warnings by kind and cause (a gap
// that is an error is a finding with its cause).
func groups(rep *check.Report) []Group {
	idx := map[string]int{}
	var out []Group
	for _, f := range rep.Findings {
		if f.Severity == check.SevNote {
			continue
		}
		key := string(f.Severity) + " " + groupKey(f)
		i, ok := idx[key]
		if !ok {
			ex := f.Message
			if f.Func != "" {
				ex = f.Func + ": " + ex
			}
			if f.SFrame != "" || f.CFI != "" {
				ex += fmt.Sprintf(" (SFrame %s, CFI %s)", f.SFrame, f.CFI)
			}
			i = len(out)
			idx[key] = i
			out = append(out, Group{Severity: string(f.Severity), Kind: f.Kind, Key: groupKey(f), Example: oneLine(ex)})
		}
		out[i].Count += max(f.Count, 1)
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), "…")
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// logTail is the last n lines of a log.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// optRank orders optimisation levels as OptLevels does.
func optRank(o string) int {
	for i, x := range OptLevels {
		if x == o {
			return i
		}
	}
	return len(OptLevels)
}
