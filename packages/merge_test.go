package packages

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/target"
)

// campaignResults are six builds as a campaign stores them: two packages
// (one per shard group), two targets, two optimisation levels, with
// files, sizes, findings (one known, one new) and a failed build.
func campaignResults() []*BuildResult {
	file := func(rel, typ string, sf, eh, hdr uint64, groups ...Group) FileResult {
		f := FileResult{Rel: rel, Type: typ, Sizes: Sizes{SFrame: sf, EHFrame: eh, EHFrameHdr: hdr, Text: 4 * sf}, Version: 3, Groups: groups}
		for _, g := range groups {
			if g.Severity == "error" {
				f.Errors += g.Count
			}
		}
		return f
	}
	plt := Group{Severity: "error", Kind: "static", Key: "static [.plt.got]: SFrame row CFA X", Count: 1, Example: ".plt.got+0: row"}
	other := Group{Severity: "error", Kind: "static", Key: "static [function]: SFrame row RA", Count: 2, Example: "f: row"}
	mk := func(pkg, tg, opt string, cpu time.Duration, files ...FileResult) *BuildResult {
		return &BuildResult{Package: pkg, Version: "1.0-1", Lang: "C", System: CMake, Target: tg, Series: "2.47", Opt: opt, SFrameVersion: 3,
			Status: Built, Toolchain: "gas-2.47 2.47.50", Flags: Flags{CFLAGS: "-g " + opt + " -Wa,--gsframe"}, BuildCPU: cpu, CheckCPU: cpu / 10, Files: files}
	}
	dyn := file("libz.so.1", "DYN", 900, 800, 100, plt)
	dyn.Dynamic = &DynamicRun{Instructions: 200, Executed: 50, Steps: 1000, Verdicts: map[string]int{"OK": 990, "WRONG": 10}}
	zlib := mk("zlib", "x86-64", "", 7*time.Second, dyn, file("adler32.o", "REL", 100, 90, 0))
	zlib.Dynamic = true
	failed := mk("tinyxml2", "aarch64", "-O0", time.Second)
	failed.Status, failed.Why, failed.Files, failed.LogTail = Failed, "make -j1: exit status 2", nil, "error: x"
	return []*BuildResult{
		zlib,
		mk("zlib", "x86-64", "-O0", 3*time.Second, file("libz.so.1", "DYN", 1500, 1200, 150), file("adler32.o", "REL", 160, 120, 0)),
		mk("zlib", "aarch64", "", 8*time.Second, file("libz.so.1", "DYN", 500, 800, 100, other)),
		mk("tinyxml2", "x86-64", "", 2*time.Second, file("libtinyxml2.so", "DYN", 300, 280, 40)),
		mk("tinyxml2", "x86-64", "-O0", 2*time.Second, file("libtinyxml2.so", "DYN", 520, 400, 60)),
		failed,
	}
}

