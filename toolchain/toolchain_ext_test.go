package toolchain

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
)

// These tests run the toolchains that ci/setup.sh provisioned. Without
// any, they skip (testenv.Missing), or fail once setup has run.

// knownSFrameVersion is what Debian's binutils of each suite emit, from
// their release notes and the SFrame spec's version history: bookworm 2.40
// writes v1, trixie 2.44 writes v2, sid (2.46 and later) writes v3. Before
// v3 gas refuses --gsframe for s390x.
func knownSFrameVersion(suite string, tg target.Target) (int, bool) {
	v, ok := map[string]int{"bookworm": 1, "trixie": 2, "sid": 3}[suite]
	if ok && tg == target.S390X && v < 3 {
		return 0, true
	}
	return v, ok
}

var elfMachine = map[target.Target]elf.Machine{
	target.X86_64:    elf.EM_X86_64,
	target.AArch64:   elf.EM_AARCH64,
	target.AArch64BE: elf.EM_AARCH64,
	target.S390X:     elf.EM_S390,
}

func provisioned(t *testing.T) []Toolchain {
	t.Helper()
	all, err := All()
	if len(all) == 0 && errors.Is(err, ErrNotProvisioned) {
		testenv.Missing(t, testenv.Binutils, "no toolchains provisioned under %s: %v", CacheDir(), err)
	}
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	return all
}

// TestEverySuiteIsProvisioned: setup provisions the binutils of three
// Debian suites, each for every target. A suite that is there but lacks a
// target is an error; a suite that is not there at all is missing from
// setup (testenv.Missing: a skip, or a failure once setup has run), after
// the suites that are there have been checked.
func TestEverySuiteIsProvisioned(t *testing.T) {
	t.Parallel()
	all := provisioned(t)
	var missing []string
	for _, suite := range []string{"bookworm", "trixie", "sid"} {
		n := 0
		for _, tc := range all {
			if tc.Suite == suite {
				n++
			}
		}
		if n == 0 {
			missing = append(missing, suite)
			continue
		}
		if n != len(target.All) {
			t.Errorf("Debian %s: %d toolchains, want one per target (%d)", suite, n, len(target.All))
		}
	}
	if len(missing) > 0 {
		testenv.Missing(t, testenv.Binutils, "the binutils of Debian %s are not provisioned under %s", strings.Join(missing, " and "), CacheDir())
	}
}

func TestToolsRunAndReportTheirVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range provisioned(t) {
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			// The Debian package version comes from the archive's
			// metadata, the tool's version from the binary itself.
			if tc.Package != "" && !strings.HasPrefix(tc.Package, tc.Version+"-") {
				t.Errorf("Debian package %s does not carry version %s", tc.Package, tc.Version)
			}
			for _, tool := range []string{tc.AS, tc.LD, tc.Objdump, tc.Readelf} {
				out, err := runTool(tool, "--version")
				if err != nil {
					t.Errorf("%s --version: %v: %s", tool, err, out)
					continue
				}
				first, _, _ := strings.Cut(out, "\n")
				if !strings.HasPrefix(first, "GNU ") || !strings.HasSuffix(first, " "+tc.Version) {
					t.Errorf("%s --version says %q, want GNU ... %s", tool, first, tc.Version)
				}
			}
		})
	}
}

func TestSFrameVersionIsTheSuitesOwn(t *testing.T) {
	t.Parallel()
	for _, tc := range provisioned(t) {
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			want, ok := knownSFrameVersion(tc.Suite, tc.Target)
			if !ok {
				t.Skipf("no known SFrame version for Debian suite %q", tc.Suite)
			}
			if tc.SFrameVersion != want {
				t.Errorf("gas %s (Debian %s) for %s emits SFrame v%d, want v%d (reason: %q)",
					tc.Version, tc.Suite, tc.Target.Name(), tc.SFrameVersion, want, tc.SFrameUnsupportedReason())
			}
			if want == 0 && !strings.Contains(tc.SFrameUnsupportedReason(), "not supported") {
				t.Errorf("reason for no SFrame is %q, want the assembler's 'not supported'", tc.SFrameUnsupportedReason())
			}
			cache := filepath.Join(tc.dir, "sframe-probe."+tc.Target.Name())
			if data, err := os.ReadFile(cache); err == nil && !strings.Contains(string(data), fmt.Sprintf("version=%d\n", want)) {
				t.Errorf("probe cache %s holds %q, want version=%d", cache, data, want)
			}
		})
	}
}

