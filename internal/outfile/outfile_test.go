package outfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := Write(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("read %q, want new", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d files in the directory, want the one written (no temporary left)", len(ents))
	}
}

func TestPlacesRefusedBeforeARun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Dir("--out", filepath.Join(dir, "a", "b")); err != nil {
		t.Fatalf("a missing directory under a writable one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Error("checking made the directory")
	}
	if err := File("--junit", dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory as --junit: %v, want refused", err)
	}
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, nil, 0o644)
	if err := Dir("--out", filepath.Join(file, "sub")); err == nil || !strings.Contains(err.Error(), "--out") || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a directory under a file: %v, want refused naming --out", err)
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		if err := Dir("--html", ro); err == nil || !strings.Contains(err.Error(), "cannot write in") {
			t.Errorf("a read-only directory: %v, want refused", err)
		}
	}
	if err := File("--junit", filepath.Join(dir, "x", "j.xml")); err != nil {
		t.Errorf("a new file in a new directory: %v", err)
	}
}

// A device or pipe given as the output (--out /dev/null) is written in
// place, never replaced by a regular file: as root, a rename over
// /dev/null turned it into a regular file for the whole machine. Shown on
// a named pipe of the test's own, its reading end opened first (without
// blocking), so that a Write that replaces the pipe fails the test
// instead of hanging it.
func TestWriteKeepsANamedPipe(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(fifo, []byte("report\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is %v after Write, want the named pipe it was", fifo, fi.Mode())
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if got := string(buf[:n]); got != "report\n" {
		t.Errorf("the pipe's reader got %q", got)
	}
}
