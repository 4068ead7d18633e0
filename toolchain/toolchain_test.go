package toolchain

import (
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// fakeCache builds a cache directory holding the given toolchain.conf
// files (keyed by directory name) with executable files at every tool path,
// and points CacheDir at it.
func fakeCache(t *testing.T, confs map[string]string) string {
	t.Helper()
	root := t.TempDir()
	t.Setenv(CacheEnv, root)
	for dir, text := range confs {
		d := filepath.Join(root, "toolchains", dir)
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "toolchain.conf"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, triple := range []string{"x86_64-linux-gnu", "aarch64-linux-gnu", "s390x-linux-gnu"} {
			for _, tool := range []string{"as", "ld", "objdump", "readelf"} {
				p := filepath.Join(d, "bin", triple+"-"+tool)
				if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return root
}

func TestCacheDirFollowsEnvironment(t *testing.T) {
	t.Setenv(CacheEnv, "")
	if got := CacheDir(); got != DefaultCacheDir {
		t.Errorf("CacheDir() with %s empty = %q, want %q", CacheEnv, got, DefaultCacheDir)
	}
	t.Setenv(CacheEnv, "/tmp/elsewhere")
	if got := CacheDir(); got != "/tmp/elsewhere" {
		t.Errorf("CacheDir() = %q, want /tmp/elsewhere", got)
	}
}

func TestLoadListsEveryTargetInVersionOrder(t *testing.T) {
	fakeCache(t, map[string]string{
		"binutils-2.40": "name=gas-2.40\nversion=2.40\nsuite=bookworm\npackage=2.40-2\n" +
			"triples=x86_64-linux-gnu aarch64-linux-gnu s390x-linux-gnu\n",
		"binutils-2.9": "# an old one, sorted first although \"2.9\" > \"2.40\" as text\n" +
			"name=gas-2.9\nversion=2.9\nsuite=ancient\ntriples=aarch64-linux-gnu\n",
	})
	all, err := load()
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		name string
		tg   target.Target
	}
	var got []key
	for _, tc := range all {
		got = append(got, key{tc.Name, tc.Target})
	}
	want := []key{
		{"gas-2.9", target.AArch64}, {"gas-2.9", target.AArch64BE},
		{"gas-2.40", target.X86_64}, {"gas-2.40", target.AArch64},
		{"gas-2.40", target.AArch64BE}, {"gas-2.40", target.S390X},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("load() = %v, want %v", got, want)
	}
	for _, tc := range all {
		wantTriple := map[target.Target]string{
			target.X86_64: "x86_64-linux-gnu", target.AArch64: "aarch64-linux-gnu",
			target.AArch64BE: "aarch64-linux-gnu", target.S390X: "s390x-linux-gnu",
		}[tc.Target]
		if tc.Triple != wantTriple {
			t.Errorf("%s %s: triple %q, want %q", tc.Name, tc.Target.Name(), tc.Triple, wantTriple)
		}
		if !strings.HasSuffix(tc.AS, "/bin/"+wantTriple+"-as") || !strings.HasSuffix(tc.LD, "/bin/"+wantTriple+"-ld") ||
			!strings.HasSuffix(tc.Objdump, "/bin/"+wantTriple+"-objdump") || !strings.HasSuffix(tc.Readelf, "/bin/"+wantTriple+"-readelf") {
			t.Errorf("%s %s: tool paths %q %q %q %q", tc.Name, tc.Target.Name(), tc.AS, tc.LD, tc.Objdump, tc.Readelf)
		}
		wantEB := tc.Target == target.AArch64BE
		if slices.Contains(tc.ASFlags, "-EB") != wantEB || slices.Contains(tc.LDFlags, "-EB") != wantEB {
			t.Errorf("%s %s: ASFlags %q LDFlags %q, want -EB in both only for aarch64_be", tc.Name, tc.Target.Name(), tc.ASFlags, tc.LDFlags)
		}
	}
	if all[2].Suite != "bookworm" || all[2].Version != "2.40" || all[2].Package != "2.40-2" {
		t.Errorf("gas-2.40 fields: suite %q version %q package %q", all[2].Suite, all[2].Version, all[2].Package)
	}
}

func TestLoadNamesMissingTool(t *testing.T) {
	root := fakeCache(t, map[string]string{
		"binutils-2.44": "name=gas-2.44\nversion=2.44\nsuite=trixie\ntriples=x86_64-linux-gnu s390x-linux-gnu\n",
	})
	gone := filepath.Join(root, "toolchains", "binutils-2.44", "bin", "s390x-linux-gnu-ld")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	all, err := load()
	if err == nil || !strings.Contains(err.Error(), gone) || !errors.Is(err, ErrNotProvisioned) {
		t.Fatalf("load() error = %v, want one naming %s and wrapping ErrNotProvisioned", err, gone)
	}
	if len(all) != 1 || all[0].Target != target.X86_64 {
		t.Errorf("load() kept %d toolchains, want only the complete x86-64 one", len(all))
	}
}

func TestReadConfErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct{ text, want string }{
		{"name=gas-2.44\nversion=2.44\nsuite=trixie\nthis line is wrong\ntriples=x\n", ":4: want key=value"},
		{"name=gas-2.44\nsuite=trixie\ntriples=x86_64-linux-gnu\n", "no version= line"},
		{"name=gas-2.44\nversion=2.44\nsuite=trixie\n", "no triples= line"},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "toolchain.conf")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readConf(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: readConf error = %v, want one naming %s and %q", i, err, p, c.want)
		}
	}
}

func TestNothingProvisioned(t *testing.T) {
	root := t.TempDir()
	t.Setenv(CacheEnv, root)
	all, err := All()
	if len(all) != 0 || !errors.Is(err, ErrNotProvisioned) {
		t.Fatalf("All() on an empty cache = %d toolchains, %v; want none and ErrNotProvisioned", len(all), err)
	}
	if !strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("All() error %q should name %s and say to run make setup", err, root)
	}
	_, err = Find("gas-2.44", target.S390X)
	if !errors.Is(err, ErrNotProvisioned) || !strings.Contains(err.Error(), "gas-2.44 for s390x") ||
		!strings.Contains(err.Error(), "make setup") {
		t.Errorf("Find error %q should name gas-2.44 for s390x and say to run make setup", err)
	}
}