// TestAssembleAndLink builds an executable with each toolchain's flags and
// checks its ELF machine and byte order, and that GNU objdump reads the
// same SFrame version the probe measured.
func TestAssembleAndLink(t *testing.T) {
	t.Parallel()
	versionLine := regexp.MustCompile(`Version: SFRAME_VERSION_(\d+)`)
	for _, tc := range provisioned(t) {
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := filepath.Join(dir, "f.s")
			if err := os.WriteFile(src, []byte(probeSource), 0o644); err != nil {
				t.Fatal(err)
			}
			obj, exe := filepath.Join(dir, "f.o"), filepath.Join(dir, "f")
			asArgs := append(append([]string{}, tc.ASFlags...), "-o", obj, src)
			if tc.SFrameVersion > 0 {
				asArgs = append(asArgs, "--gsframe")
			}
			if out, err := runTool(tc.AS, asArgs...); err != nil {
				t.Fatalf("%s %q: %v: %s", tc.AS, asArgs, err, out)
			}
			ldArgs := append(append([]string{}, tc.LDFlags...), "-e", "sfconform_probe", "-o", exe, obj)
			if out, err := runTool(tc.LD, ldArgs...); err != nil {
				t.Fatalf("%s %q: %v: %s", tc.LD, ldArgs, err, out)
			}
			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Machine != elfMachine[tc.Target] || f.ByteOrder != tc.Target.ByteOrder() {
				t.Errorf("linked %s is %v %v, want %v %v", exe, f.Machine, f.ByteOrder, elfMachine[tc.Target], tc.Target.ByteOrder())
			}
			if tc.SFrameVersion == 0 {
				return
			}
			out, err := runTool(tc.Objdump, "--sframe", exe)
			if err != nil {
				t.Fatalf("%s --sframe: %v: %s", tc.Objdump, err, out)
			}
			m := versionLine.FindStringSubmatch(out)
			if m == nil || m[1] != fmt.Sprint(tc.SFrameVersion) {
				t.Errorf("objdump --sframe of the linked file shows %q, probe measured v%d", m, tc.SFrameVersion)
			}
		})
	}
}

func TestFindProvisioned(t *testing.T) {
	t.Parallel()
	all := provisioned(t)
	want := all[len(all)-1]
	for _, name := range []string{want.Name, "gas-" + want.Version, "gas-" + want.Suite} {
		got, err := Find(name, want.Target)
		if err != nil {
			t.Fatalf("Find(%q, %s): %v", name, want.Target.Name(), err)
		}
		if got.AS != want.AS || got.Target != want.Target || got.SFrameVersion != want.SFrameVersion {
			t.Errorf("Find(%q, %s) = %s %s v%d, want %s %s v%d", name, want.Target.Name(),
				got.AS, got.Target.Name(), got.SFrameVersion, want.AS, want.Target.Name(), want.SFrameVersion)
		}
	}
	_, err := Find("gas-0.1", target.X86_64)
	if !errors.Is(err, ErrNotProvisioned) || !strings.Contains(err.Error(), want.Name) {
		t.Errorf("Find(gas-0.1) error %q should wrap ErrNotProvisioned and list %s", err, want.Name)
	}
}

