package kit

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
)

// unwinder is the Python consumer, relative to this package.
const unwinder = "python/sframe_unwinder.py"

// programsPerCell is what make test spends: 4 targets x 2 versions x this
// many programs (each run along 4 argument vectors) takes 10-30 s. A
// longer run is 'sfconform run' with the same consumer (kit/README.md).
const programsPerCell = 4

// summary is the part of 'sfconform run --json' the tests read.
type summary struct {
	Seed  uint64 `json:"seed"`
	Cells []struct {
		Target        string         `json:"target"`
		Producer      string         `json:"producer"`
		Consumer      string         `json:"consumer"`
		SFrameVersion int            `json:"sframe_version"`
		Status        string         `json:"status"`
		Reason        string         `json:"reason"`
		Instructions  int            `json:"instructions"`
		Verdicts      map[string]int `json:"verdicts"`
	} `json:"cells"`
}

// sfconform builds the command line into a temporary directory and
// returns its path. The kit drives the binary, as an unwinder author
// would, and links nothing of the project.
func sfconform(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sfconform")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-o", bin, "github.com/sfconform/sfconform/cmd/sfconform")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sfconform: %v\n%s", err, out)
	}
	return bin
}

// consumerArg is the --consumer value running the Python file script.
func consumerArg(t *testing.T, python, script string) string {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(abs, ",'") {
		t.Fatalf("%s: an exec: consumer's command cannot hold a comma or, here, a quote; move the checkout", abs)
	}
	return "exec:" + python + " '" + abs + "'"
}

// seed is SFCONFORM_SEED when set, so a failure replays; otherwise the
// clock. It is logged either way.
func seed(t *testing.T) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano()) & (1<<62 - 1)
	if v := os.Getenv("SFCONFORM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("SFCONFORM_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("seed %d (replay with SFCONFORM_SEED=%d)", s, s)
	return s
}