func TestFindMatchesNameVersionAndSuite(t *testing.T) {
	fakeCache(t, map[string]string{
		"binutils-2.47.50.20261021": "name=gas-2.47.50\nversion=2.47.50.20261021\nsuite=sid\ntriples=x86_64-linux-gnu\n",
	})
	all, err := load()
	if err != nil || len(all) != 1 {
		t.Fatalf("load() = %v, %v", all, err)
	}
	tc := all[0]
	if tc.Name != "gas-2.47" {
		t.Errorf("Name %q, want the series gas-2.47 (toolchain.conf says gas-2.47.50)", tc.Name)
	}
	for _, name := range []string{"gas-2.47", "gas-2.47.50", "gas-2.47.50.20261021", "gas-sid"} {
		if !tc.matches(name) {
			t.Errorf("%s does not match %q", tc.Name, name)
		}
	}
	for _, name := range []string{"gas-2.4", "sid", "gas-2.47.5", "2.47.50", "gas-"} {
		if tc.matches(name) {
			t.Errorf("%s matches %q", tc.Name, name)
		}
	}
	_, err = Find("gas-2.44", target.X86_64)
	if !errors.Is(err, ErrNotProvisioned) || !strings.Contains(err.Error(), "provisioned: gas-2.47)") {
		t.Errorf("Find(gas-2.44) error %q should list the provisioned gas-2.47", err)
	}
}

