package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

func sampleImage() *image.Image {
	return &image.Image{
		Target: target.S390X, Producer: "builtin-v3", SFrameVersion: 3,
		Code: []byte{0xc0, 0xe5, 0, 0, 0, 3, 0x07, 0xfe}, CodeAddr: 0x10000000,
		Entry: 0x10000000, Exit: 0x10000006,
		Symbols: []image.Symbol{{Name: "_start", Addr: 0x10000000, Size: 8},
			{Name: "stack_f", Addr: 0x700dc000, Size: 0x2000, Kind: image.KindStack}},
		Segments:   []image.Segment{{Addr: 0x150000000, Code: []byte{0x07, 0xfe}}},
		Paths:      []map[int]uint64{{2: 0xfffffffffffffff0, 3: 7}, {2: 1}},
		SFrame:     []byte{0xde, 0xe2, 3, 5},
		SFrameAddr: 0x10001000,
		Record: &image.Record{
			Tools:    []image.Tool{{Name: "as", Path: "/x/as", Version: "GNU assembler 2.47.50.20261021", Package: "2.47.50.20261021-1", Suite: "sid"}},
			Commands: []string{"/x/as --gsframe -o b.o b.s"},
			Batch:    7,
			Warnings: []image.Warning{{Tool: "as", Function: "f2_drap", Line: 31, Text: "skipping SFrame FDE"}},
		},
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Case{Consumer: "builtin", Seed: -42, Step: 17, PC: 0x10000006, Verdict: verdict.Wrong, Frame: 1, Field: "cfa",
		Expected: []frame.Frame{{PC: 1, CFA: 2, SP: 3, FP: 4}}, Got: []frame.Frame{{PC: 1, Outermost: true}}}
	c.SetImage(sampleImage(), 0)
	p1, err := Save(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Save(dir, c)
	if err != nil || p1 == p2 {
		t.Fatalf("second save of the same coordinates: %q, %v (must not overwrite %q)", p2, err, p1)
	}
	got, err := Load(p1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Replay, p1) {
		t.Errorf("replay command %q does not name the file", got.Replay)
	}
	img, err := got.Image()
	if err != nil {
		t.Fatal(err)
	}
	// A case keeps the run it failed in: the image comes back with that
	// path only.
	want := sampleImage()
	want.Paths = want.Paths[:1]
	if !reflect.DeepEqual(img, want) {
		t.Errorf("image after round trip:\n got %+v\nwant %+v", img, want)
	}
	if got.Seed != -42 || got.Verdict != verdict.Wrong || !reflect.DeepEqual(got.Expected, c.Expected) || !reflect.DeepEqual(got.Got, c.Got) {
		t.Errorf("case fields lost: %+v", got)
	}
	raw, _ := os.ReadFile(p1)
	if !strings.Contains(string(raw), `"pc": "0x10000006"`) || !strings.Contains(string(raw), `"verdict": "WRONG"`) {
		t.Errorf("addresses and verdicts are not stored readably:\n%s", raw)
	}
}

func TestLoadReportsFileAndOffset(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Case{Consumer: "builtin"}
	c.SetImage(sampleImage(), 0)
	p, err := Save(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(p)
	cases := []struct{ name, content, want string }{
		{"truncated", string(good[:len(good)/2]), "byte offset"},
		{"bad hex", strings.Replace(string(good), `"code": "c0e5`, `"code": "zz`, 1), "byte offset"},
		{"bad address", strings.Replace(string(good), `"entry": "0x10000000"`, `"entry": "banana"`, 1), "byte offset"},
		{"unknown field", strings.Replace(string(good), `"target"`, `"targte"`, 1), "unknown field"},
		{"bad target", strings.Replace(string(good), `"target": "s390x"`, `"target": "vax"`, 1), "unknown target"},
		{"entry outside code", strings.Replace(string(good), `"entry": "0x10000000"`, `"entry": "0x20000000"`, 1), "outside the code"},
		{"wrong format", strings.Replace(string(good), FormatName, "other/9", 1), "format"},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, tc.name+".json")
		os.WriteFile(path, []byte(tc.content), 0o644)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tc.name, err, path, tc.want)
		}
	}
	if _, err := Parse("cut.json", good[:40]); err == nil || !strings.Contains(err.Error(), "byte offset 40") {
		t.Errorf("truncated file: %v, want the offset where it ends (40)", err)
	}
	bad := strings.Replace(string(good), `"regs": {`, `"regs": {"99": "0x1",`, 1)
	if _, err := Parse("x.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), "field regs.99") {
		t.Errorf("register number 99: %v", err)
	}
}

// TestSignalRoundTrip: a case keeps the signal of the run it failed in, and
// the kinds of the symbols, so that it replays with the same handler.
func TestSignalRoundTrip(t *testing.T) {
	t.Parallel()
	img := sampleImage()
	img.Symbols = append(img.Symbols,
		image.Symbol{Name: "h", Addr: 0x10000008, Size: 2, Kind: image.KindSignalHandler},
		image.Symbol{Name: "r", Addr: 0x1000000a, Size: 4, Kind: image.KindSignalRestorer})
	img.Signals = []image.Signal{
		{Path: 0, At: 0x10000000, Count: 1, Signo: 10, Handler: 0x10000008, Restorer: 0x1000000c},
		{Path: 1, At: 0x10000006, Count: 2, Signo: 27, Handler: 0x10000008, Restorer: 0x1000000c},
	}
	c := &Case{Consumer: "builtin", Step: 3, Verdict: verdict.Wrong, Expected: []frame.Frame{{PC: 1}}, Got: []frame.Frame{{PC: 2}}}
	c.SetImage(img, 1)
	p, err := Save(t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := got.Image()
	if err != nil {
		t.Fatal(err)
	}
	want := img.Signals[1]
	want.Path = 0
	if !reflect.DeepEqual(back.Signals, []image.Signal{want}) || !reflect.DeepEqual(back.Symbols, img.Symbols) {
		t.Errorf("signals %+v symbols %+v, want %+v and %+v", back.Signals, back.Symbols, want, img.Symbols)
	}
	c.SetImage(img, 5)
	if c.Signal != nil {
		t.Errorf("a path without a signal kept %+v", c.Signal)
	}
}

// A producer named after a directory, a consumer after a command line:
// the file still lands in dir, under a name of its coordinates.
func TestSaveNamesWithPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Case{Consumer: "exec:./unwind --fast", Seed: 3, Step: 9}
	c.SetImage(sampleImage(), 0)
	c.Producer = "gas:/opt/binutils/build"
	path, err := Save(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || filepath.Base(path) != "s390x-gas__opt_binutils_build-exec_._unwind_--fast-seed3-step9.json" {
		t.Errorf("saved as %s", path)
	}
	if back, err := Load(path); err != nil || back.Producer != c.Producer {
		t.Errorf("loaded %+v, %v", back, err)
	}
}
