package packages

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// arMember is one member's header and data in ar's format.
func arMember(name string, data []byte) string {
	h := fmt.Sprintf("%-16s%-12s%-6s%-6s%-8s%-10d`\n", name, "0", "0", "0", "644", len(data))
	s := h + string(data)
	if len(data)%2 == 1 {
		s += "\n"
	}
	return s
}

// A GNU archive: the symbol table, the long-name table, a member with a
// short name, one with a long name, one that is not ELF (skipped), and
// two members of one name (kept apart).
func TestExtractMembers(t *testing.T) {
	dir := t.TempDir()
	elfA := []byte("\x7fELF-a-odd")
	elfB := []byte("\x7fELF-b")
	long := "a_rather_long_member_name.o/\n"
	ar := "!<arch>\n" + arMember("/", []byte{0, 0, 0, 0}) + arMember("//", []byte(long)) +
		arMember("short.o/", elfA) + arMember("/0", elfB) + arMember("README/", []byte("text")) + arMember("short.o/", elfB)
	path := filepath.Join(dir, "lib.a")
	if err := os.WriteFile(path, []byte(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	// elfType fails on these stubs: extractMembers keeps only members
	// debug/elf reads, so check the files it wrote instead.
	if _, err := extractMembers(path, "lib.a", filepath.Join(dir, "m")); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, "m", e.Name()))
		got = append(got, e.Name()+"="+string(data))
	}
	want := "002-short.o=\x7fELF-a-odd 003-a_rather_long_member_name.o=\x7fELF-b 005-short.o=\x7fELF-b"
	if strings.Join(got, " ") != want {
		t.Errorf("members:\n got %q\nwant %q", strings.Join(got, " "), want)
	}

	// A truncated archive is an error naming the byte offset.
	if err := os.WriteFile(path, []byte(ar[:len(ar)-40]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := extractMembers(path, "lib.a", filepath.Join(dir, "n")); err == nil || !strings.Contains(err.Error(), "at byte") {
		t.Errorf("truncated archive: %v, want an error with the byte offset", err)
	}
}

func TestNotBuilt(t *testing.T) {
	for rel, want := range map[string]bool{
		"build/CMakeFiles/3.25.1/CompilerIdC/a.out":          true,
		"build/CMakeFiles/CheckTypeSize/INT.bin":             true,
		"build/CMakeFiles/CMakeScratch/TryCompile-x/cmTC":    true,
		"build/CMakeFiles/jansson.dir/src/dump.c.o":          false,
		"build/libjansson.so.4.14.0":                         false,
		"src/.libs/libexpat.so.1.8.10":                       false,
		"build/src/CMakeFiles/yaml-cpp.dir/src/node.cpp.o":   false,
		"build/test/CMakeFiles/CMakeTmp/CheckSymbolExists.o": true,
	} {
		if got := notBuilt(rel); got != want {
			t.Errorf("notBuilt(%q) = %v, want %v", rel, got, want)
		}
	}
}