func TestSeries(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2.40": "2.40", "2.44": "2.44", "2.47.50.20261021": "2.47", "2.47.50.20261107": "2.47", "2.9.1": "2.9", "3": "3",
	} {
		if got := Series(in); got != want {
			t.Errorf("Series(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	t.Parallel()
	ordered := []string{"2.9", "2.40", "2.44", "2.45.50.20251115", "2.47.50.20261021", "10.1"}
	for i := range ordered {
		for j := range ordered {
			got := CompareVersions(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// writeScript makes an executable shell script standing in for an assembler.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeTellsRefusalFromBreakage writes programs and runs them, so it
// does not run in parallel: a fork in another test could inherit the
// still-open file and the exec fail with ETXTBSY (golang.org/issue/22315).
func TestProbeTellsRefusalFromBreakage(t *testing.T) {
	dir := t.TempDir()
	// Like gas 2.44 for s390x: fine without --gsframe, refuses with it.
	refuses := writeScript(t, dir, "refuses-as", `for a; do
	if [ "$a" = --gsframe ]; then
		echo "$0: Assembler messages:" >&2
		echo "probe.s: Error: .sframe not supported for target" >&2
		exit 1
	fi
done
exit 0
`)
	r, err := measureSFrameVersion(refuses, nil, target.S390X)
	if err != nil {
		t.Fatalf("an assembler refusing --gsframe is not broken: %v", err)
	}
	if r.version != 0 || r.reason != "Error: .sframe not supported for target" {
		t.Errorf("probe = version %d, reason %q; want 0 and the assembler's message", r.version, r.reason)
	}
	broken := writeScript(t, dir, "broken-as", "echo 'cannot load libfoo.so' >&2; exit 127\n")
	if _, err := measureSFrameVersion(broken, nil, target.X86_64); err == nil ||
		!strings.Contains(err.Error(), "libfoo.so") || !strings.Contains(err.Error(), broken) {
		t.Errorf("probe of a broken assembler: error %v, want one naming it and its message", err)
	}
}

func TestProbeCacheNeedsMatchingStamp(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "sframe-probe.s390x")
	if err := writeProbeCache(p, "/x/as 10 123", probeResult{version: 0, reason: "not\nsupported"}); err != nil {
		t.Fatal(err)
	}
	r, ok := readProbeCache(p, "/x/as 10 123")
	if !ok || r.version != 0 || r.reason != "not supported" {
		t.Errorf("readProbeCache = %+v, %v; want version 0, reason %q", r, ok, "not supported")
	}
	if _, ok := readProbeCache(p, "/x/as 10 124"); ok {
		t.Error("readProbeCache accepted a result for another version of the assembler")
	}
	if err := os.WriteFile(p, []byte("stamp=s\nversion=two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := readProbeCache(p, "s"); ok {
		t.Error("readProbeCache accepted a non-numeric version")
	}
}

func TestFromDirSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := FromDir(dir); err == nil || !strings.Contains(err.Error(), "as-new") || !errors.Is(err, ErrNotProvisioned) {
		t.Errorf("FromDir(empty) error %v, want one naming as-new and wrapping ErrNotProvisioned", err)
	}
	writeScript(t, dir, "as-new", "echo \"GNU assembler (GNU Binutils) 2.46.50.20260101\"; echo \"This assembler was configured for a target of \\`mips64-linux-gnu'.\"\n")
	if _, err := FromDir(dir); err == nil || !strings.Contains(err.Error(), "no linker") {
		t.Errorf("FromDir(as-new only) error %v, want 'no linker'", err)
	}
	writeScript(t, dir, "ld-new", "exit 0\n")
	if _, err := FromDir(dir); err == nil || !strings.Contains(err.Error(), "mips64-linux-gnu") || !strings.Contains(err.Error(), "none of sfconform's targets") {
		t.Errorf("FromDir(mips build) error %v, want one naming mips64-linux-gnu", err)
	}
	if _, err := FromDir(filepath.Join(dir, "nonexistent")); err == nil || !strings.Contains(err.Error(), "nonexistent") {
		t.Errorf("FromDir(missing directory) error %v", err)
	}
}

func TestTripleOfConfiguredTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"x86_64-pc-linux-gnu": "x86_64-linux-gnu", "aarch64_be-unknown-linux-gnu": "aarch64-linux-gnu",
		"aarch64-linux-gnu": "aarch64-linux-gnu", "s390x-ibm-linux-gnu": "s390x-linux-gnu", "riscv64-linux-gnu": "",
	} {
		if got := tripleOf(in); got != want {
			t.Errorf("tripleOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunQuotesForTheShell(t *testing.T) {
	t.Parallel()
	r := Run{Args: []string{"/bin/as", "-o", "a b.o", "--defsym=x=1", "it's", ""}}
	if got, want := r.String(), `/bin/as -o 'a b.o' --defsym=x=1 'it'\''s' ''`; got != want {
		t.Errorf("Run.String() = %s, want %s", got, want)
	}
}

func TestChangelogVersion(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "changelog.Debian.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	z.Write([]byte("llvm-toolchain-23 (1:23.1.4-2) unstable; urgency=medium\n\n  * New upstream release.\n"))
	z.Close()
	f.Close()
	if got := changelogVersion(p); got != "1:23.1.4-2" {
		t.Errorf("changelogVersion = %q, want 1:23.1.4-2", got)
	}
	if got := changelogVersion(p + ".missing"); got != "" {
		t.Errorf("changelogVersion(missing) = %q", got)
	}
}
