package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

const finding = "docs/findings/000-test.md"

func list(t *testing.T, text string) *deviation.List {
	t.Helper()
	l, err := deviation.Parse(strings.NewReader(text), "list")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// brokenProgram is a builtin-v3 image of a program of patterns whose
// functions of pattern broken have no FDE: NOINFO charged to broken.
func brokenProgram(t *testing.T, seed int64, patterns []string, broken string) campaign.Produced {
	t.Helper()
	_, prog, err := campaign.Produce(producer.Builtin{Version: 3}, target.X86_64, seed, gen.Options{Patterns: patterns})
	if err != nil {
		t.Fatal(err)
	}
	drop := map[uint64]bool{}
	for _, f := range prog.Funcs {
		if f.Pattern == broken {
			drop[f.Addr] = true
		}
	}
	if len(drop) == 0 {
		t.Fatalf("seed %d: no function of pattern %s", seed, broken)
	}
	var fdes []sframe.FDE
	for _, f := range prog.FDEs() {
		if !drop[f.Start] {
			fdes = append(fdes, f)
		}
	}
	img, err := producer.BuiltinFrom(prog, 3, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return campaign.Produced{Seed: seed, Img: img, Prog: prog}
}

func tallyOf(t *testing.T, c Cell, ps ...campaign.Produced) *Tally {
	t.Helper()
	chk, err := harness.New(c.Target, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	tl := NewTally(c)
	for _, p := range ps {
		tl.Add(p, chk.CheckProgram(p.Img, nil, p.Prog, consumer.NewBuiltin()), "sp-frame")
	}
	return tl
}

// A tally counts programs, steps and blames, and which patterns ran.
func TestTallyAdd(t *testing.T) {
	t.Parallel()
	c := Cell{Target: target.X86_64, Producer: "builtin-v3", Consumer: "builtin"}
	var ps []campaign.Produced
	for seed := int64(1); seed <= 3; seed++ {
		ps = append(ps, brokenProgram(t, seed, []string{"sp-frame", "fp-frame"}, "sp-frame"))
	}
	tl := tallyOf(t, c, ps...)
	if tl.Programs != 3 || tl.Made["sp-frame"] != 3 || tl.Instructions == 0 || tl.Counts[verdict.NoInfo] == 0 {
		t.Fatalf("tally %+v", tl)
	}
	b := harness.Blame{Pattern: "sp-frame", Verdict: verdict.NoInfo}
	n := tl.Blames[b]
	if len(tl.Blames) != 1 || n == nil || n.Programs != 3 || n.Steps != tl.Counts[verdict.NoInfo] || n.Sample == nil || n.Sample.Failure == nil {
		t.Fatalf("blames %v", tl.Blames)
	}
	for _, p := range ps[1:] {
		if len(p.Img.Code) < n.Sample.Size && n.Sample.Seed != p.Seed {
			t.Errorf("the sample (seed %d, %d bytes) is not the smallest program (seed %d, %d bytes)", n.Sample.Seed, n.Sample.Size, p.Seed, len(p.Img.Code))
		}
	}
	if tl.Ran["sp-frame"] != 3 || tl.Ran["entry"] != 3 {
		t.Errorf("ran %v", tl.Ran)
	}
	// Merging keeps the counts.
	all := NewTally(c)
	all.Merge(tl)
	all.Merge(tallyOf(t, c, ps[0]))
	if all.Programs != 4 || all.Blames[b].Programs != 4 || len(all.failing) != 4 {
		t.Errorf("merged: %d programs, %d with the blame, %d failing", all.Programs, all.Blames[b].Programs, len(all.failing))
	}
}

// Classify: a failure an entry matches is expected, any other is not; an
// entry of the cell that matched nothing is stale once its pattern ran in
// enough programs, pending before.
func TestClassify(t *testing.T) {
	t.Parallel()
	c := Cell{Target: target.X86_64, Producer: "builtin-v3", Consumer: "builtin"}
	var ps []campaign.Produced
	for seed := int64(1); seed <= 8; seed++ {
		ps = append(ps, brokenProgram(t, seed, []string{"sp-frame"}, "sp-frame"))
	}
	tl := tallyOf(t, c, ps...)

	o := Classify(tl, list(t, "builtin-v3/builtin x86-64 sp-frame NOINFO "+finding+"\n"))
	if !o.OK() || o.Status() != "expected" || len(o.Hits) != 1 || o.Hits[0].Programs != 8 || o.Hits[0].Ran != 8 || o.Hits[0].Steps != tl.Counts[verdict.NoInfo] {
		t.Errorf("matched: status %s, hits %+v, problems %v", o.Status(), o.Hits, o.Problems())
	}

	o = Classify(tl, list(t, "builtin-v3/builtin x86-64 sp-frame WRONG "+finding+"\n"))
	if o.OK() || len(o.Unexpected) != 1 || len(o.Stale) != 1 || o.Status() != "failed" {
		t.Errorf("another verdict: unexpected %v, stale %v", o.Unexpected, o.Stale)
	}
	for _, want := range []string{"sp-frame NOINFO in 8 programs", "no expected deviation matches", "list:1", "no longer deviates", "fixed upstream?"} {
		if !strings.Contains(strings.Join(o.Problems(), "\n"), want) {
			t.Errorf("problems %q lack %q", o.Problems(), want)
		}
	}

	// Stale from min programs on; pending below; other patterns' entries
	// are judged by their own pattern's programs.
	o = Classify(tl, list(t, `builtin-v3/builtin x86-64 sp-frame NOINFO `+finding+`
builtin-v3/builtin x86-64 fp-frame WRONG `+finding+`
builtin-v3/builtin x86-64 leaf WRONG `+finding+`
builtin-v3/builtin x86-64 entry WRONG `+finding+` min=9
builtin-v3/builtin x86-64 * ERROR `+finding+`
`))
	stale := map[string]bool{}
	for _, h := range o.Stale {
		stale[h.Entry.Pattern] = true
	}
	pending := map[string]int{}
	for _, h := range o.Pending {
		pending[h.Entry.Pattern] = h.Ran
	}
	if !stale["*"] || stale["entry"] || stale["leaf"] || pending["entry"] != 8 || pending["leaf"] != 0 {
		t.Errorf("stale %v, pending %v (fp-frame ran in %d)", stale, pending, tl.Ran["fp-frame"])
	}
	if tl.Ran["fp-frame"] >= deviation.DefaultMin != stale["fp-frame"] {
		t.Errorf("fp-frame ran in %d programs: stale %v", tl.Ran["fp-frame"], stale["fp-frame"])
	}

	// An entry of another cell does not apply.
	o = Classify(tl, list(t, "builtin-v2/builtin x86-64 sp-frame WRONG "+finding+"\n"))
	if len(o.Stale)+len(o.Pending) != 0 || len(o.Unexpected) != 1 {
		t.Errorf("another cell's entry: %+v", o)
	}
}

// The Markdown names the cells, links the findings, the entries and the
// stored cases, and lists failures and unsupported cells with reasons;
// the cases replay.
func TestMarkdownAndCases(t *testing.T) {
	t.Parallel()
	c := Cell{Target: target.X86_64, Producer: "builtin-v3", Consumer: "builtin"}
	tl := tallyOf(t, c, brokenProgram(t, 1, []string{"sp-frame", "fp-frame"}, "sp-frame"), brokenProgram(t, 2, []string{"sp-frame", "fp-frame"}, "fp-frame"))
	l := list(t, "builtin-v3/builtin x86-64 sp-frame NOINFO "+finding+"\n")
	rep := &Report{
		Config: Config{Targets: []target.Target{target.X86_64}, Producers: []string{"builtin-v3", "gas-2.40"}, Consumers: []string{"builtin"}, Programs: 2, Seed: 1, List: l},
		Cells: []*CellReport{
			{Cell: c, Outcome: Classify(tl, l), Unexpressed: map[string]string{}, Skipped: map[string]string{}},
			{Cell: Cell{Target: target.S390X, Producer: "gas-2.40", Consumer: "builtin"}, Unsupported: "GNU as 2.40 does not emit SFrame for s390x"},
		},
	}
	dir := t.TempDir()
	stray := filepath.Join(dir, "old-case.json")
	if err := os.WriteFile(stray, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := SaveCases(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("a case of an earlier run is left: %v", err)
	}
	hit := rep.Cells[0].Outcome.Hits[0].Entry
	unexpected := harness.Blame{Pattern: "fp-frame", Verdict: verdict.NoInfo}
	for _, name := range []string{cs.ByEntry[hit], cs.ByFailure[c][unexpected]} {
		if name == "" {
			t.Fatalf("cases %+v", cs)
		}
		k, err := corpus.Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if k.Verdict != verdict.NoInfo || !strings.HasPrefix(k.Replay, "sfconform run --replay ") || k.Consumer != "builtin" {
			t.Errorf("%s: %+v", name, k)
		}
	}
	if cs.Files != 2 || cs.Bytes == 0 {
		t.Errorf("%d files, %d bytes", cs.Files, cs.Bytes)
	}

	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, rep, Markdown{Command: "make matrix", Cases: cs, CaseDir: "matrix/cases", FindingsDir: "findings",
		Versions: map[string]string{"gas-2.40": "as 2.40 (Debian bookworm 2.40-2)"}}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"Generated by `make matrix`",
		"2 cells: 0 clean, 0 expected (every failure a known deviation), 1 unsupported, 1 failed",
		"| gas-2.40 | as 2.40 (Debian bookworm 2.40-2) |",
		"| x86-64 | builtin-v3 | builtin | **failed** | 2 |",
		"[000-test](findings/000-test.md)",
		"| x86-64 builtin-v3 x builtin | fp-frame | NOINFO | 1 |",
		"[case](matrix/cases/" + cs.ByFailure[c][unexpected] + ")",
		"[line 1](../list#L1)",
		"| sp-frame NOINFO | 1 of 2 |",
		"[case](matrix/cases/" + cs.ByEntry[hit] + ")",
		"| s390x | gas-2.40 | builtin | GNU as 2.40 does not emit SFrame for s390x |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestStableCommands holds the stored cases' toolchain commands to one
// text per seed: the batch's temporary directory is named $WORK/, and
// nothing else of a command changes.
func TestStableCommands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/usr/bin/as --gsframe -o /tmp/sfconform-gas-2.44-3694509280/b0.o /tmp/sfconform-gas-2.44-3694509280/b0.s",
			"/usr/bin/as --gsframe -o $WORK/b0.o $WORK/b0.s"},
		{"ld -Ttext=0x10000000 -o /var/tmp/x/sfconform-llvm-mc-23-1/b /var/tmp/x/sfconform-llvm-mc-23-1/b0.o",
			"ld -Ttext=0x10000000 -o $WORK/b $WORK/b0.o"},
		{"as -o /tmp/sfconform-gas_dir_home_b-42/b0.o b0.s", "as -o $WORK/b0.o b0.s"},
		// Not a batch directory: left alone.
		{"as -o /tmp/sfconform-gas-2.44/b0.o /tmp/sfconform-x-12", "as -o /tmp/sfconform-gas-2.44/b0.o /tmp/sfconform-x-12"},
		{"/var/cache/sfconform/toolchains/binutils-2.44/bin/x86_64-linux-gnu-as", "/var/cache/sfconform/toolchains/binutils-2.44/bin/x86_64-linux-gnu-as"},
	} {
		got := stableCommands([]string{tc.in})
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("stableCommands(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
