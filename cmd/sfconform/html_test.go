package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/browser"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
)

// failingCaseV2 saves, in format 2 (with the machine state), a
// reproducer of a table whose second function's CFA is one word off.
func failingCaseV2(t *testing.T, abi target.Target) string {
	t.Helper()
	bad, _, prog := brokenTable(t, abi)
	chk, err := harness.New(abi, harness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chk.Close()
	cons := consumer.NewBuiltin()
	res := chk.Check(bad, cons)
	if res.Clean() {
		t.Fatal("the broken table conforms")
	}
	path, err := corpus.Save(t.TempDir(), repro.NewCase(repro.CaseInput{Img: bad, Prog: prog, Seed: 21, Consumer: cons, Res: res, Checker: chk}))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// failingRowColour is the background of the failing instruction's row
// (report/html's tr.failing, #ffb3b3).
var failingRowColour = [3]uint32{0xff, 0xb3, 0xb3}

// checkInBrowser renders a report in headless Chromium at its failing
// step (the page's fragment link to it) and checks what a reader meets:
// a screenshot, no console error, no request leaving the file, the
// failing step visible, and its row's colour on the screen.
func checkInBrowser(t *testing.T, chromium, page, stepID string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	// Readable without JavaScript, self-contained, and every fragment
	// link lands on an element.
	if strings.Contains(text, "<script") || regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(text) {
		t.Errorf("%s: scripts or outside resources", page)
	}
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(text, -1) {
		if !strings.Contains(text, `id="`+m[1]+`"`) {
			t.Errorf("%s: a link to #%s, which no element has", page, m[1])
		}
	}
	if m, f := strings.Index(text, `id="matrix"`), strings.Index(text, `class="failure"`); m < 0 || f < 0 || m > f {
		t.Errorf("%s: the matrix (at %d) does not come before the failures (at %d)", page, m, f)
	}
	abs, _ := filepath.Abs(page)
	p, err := browser.Render(context.Background(), chromium, "file://"+abs+"#"+stepID, browser.Options{Visible: []string{stepID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 || len(p.Requests) > 0 {
		t.Errorf("%s: console errors %q, requests %q", page, p.Errors, p.Requests)
	}
	if v := p.Visible[stepID]; v != "visible" {
		t.Errorf("%s: the failing step #%s is not visible: %s", page, stepID, v)
	}
	img, err := png.Decode(bytes.NewReader(p.Screenshot))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", page, err)
	}
	shot := filepath.Join(filepath.Dir(page), "screenshot.png")
	os.WriteFile(shot, p.Screenshot, 0o644)
	n := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if [3]uint32{r >> 8, g >> 8, b >> 8} == failingRowColour {
				n++
			}
		}
	}
	// A row of a dozen pixels high across a few hundred: thousands.
	if n < 1000 {
		t.Errorf("%s: %d pixels of the failing row's colour on the screenshot (%s)", page, n, shot)
	}
	t.Logf("%s: %d bytes of screenshot, %d pixels of the failing row", page, len(p.Screenshot), n)
}

// repro --html: the replayed case as a page, its failing step shown.
func TestReproHTMLInBrowser(t *testing.T) {
	t.Parallel()
	chromium := browser.Need(t)
	for _, abi := range []target.Target{target.X86_64, target.S390X} {
		path := failingCaseV2(t, abi)
		dir := t.TempDir()
		_, errOut, code := runCLI("repro", "--html", dir, path)
		if code != exitFailure {
			t.Fatalf("%s: exit %d: %s", abi.Name(), code, errOut)
		}
		page := filepath.Join(dir, "index.html")
		b, _ := os.ReadFile(page)
		// The stack picture marks SP, the CFA the oracle found and the
		// consumer's; on x86-64 the slot the row reads the RA from (on
		// s390x it is still in %r14 at the entry).
		// The oracle's frames beside the instructions that ran.
		wants := []string{">SP<", ">CFA of #0<", "the consumer&#39;s CFA of #0", `<td class="mono">#0 0x`}
		if abi == target.X86_64 {
			wants = append(wants, "row reads the RA here")
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: the page does not show %q", abi.Name(), want)
			}
		}
		checkInBrowser(t, chromium, page, "failing-step-0")
	}
}

// run --html: the matrix, then each failure; every failure's step shown.
func TestRunHTMLInBrowser(t *testing.T) {
	t.Parallel()
	chromium := browser.Need(t)
	if _, err := producer.New("gas-2.44"); err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.44: %v", err)
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "html")
	_, errOut, code := runCLI("run", "--producer", "gas-2.44,builtin-v3", "--targets", "x86-64,s390x", "--programs", "2",
		"--seed", "4", "-q", "--out", filepath.Join(dir, "failures"), "--html", html)
	if code != exitFailure {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	page := filepath.Join(html, "index.html")
	b, _ := os.ReadFile(page)
	// gas-2.44's two failing programs fail alike: one section, which
	// says so.
	if n := strings.Count(string(b), `class="failure"`); n != 1 {
		t.Errorf("%d failures worked through, want 1 (one signature)", n)
	}
	for _, want := range []string{"unsupported", "x86-64</td><td>gas-2.44", `href="#failure-0"`, "programs with it", "signature", "#1 (2)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	checkInBrowser(t, chromium, page, "failing-step-0")
}

// The report works through failures of every failing cell in turn, up to
// its limit, and never a producer's .txt.
func TestHTMLDetailsEveryFailingCell(t *testing.T) {
	t.Parallel()
	cells := []*cell{
		{Saved: []string{"a1.json", "a2.json", "a3.json", "a4.json"}},
		{},
		{Saved: []string{"b1.txt", "b2.json"}},
		{Saved: []string{"c1.json", "c2.json"}},
	}
	groups := map[*cell][]*failureGroup{}
	for _, c := range cells {
		groups[c] = groupFailures(c, nil)
	}
	got := detailed(cells, groups, 5)
	want := []string{"a1.json", "b2.json", "c1.json", "a2.json", "c2.json"}
	if len(got) != len(want) {
		t.Fatalf("detailed %v, want %v", got, want)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("detailed %v, want %v", got, want)
		}
	}
	if n := len(detailed(cells, groups, 100)); n != 7 {
		t.Errorf("with room for all: %d detailed, want 7", n)
	}
}

// Reproducers of one root cause are one group, with their count and the
// finding an expected deviation names; another signature is another
// group, and a producer's failure is one of its own.
func TestFailuresGroupedBySignature(t *testing.T) {
	t.Parallel()
	a, b := failingCaseV2(t, target.X86_64), failingCaseV2(t, target.X86_64)
	k, err := corpus.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	c := &cell{Target: "x86-64", Producer: "builtin-v3", Consumer: "builtin", Saved: []string{a, "p.txt", b},
		ByPattern: map[string]*campaign.PatternResult{"leaf": {Reproducers: []string{a, b}}}}
	line := fmt.Sprintf("builtin-v3/builtin  x86-64  leaf  %s:%s  docs/findings/000-example.md\n", k.Verdict, k.Field)
	known, err := deviation.Parse(strings.NewReader(line), "test")
	if err != nil {
		t.Fatal(err)
	}
	gs := groupFailures(c, known)
	if len(gs) != 2 || len(gs[0].Paths) != 2 || len(gs[1].Paths) != 1 {
		for _, g := range gs {
			t.Logf("%d: %s", len(g.Paths), g.Signature)
		}
		t.Fatalf("%d groups, want the two copies together and the .txt alone", len(gs))
	}
	if gs[0].Finding != "docs/findings/000-example.md" || !strings.Contains(gs[0].Signature, "leaf") {
		t.Errorf("group %+v: want the pattern in its signature and the finding named", gs[0])
	}
	text := strings.Join(groupLines(gs[0], 1), "\n")
	if !strings.Contains(text, "2 program(s)") || !strings.Contains(text, "known: docs/findings/000-example.md") || !strings.Contains(text, "... and 1 more") {
		t.Errorf("text lines:\n%s", text)
	}
}
