package check_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// largeFuncs is the size of the large program: with the prologue below,
// gas 2.47 writes a 6 MB SFrame v3 section for it.
const largeFuncs = 110000

// writeLarge writes x86-64 assembly of n functions, each with the rows of
// a frame that saves three registers with pushes (nine SFrame rows, the
// CFA moving with every push and pop).
func writeLarge(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "\t.text\n\t.globl _start\n_start:\n\t.cfi_startproc\n\t.cfi_undefined %rip\n\tcall f0\n\thlt\n\t.cfi_endproc")
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `	.type f%[1]d, @function
f%[1]d:
	.cfi_startproc
	pushq %%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %%rbp, -16
	pushq %%rbx
	.cfi_def_cfa_offset 24
	.cfi_offset %%rbx, -24
	pushq %%r12
	.cfi_def_cfa_offset 32
	.cfi_offset %%r12, -32
	subq $%[2]d, %%rsp
	.cfi_def_cfa_offset %[3]d
	movl %%edi, %%eax
	addq $%[2]d, %%rsp
	.cfi_def_cfa_offset 32
	popq %%r12
	.cfi_def_cfa_offset 24
	popq %%rbx
	.cfi_def_cfa_offset 16
	popq %%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size f%[1]d, .-f%[1]d
`, i, 16+8*(i%8), 48+8*(i%8))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// buildLarge assembles and links the large program with the newest
// provisioned x86-64 gas; dir keeps it. SFCONFORM_LARGE_OUT names a file
// to copy the executable to (for measuring the command line on it).
func buildLarge(tb testing.TB, dir string) string {
	tb.Helper()
	all, err := toolchain.All()
	var tc toolchain.Toolchain
	for _, t := range all {
		if t.Target == target.X86_64 && t.SFrameVersion >= 3 {
			tc = t
		}
	}
	if tc.AS == "" {
		testenv.Missing(tb, testenv.Binutils, "no x86-64 gas writing SFrame v3: %v", err)
	}
	src, obj, exe := filepath.Join(dir, "large.s"), filepath.Join(dir, "large.o"), filepath.Join(dir, "large")
	if err := writeLarge(src, largeFuncs); err != nil {
		tb.Fatal(err)
	}
	if r, err := tc.Assemble(src, obj, "--gsframe"); err != nil {
		tb.Fatalf("%v\n%s", err, r)
	}
	if r, err := tc.Link(toolchain.Link{Output: exe, Objects: []string{obj}, Text: 0x401000, Entry: 0x401000}); err != nil {
		tb.Fatalf("%v\n%s", err, r)
	}
	if out := os.Getenv("SFCONFORM_LARGE_OUT"); out != "" {
		b, err := os.ReadFile(exe)
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return exe
}

// BenchmarkLargeStatic checks the large program statically (structure and
// the differential against .eh_frame): functions per second.
func BenchmarkLargeStatic(b *testing.B) {
	exe := buildLarge(b, b.TempDir())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := check.File(exe, check.Options{Static: true})
		if err != nil {
			b.Fatal(err)
		}
		if r.Summary.Functions != largeFuncs || r.Summary.Differ != 0 || r.Summary.Compared == 0 {
			b.Fatalf("functions %d, compared %d, differ %d", r.Summary.Functions, r.Summary.Compared, r.Summary.Differ)
		}
		b.ReportMetric(float64(r.Summary.Functions)*float64(i+1)/b.Elapsed().Seconds(), "funcs/s")
	}
}

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLargeStaticVsReadelf measures, side by side on the large
// program, the CPU time of check --static-only's work (check.File with
// Static) and of readelf --debug-dump=frames-interp of the same toolchain,
// and reports their ratio (the goal: within 3x).
func BenchmarkLargeStaticVsReadelf(b *testing.B) {
	dir := b.TempDir()
	exe := buildLarge(b, dir)
	var readelf string
	all, _ := toolchain.All()
	for _, t := range all {
		if t.Target == target.X86_64 && t.SFrameVersion >= 3 {
			readelf = t.Readelf
		}
	}
	var checkCPU, readelfCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := cpuTime(b)
		if _, err := check.File(exe, check.Options{Static: true}); err != nil {
			b.Fatal(err)
		}
		checkCPU += cpuTime(b) - t0
		cmd := exec.Command(readelf, "--debug-dump=frames-interp", exe)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		readelfCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(checkCPU.Seconds()/float64(b.N), "check-cpu-s/op")
	b.ReportMetric(readelfCPU.Seconds()/float64(b.N), "readelf-cpu-s/op")
	b.ReportMetric(checkCPU.Seconds()/readelfCPU.Seconds(), "x-readelf")
}