// TestFromDirBuildTree lays out a binutils build tree (gas/as-new,
// ld/ld-new) over the newest provisioned AArch64 tools and requires
// FromDir to find them, read the configured target, serve AArch64 both
// ways round, measure the same SFrame version, and link what it assembles.
func TestFromDirBuildTree(t *testing.T) {
	t.Parallel()
	var src Toolchain
	for _, tc := range provisioned(t) {
		if tc.Target == target.AArch64 {
			src = tc
		}
	}
	tree := t.TempDir()
	for link, to := range map[string]string{"gas/as-new": src.AS, "ld/ld-new": src.LD} {
		if err := os.MkdirAll(filepath.Join(tree, filepath.Dir(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, filepath.Join(tree, link)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FromDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Target != target.AArch64 || got[1].Target != target.AArch64BE {
		t.Fatalf("FromDir found %d toolchains %v, want aarch64 and aarch64_be", len(got), got)
	}
	for _, tc := range got {
		if tc.Name != "gas:"+tree || tc.Version != src.Version || tc.SFrameVersion != src.SFrameVersion || tc.Package != "" {
			t.Errorf("%s: name %q version %q SFrame v%d package %q; want gas:%s, %s, v%d, none",
				tc.Target.Name(), tc.Name, tc.Version, tc.SFrameVersion, tc.Package, tree, src.Version, src.SFrameVersion)
		}
		if _, err := os.Stat(filepath.Join(tree, "gas", "sframe-probe."+tc.Target.Name())); err == nil {
			t.Errorf("the probe wrote its cache into the build tree")
		}
		dir := t.TempDir()
		s := filepath.Join(dir, "f.s")
		if err := os.WriteFile(s, []byte(probeSource), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.Assemble(s, filepath.Join(dir, "f.o"), "--gsframe"); err != nil {
			t.Fatal(err)
		}
		r, err := tc.Link(Link{Output: filepath.Join(dir, "f"), Objects: []string{filepath.Join(dir, "f.o")}, Text: 0x10000000, Entry: 0x10000000})
		if err != nil {
			t.Fatal(err)
		}
		if r.Output != "" {
			t.Errorf("%s: ld said %q", r, r.Output)
		}
		f, err := elf.Open(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		if f.ByteOrder != tc.Target.ByteOrder() || f.Entry != 0x10000000 {
			t.Errorf("%s: linked file is %v with entry %#x", tc.Target.Name(), f.ByteOrder, f.Entry)
		}
		f.Close()
	}
}

// TestLLVM: the provisioned llvm-mc is listed per target with its Debian
// package version; it emits SFrame v2 for x86-64, and a target it cannot
// describe a plain function for says why.
func TestLLVM(t *testing.T) {
	t.Parallel()
	all, err := LLVM()
	if len(all) == 0 {
		testenv.Missing(t, testenv.LLVM, "no llvm-mc under %s: %v", CacheDir(), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Measured afresh, past the cache, for every target: a version is
	// claimed exactly when the probe's object has an FDE (LLVM 23 takes
	// --gsframe for AArch64 but omits the plainest function's FDE).
	for _, tg := range target.All {
		flags := []string{"-triple=" + tg.Triple(), "-filetype=obj"}
		r, err := measureSFrameVersion(all[0].AS, flags, tg)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		src, obj := filepath.Join(dir, "p.s"), filepath.Join(dir, "p.o")
		os.WriteFile(src, []byte(probeSource), 0o644)
		if _, err := runTool(all[0].AS, append(flags, "--gsframe", "-o", obj, src)...); err != nil {
			t.Fatal(err)
		}
		_, fdes, err := readSFrameVersion(obj, tg)
		if err != nil {
			t.Fatal(err)
		}
		if (r.version > 0) != (fdes > 0) || (r.version == 0) == (r.reason == "") {
			t.Errorf("llvm-mc for %s: probe says version %d (%q), the object has %d FDEs", tg.Name(), r.version, r.reason, fdes)
		}
	}
	for _, tc := range all {
		if !strings.HasPrefix(tc.Name, "llvm-mc-") || tc.Package == "" || !strings.Contains(tc.Package, tc.Version) {
			t.Errorf("%s %s: version %q package %q", tc.Name, tc.Target.Name(), tc.Version, tc.Package)
		}
		switch {
		case tc.Target == target.X86_64 && tc.SFrameVersion != 2:
			t.Errorf("%s emits SFrame v%d for x86-64 (%s), want v2", tc.Name, tc.SFrameVersion, tc.SFrameUnsupportedReason())
		case tc.SFrameVersion == 0 && tc.SFrameUnsupportedReason() == "":
			t.Errorf("%s for %s: no SFrame and no reason", tc.Name, tc.Target.Name())
		}
	}
}

// testenv numbers the steps tests name without importing this package
// (whose tests use testenv): its numbers are this package's.
func TestSetupStepsAreTestenvs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ours   int
		theirs testenv.Step
	}{{SetupHost, testenv.HostPackages}, {SetupBinutils, testenv.Binutils}, {SetupLLVM, testenv.LLVM}, {SetupRealCode, testenv.RealCode}, {SetupBinutilsSrc, testenv.BinutilsSrc}} {
		if c.ours != int(c.theirs) {
			t.Errorf("toolchain's step %d is testenv's %d (%s)", c.ours, int(c.theirs), c.theirs)
		}
	}
}

// The one not-provisioned error: it wraps ErrNotProvisioned, carries its
// step through any wrapping, and says what to run.
func TestNotProvisionedError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("producer x: %w", NotProvisioned(SetupLLVM, "no llvm-mc under %s", "/nowhere"))
	if !errors.Is(err, ErrNotProvisioned) || SetupStep(err) != SetupLLVM {
		t.Fatalf("%v: Is %v, step %d", err, errors.Is(err, ErrNotProvisioned), SetupStep(err))
	}
	if msg := err.Error(); !strings.Contains(msg, "/nowhere") || !strings.Contains(msg, "make setup") || !strings.Contains(msg, "step 5") {
		t.Errorf("message %q does not say what is missing and which step provides it", msg)
	}
	if SetupStep(errors.New("other")) != 0 || SetupStep(nil) != 0 {
		t.Error("SetupStep of an unrelated error is not 0")
	}
}