func markdown(t *testing.T, results []*BuildResult) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, results, "sfconform packages"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// writeShard writes a shard as the --json of one run would and reads it
// back as --merge does.
func writeShard(t *testing.T, dir, name string, results []*BuildResult) *Shard {
	t.Helper()
	var b bytes.Buffer
	if err := (&Shard{Name: name, Elapsed: time.Duration(len(results)) * time.Minute, Results: results}).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadShard(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMergeEqualsOneRun: the report of one run over a campaign directory
// (Load) and the report merged from two shards of the same builds (one
// per target, written as JSON and read back) are the same text; dropping
// a shard changes the report, giving one twice is refused.
func TestMergeEqualsOneRun(t *testing.T) {
	all := campaignResults()
	work := t.TempDir()
	for _, r := range all {
		tg, err := target.Parse(r.Target)
		if err != nil {
			t.Fatal(err)
		}
		dir := buildDir(work, r.Package, tg, r.Series, r.Opt)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeResult(filepath.Join(dir, "result.json"), r); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := Load(work)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != len(all) {
		t.Fatalf("Load read %d results, want %d", len(loaded), len(all))
	}
	one := markdown(t, loaded)

	// The shards in an order of their own, each with its results out of
	// the report's order: the merge sorts.
	var x86, rest []*BuildResult
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Target == "x86-64" {
			x86 = append(x86, all[i])
		} else {
			rest = append(rest, all[i])
		}
	}
	sd := t.TempDir()
	a := writeShard(t, sd, "--targets aarch64", rest)
	b := writeShard(t, sd, "--targets x86-64", x86)
	merged, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := markdown(t, merged); got != one {
		t.Errorf("merged report differs from one run's:\n%s", firstDiff(one, got))
	}
	for _, want := range []string{"| x86-64 | 2.47 | -O0 |", "| zlib | x86-64 | 2.47 | 1500 (1.11) | - | 900 (1.00) | - | - |", "**new**", "037-ld-x86-plt-got-cfa-16.md",
		"| c-small | x86-64 | zlib, bzip2, cjson, lz4, lmdb, libyaml, jansson | 2 | -O0 -O2 | 11 |",
		"| zlib | x86-64 | 2.47 | -O2 | 1 | 50 / 200 (25%) | 1000 | OK 990, WRONG 10 | - | 0 |", "| zlib | x86-64 | 2.47 | -O2 | v3 | built | static + dynamic |",
		"- `sfconform packages --dir DIR --targets x86-64,aarch64`\n- `sfconform packages --dir DIR --targets x86-64,aarch64 --series 2.47 --opt -O0`\n" +
			"- `sfconform packages --dir DIR --targets x86-64 --series 2.47 --recheck --dynamic`\n"} {
		if !strings.Contains(one, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	dropped, err := Merge(b)
	if err != nil {
		t.Fatal(err)
	}
	if markdown(t, dropped) == one {
		t.Error("the report without the aarch64 shard is the same as with it")
	}
	if _, err := Merge(a, b, b); err == nil || !strings.Contains(err.Error(), `x86-64 2.47 -O0 is in shard "--targets x86-64" and in shard "--targets x86-64"`) {
		t.Errorf("Merge with a shard twice: %v, want an error naming a build of it", err)
	}
	// One build in two different shards (a layout that overlaps).
	c := writeShard(t, sd, "--packages zlib", []*BuildResult{all[1]})
	if _, err := Merge(a, b, c); err == nil || !strings.Contains(err.Error(), `"--targets x86-64"`) || !strings.Contains(err.Error(), `"--packages zlib"`) {
		t.Errorf("Merge of overlapping shards: %v, want an error naming both", err)
	}

	var lay bytes.Buffer
	ShardTable(&lay, []*Shard{a, b})
	if !strings.Contains(lay.String(), "2 shards; wall time 4m0s side by side (the longest shard), 6m0s one after the other") {
		t.Errorf("shard table:\n%s", lay.String())
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "lengths " + strconv.Itoa(len(al)) + " and " + strconv.Itoa(len(bl))
}

// TestReadShardBadInput: a file that is not a shard is refused with its
// name and a byte offset.
func TestReadShardBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"syntax.json": `{"results": [ {"package": "zlib",, ]}`,
		"type.json":   `{"results": 3}`,
		"empty.json":  `{"name": "x", "results": []}`,
		"other.json":  `{"rows": [{"scenario": "lld"}]}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadShard(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "byte offset") {
			t.Errorf("ReadShard(%s) = %v, want an error naming the file and a byte offset", name, err)
		}
	}
}

// TestShardGroupsCoverRecipes: every recipe is in exactly one shard group
// and every group's package has a recipe, so the CI matrix (groups x
// targets) builds the whole campaign once.
func TestShardGroupsCoverRecipes(t *testing.T) {
	in := map[string]int{}
	for _, g := range ShardGroups {
		for _, p := range g.Packages {
			if _, err := FindRecipe(p); err != nil {
				t.Errorf("group %s: %v", g.Name, err)
			}
			in[p]++
		}
	}
	for _, r := range Recipes {
		if in[r.Package] != 1 {
			t.Errorf("package %s is in %d shard groups, want 1", r.Package, in[r.Package])
		}
	}
}

// TestNewShardCountsResumed: the results a run read from an earlier one
// are counted, as the shard table says.
func TestNewShardCountsResumed(t *testing.T) {
	rs := campaignResults()
	rs[0].Resumed, rs[3].Resumed = true, true
	if s := NewShard("x", time.Minute, rs); s.Resumed != 2 || len(s.Results) != len(rs) {
		t.Errorf("NewShard: %d resumed of %d, want 2 of %d", s.Resumed, len(s.Results), len(rs))
	}
}
