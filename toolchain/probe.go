package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/target"
)

// probeSource is the smallest input that makes gas --gsframe write an FDE:
// one function with CFI. Every target's assembler accepts "nop".
const probeSource = `	.text
	.globl sfconform_probe
	.type sfconform_probe, @function
sfconform_probe:
	.cfi_startproc
	nop
	.cfi_endproc
	.size sfconform_probe, .-sfconform_probe
`

// sframeMagic is the preamble's magic number, in the section's byte order.
const sframeMagic = 0xdee2

// probeTimeout bounds one assembler run; a healthy one takes milliseconds.
const probeTimeout = 30 * time.Second

type probeResult struct {
	version int
	reason  string
}

var (
	probeMu   sync.Mutex
	probeMemo = map[string]probeResult{}
)

// probe fills in SFrameVersion, from the in-process memo, the cache file
// next to the toolchain, or by running the assembler.
func (t *Toolchain) probe() error {
	key := t.AS + "\x00" + strings.Join(t.ASFlags, " ")
	probeMu.Lock()
	defer probeMu.Unlock()
	if r, ok := probeMemo[key]; ok {
		t.SFrameVersion, t.noSFWhy = r.version, r.reason
		return nil
	}
	stamp, err := fileStamp(t.AS)
	if err != nil {
		return fmt.Errorf("%s for %s: %w", t.Name, t.Target.Name(), err)
	}
	paths := t.probeCachePaths()
	for _, p := range paths {
		if r, ok := readProbeCache(p, stamp); ok {
			probeMemo[key] = r
			t.SFrameVersion, t.noSFWhy = r.version, r.reason
			return nil
		}
	}
	r, err := measureSFrameVersion(t.AS, t.ASFlags, t.Target)
	if err != nil {
		return fmt.Errorf("%s for %s: %w", t.Name, t.Target.Name(), err)
	}
	for _, p := range paths {
		if writeProbeCache(p, stamp, r) == nil {
			break
		}
	}
	probeMemo[key] = r
	t.SFrameVersion, t.noSFWhy = r.version, r.reason
	return nil
}

// probeCachePaths are where a probe result may be kept: next to the
// toolchain, else (a cache directory written by root, read by a user) in
// the user's cache directory.
func (t *Toolchain) probeCachePaths() []string {
	return probeCachePaths(t.dir, t.AS+"\x00"+strings.Join(t.ASFlags, " "), t.Target)
}

// probeCachePaths are where the probe of an assembler may be kept: in dir
// (a provisioned toolchain's own directory), else in the user's cache
// directory under a hash of dir or, with no dir (a build tree of one's
// own, which sfconform does not write into), of key.
func probeCachePaths(dir, key string, tg target.Target) []string {
	name := "sframe-probe." + tg.Name()
	var paths []string
	if dir != "" {
		paths = append(paths, filepath.Join(dir, name))
		key = dir
	}
	if d, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256([]byte(key))
		paths = append(paths, filepath.Join(d, "sfconform", hex.EncodeToString(sum[:8]), name))
	}
	return paths
}

// fileStamp identifies one installed version of a file: a rewritten wrapper
// invalidates the cached probe.
func fileStamp(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotProvisioned, err)
	}
	return fmt.Sprintf("%s %d %d", path, st.Size(), st.ModTime().UnixNano()), nil
}

func readProbeCache(path, stamp string) (probeResult, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return probeResult{}, false
	}
	var r probeResult
	var gotStamp string
	okVersion := false
	for _, line := range strings.Split(string(data), "\n") {
		key, value, _ := strings.Cut(line, "=")
		switch key {
		case "stamp":
			gotStamp = value
		case "version":
			v, err := strconv.Atoi(value)
			if err != nil || v < 0 || v > 255 {
				return probeResult{}, false
			}
			r.version, okVersion = v, true
		case "reason":
			r.reason = value
		}
	}
	return r, okVersion && gotStamp == stamp
}

func writeProbeCache(path, stamp string, r probeResult) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	content := fmt.Sprintf("stamp=%s\nversion=%d\nreason=%s\n", stamp, r.version,
		strings.ReplaceAll(r.reason, "\n", " "))
	return outfile.Write(path, []byte(content))
}