// run runs sfconform run with args and the JSON summary, and returns the
// summary and the exit status.
func run(t *testing.T, bin string, args ...string) (summary, int) {
	t.Helper()
	args = append([]string{"run", "--json", "-q", "--out", t.TempDir(), "--no-minimize"}, args...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("sfconform %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	var s summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("sfconform %s: exit %d, no JSON summary (%v)\nstderr:\n%s", strings.Join(args, " "), code, err, stderr.String())
	}
	if code != 0 {
		t.Logf("sfconform %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return s, code
}

// The Python unwinder, written from the protocol document, unwinds every
// instruction right on every target and SFrame version it claims.
func TestPythonUnwinderConforms(t *testing.T) {
	python := testenv.LookPath(t, "python3", testenv.HostPackages)
	bin := sfconform(t)
	s, code := run(t, bin, "--seed", strconv.FormatUint(seed(t), 10), "--programs", strconv.Itoa(programsPerCell),
		"--targets", "x86-64,aarch64,aarch64_be,s390x", "--producer", "builtin-v2,builtin-v3",
		"--consumer", consumerArg(t, python, unwinder))
	want := map[string]bool{}
	for _, tg := range []string{"x86-64", "aarch64", "aarch64_be", "s390x"} {
		for _, v := range []string{"2", "3"} {
			want[tg+" v"+v] = true
		}
	}
	total := 0
	for _, c := range s.Cells {
		key := c.Target + " v" + strconv.Itoa(c.SFrameVersion)
		delete(want, key)
		total += c.Instructions
		if c.Status != "clean" || c.Instructions == 0 || c.Verdicts["OK"] != c.Instructions {
			t.Errorf("%s (%s): %s %s, %d instructions, verdicts %v", key, c.Producer, c.Status, c.Reason, c.Instructions, c.Verdicts)
		}
	}
	for key := range want {
		t.Errorf("no cell for %s: the unwinder must read every target and both versions", key)
	}
	if code != 0 && !t.Failed() {
		t.Errorf("exit %d with every cell clean", code)
	}
	t.Logf("%d cells, %d instructions judged", len(s.Cells), total)
}

// A copy of the unwinder with one sign flipped (the CFA is taken below its
// base register instead of above) fails the same run, WRONG or ERROR
// (s390x: the caller's SP falls below the SP): the conformance test can
// fail.
func TestBrokenUnwinderFails(t *testing.T) {
	python := testenv.LookPath(t, "python3", testenv.HostPackages)
	src, err := os.ReadFile(unwinder)
	if err != nil {
		t.Fatal(err)
	}
	const good, bad = "cfa = (base + cfa_off) & MASK64", "cfa = (base - cfa_off) & MASK64"
	if bytes.Count(src, []byte(good)) != 1 {
		t.Fatalf("%s no longer holds %q once: update the mutation", unwinder, good)
	}
	broken := filepath.Join(t.TempDir(), "broken_unwinder.py")
	if err := os.WriteFile(broken, bytes.Replace(src, []byte(good), []byte(bad), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := sfconform(t)
	s, code := run(t, bin, "--seed", "1", "--programs", "1", "--paths", "1", "--targets", "x86-64,s390x",
		"--producer", "builtin-v2", "--consumer", consumerArg(t, python, broken))
	if code != 1 {
		t.Errorf("exit %d, want 1 (failures)", code)
	}
	for _, c := range s.Cells {
		if c.Status != "failed" || c.Verdicts["WRONG"]+c.Verdicts["ERROR"] == 0 {
			t.Errorf("%s v%d: %s, verdicts %v: the broken unwinder passed", c.Target, c.SFrameVersion, c.Status, c.Verdicts)
		}
	}
	if len(s.Cells) != 2 {
		t.Errorf("%d cells, want 2", len(s.Cells))
	}
}

// A section the unwinder cannot use is refused with the byte offset of
// what is wrong, and the session goes on: the answers a protocol session
// gets, line by line.
func TestPythonUnwinderRefusesBadSections(t *testing.T) {
	python := testenv.LookPath(t, "python3", testenv.HostPackages)
	// A 28-byte x86-64 v2 header with no FDEs, then variations of it.
	hdr := "e2de" + "02" + "05" + "03" + "00" + "f8" + "00" + strings.Repeat("00", 20)
	session := strings.Join([]string{
		"hello sfconform-unwind 1",
		"supports x86-64 1",
		"supports s390x 3",
		"load x86-64 1000 e2de02",                    // cut short
		"load x86-64 1000 dee2" + hdr[4:],            // big-endian magic on a little-endian target
		"load x86-64 1000 e2de07" + hdr[6:],          // version 7
		"load aarch64 1000 " + hdr,                   // ABI 3 on aarch64
		"load x86-64 1000 " + hdr + "0000" + "ff",    // not padding after the section
		"load x86-64 1000 " + hdr + "00000000",       // zero padding
		"load x86-64 1000 " + hdr + "00000000" + hdr, // two sections, the second 8-byte aligned
		"unwind 1", "step 12 pc=1000 7=2000 6=0 stack=2000:", // no FDE covers the PC
		"quit",
	}, "\n") + "\n"
	cmd := exec.Command(python, unwinder)
	cmd.Stdin = strings.NewReader(session)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{
		"hello sfconform-unwind 1 ",
		"no ",
		"yes",
		"refused header at byte offset 0 runs past the end",
		"refused byte offset 0: magic in the other byte order",
		"refused byte offset 2: SFrame version 7",
		"refused byte offset 4: ABI 3 is not aarch64's",
		"refused byte offset 30: ff after the section ending at 28 is neither zero padding",
		"ok",
		"ok",
		"result 12 1 noinfo no FDE covers pc 0x1000",
		"frame pc=1000 sp=2000 fp=0 cfa=0 partial",
	}
	if len(got) != len(want) {
		t.Fatalf("%d answer lines, want %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
}

// Protocol version 2: the unwinder answers with the version offered (at
// most 2), takes a process image's modules, and finds no FDE for a PC
// that no module holds, nor in a module whose section lacks it.
func TestPythonUnwinderModules(t *testing.T) {
	python := testenv.LookPath(t, "python3", testenv.HostPackages)
	hdr := "e2de" + "02" + "05" + "03" + "00" + "f8" + "00" + strings.Repeat("00", 20)
	session := strings.Join([]string{
		"hello sfconform-unwind 2",
		"modules x86-64 2",
		"module exe 1000 2000 2000 " + hdr,
		"module lib1.so 5000 6000 6000 " + hdr,
		"unwind 2",
		"step 1 pc=5004 7=8000 6=0 stack=8000:", // in lib1.so, which has no FDE
		"step 2 pc=3000 7=8000 6=0 stack=8000:", // in no module
		"modules x86-64 1",
		"module exe 1000 2000 2000 e2de02", // cut short
		"quit",
	}, "\n") + "\n"
	cmd := exec.Command(python, unwinder)
	cmd.Stdin = strings.NewReader(session)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{
		"hello sfconform-unwind 2 ",
		"ok",
		"result 1 1 noinfo no FDE covers pc 0x5004",
		"frame pc=5004 sp=8000 fp=0 cfa=0 partial",
		"result 2 1 noinfo no FDE covers pc 0x3000",
		"frame pc=3000 sp=8000 fp=0 cfa=0 partial",
		"refused module exe: header at byte offset 0 runs past the end",
	}
	if len(got) != len(want) {
		t.Fatalf("%d answer lines, want %d:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d: %q, want it to start %q", i, got[i], want[i])
		}
	}
}
