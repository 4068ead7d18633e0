package dumper

// Cross-checks against the dumpers themselves: the texts under testdata
// (read by the offline tests) must be what the provisioned tools print
// today, for sections wrapped by ELF. Regenerate them with
//
//	go test ./dumper -run TestDumperTextsAreCurrent -update

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

var update = flag.Bool("update", false, "rewrite the dumper texts under testdata from the provisioned tools")

// storedText is one dumper text kept under testdata: the dumper, the
// section it printed and the file the text is kept in.
type storedText struct {
	tool    string // "objdump-2.47", "llvm-readobj-23"
	section golden // raw, base, abi; text unused
	file    string
}

// builtinSections are the sections of testdata/sections (see
// gensections.go), as goldens without text.
func builtinSections(tb testing.TB) []golden {
	tb.Helper()
	files, err := filepath.Glob("testdata/sections/*.sframe")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no testdata/sections/*.sframe (go run ./dumper/testdata/gensections.go): %v", err)
	}
	sort.Strings(files)
	var out []golden
	for _, f := range files {
		stem := strings.TrimSuffix(f, ".sframe")
		g := golden{name: "sections/" + filepath.Base(stem)}
		var err error
		if g.raw, err = os.ReadFile(f); err != nil {
			tb.Fatal(err)
		}
		a, err := os.ReadFile(f + ".addr")
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := fmt.Sscanf(string(a), "%v", &g.base); err != nil {
			tb.Fatalf("%s.addr: %v", f, err)
		}
		tg, _, _ := strings.Cut(filepath.Base(stem), "-v")
		if g.abi, err = sframe.ParseTarget(tg); err != nil {
			tb.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// storedTexts lists the texts under testdata: objdump 2.47 of every
// builtin section; llvm-readobj 23 of the version 2 ones (s390x too: the
// text it prints is kept to show it cannot read it) and of the linked
// version 2 sections GNU as and ld 2.44 made.
func storedTexts(tb testing.TB) []storedText {
	tb.Helper()
	var out []storedText
	for _, g := range builtinSections(tb) {
		out = append(out, storedText{"objdump-2.47", g, "testdata/objdump-2.47/" + g.name + ".txt"})
		if strings.Contains(g.name, "-v2-") {
			out = append(out, storedText{"llvm-readobj-23", g, "testdata/llvm-readobj-23/" + g.name + ".txt"})
		}
	}
	for _, g := range goldenSections(tb) {
		if strings.HasPrefix(g.name, "gas-2.44/") && !g.object {
			out = append(out, storedText{"llvm-readobj-23", g, "testdata/llvm-readobj-23/" + g.name + ".txt"})
		}
	}
	return out
}

// toolPath finds a provisioned dumper for a target: objdump-<series> and
// readelf-<series> from the binutils toolchains, llvm-readobj-<major>
// from toolchains/llvm-<major>.
func toolPath(t *testing.T, tool string, tg target.Target) string {
	t.Helper()
	if major, ok := strings.CutPrefix(tool, "llvm-readobj-"); ok {
		p := filepath.Join(toolchain.CacheDir(), "toolchains", "llvm-"+major, "bin", "llvm-readobj")
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("SFCONFORM_SKIP_LLVM") == "1" {
				t.Skip("SFCONFORM_SKIP_LLVM=1: setup left LLVM out")
			}
			testenv.Missing(t, testenv.LLVM, "%s is not provisioned (%v)", tool, err)
		}
		return p
	}
	name, series, _ := strings.Cut(tool, "-")
	all, err := toolchain.All()
	for _, tc := range all {
		if v := strings.SplitN(tc.Version, ".", 3); tc.Target == tg && len(v) > 1 && v[0]+"."+v[1] == series {
			if name == "readelf" {
				return tc.Readelf
			}
			return tc.Objdump
		}
	}
	testenv.Missing(t, testenv.Binutils, "binutils %s for %s is not provisioned (%v)", series, tg.Name(), err)
	return ""
}

// runDumper prints section with the tool, from the line that opens the
// section's listing on ("Contents of the SFrame section", "SFrame
// section"): the lines before name the temporary file.
func runDumper(t *testing.T, tool string, g golden) string {
	t.Helper()
	path := toolPath(t, tool, target.Target(g.abi))
	file, err := ELF(g.abi, g.abi.ByteOrder(), g.raw, g.base)
	if err != nil {
		t.Fatal(err)
	}
	elfPath := filepath.Join(t.TempDir(), "s.elf")
	if err := os.WriteFile(elfPath, file, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path, "--sframe=.sframe", elfPath)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	out := stdout.String()
	for _, open := range []string{"Contents of the SFrame section", "SFrame section '"} {
		if i := strings.Index(out, open); i >= 0 {
			out = out[i:]
			break
		}
	}
	// What the dumper says on standard error goes with it, without the
	// file name.
	if msg := strings.ReplaceAll(stderr.String(), elfPath, "FILE"); msg != "" || runErr != nil {
		if i := strings.Index(msg, "warning: "); i >= 0 {
			msg = msg[i:]
		}
		out += fmt.Sprintf("# stderr (%v): %s", runErr, msg)
	}
	return out
}

// TestDumperTextsAreCurrent runs the provisioned dumpers on the sections
// of the stored texts and compares: a new tool version that prints
// differently must be looked at (and the texts updated) before the parser
// tests can pass on its word.
func TestDumperTextsAreCurrent(t *testing.T) {
	t.Parallel()
	for _, s := range storedTexts(t) {
		t.Run(s.file, func(t *testing.T) {
			t.Parallel()
			got := runDumper(t, s.tool, s.section)
			if *update {
				if err := os.MkdirAll(filepath.Dir(s.file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(s.file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatalf("%v (go test ./dumper -run %s -update writes it)", err, t.Name())
			}
			if got != string(want) {
				t.Errorf("%s prints differently now:\n%s", s.tool, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows the first line where two texts differ.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  stored: %q\n  now:    %q", i+1, w, g)
		}
	}
	return "(the texts differ only in line endings)"
}