// measureSFrameVersion assembles probeSource with and without --gsframe.
// Failing without it means a broken toolchain (an error); failing only with
// it means the assembler cannot emit SFrame for this target (version 0).
func measureSFrameVersion(as string, flags []string, tg target.Target) (probeResult, error) {
	dir, err := os.MkdirTemp("", "sfconform-probe-")
	if err != nil {
		return probeResult{}, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.s")
	if err := os.WriteFile(src, []byte(probeSource), 0o644); err != nil {
		return probeResult{}, err
	}
	plain := filepath.Join(dir, "plain.o")
	if out, err := runTool(as, append(append([]string{}, flags...), "-o", plain, src)...); err != nil {
		return probeResult{}, fmt.Errorf("%s cannot assemble a one-function file: %v: %s", as, err, out)
	}
	withSFrame := filepath.Join(dir, "sframe.o")
	out, err := runTool(as, append(append([]string{}, flags...), "--gsframe", "-o", withSFrame, src)...)
	if err != nil {
		return probeResult{version: 0, reason: assemblerComplaint(out)}, nil
	}
	r, fdes, err := readSFrameVersion(withSFrame, tg)
	if err == nil && r.version == 0 {
		r.reason = toolName(as) + " --gsframe wrote no .sframe section"
	}
	if err == nil && r.version != 0 && fdes == 0 {
		// A section without the function's FDE: the assembler takes
		// --gsframe for the target but cannot describe the simplest
		// function (llvm-mc 23 for AArch64: "non-default RA register in
		// .cfi_return_column").
		why := toolName(as) + " --gsframe wrote no FDE for a one-function file"
		if out != "" {
			why += ": " + assemblerComplaint(out)
		}
		return probeResult{version: 0, reason: why}, nil
	}
	return r, err
}

func runTool(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// assemblerComplaint keeps the message of gas's output and drops its
// "Assembler messages:" banner and the file name prefix.
func assemblerComplaint(out string) string {
	var msgs []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasSuffix(line, "Assembler messages:") {
			continue
		}
		if i := strings.Index(line, ": "); i >= 0 && strings.HasSuffix(line[:i], ".s") {
			line = line[i+2:]
		}
		if !slices.Contains(msgs, line) {
			msgs = append(msgs, line)
		}
	}
	if len(msgs) == 0 {
		return "as --gsframe failed without a message"
	}
	return strings.Join(msgs, "; ")
}

// readSFrameVersion reads the version byte and the FDE count of the
// .sframe section of an object file, checking that the file and the
// section are in the target's byte order.
func readSFrameVersion(path string, tg target.Target) (probeResult, int, error) {
	f, err := elf.Open(path)
	if err != nil {
		return probeResult{}, 0, err
	}
	defer f.Close()
	if f.ByteOrder != tg.ByteOrder() {
		return probeResult{}, 0, fmt.Errorf("%s: object is %v, target %s is %v", path, f.ByteOrder, tg.Name(), tg.ByteOrder())
	}
	sec := f.Section(".sframe")
	if sec == nil {
		return probeResult{version: 0, reason: "as --gsframe wrote no .sframe section"}, 0, nil
	}
	data, err := sec.Data()
	if err != nil {
		return probeResult{}, 0, fmt.Errorf("%s: .sframe: %w", path, err)
	}
	if len(data) < 4 {
		return probeResult{}, 0, fmt.Errorf("%s: .sframe at file offset %#x is %d bytes, shorter than the 4-byte preamble", path, sec.Offset, len(data))
	}
	if m := tg.ByteOrder().Uint16(data); m != sframeMagic {
		return probeResult{}, 0, fmt.Errorf("%s: .sframe magic at file offset %#x is %#04x, want %#04x", path, sec.Offset, m, sframeMagic)
	}
	fdes := 0
	if len(data) >= 12 {
		fdes = int(tg.ByteOrder().Uint32(data[8:]))
	}
	return probeResult{version: int(data[2])}, fdes, nil
}

// toolName is how messages call a tool: "as" for GNU as, whatever its
// path (x86_64-linux-gnu-as, as-new), else the file name (llvm-mc).
func toolName(path string) string {
	base := filepath.Base(path)
	if base == "as" || base == "as-new" || strings.HasSuffix(base, "-as") {
		return "as"
	}
	return base
}
