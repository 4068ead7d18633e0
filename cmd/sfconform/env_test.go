package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Every SFCONFORM_ variable that code linked into the binary reads is
// listed by 'sfconform help env', and every one listed is read: the list
// is made from the source of the packages the binary links (test files
// left out).
func TestHelpEnvListsEveryVariable(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps",
		"-f", `{{if not .Standard}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	name := regexp.MustCompile(`"(SFCONFORM_[A-Z0-9_]+)"`)
	read := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllSubmatch(b, -1) {
			read[string(m[1])] = f
		}
	}
	if len(read) == 0 {
		t.Fatal("no SFCONFORM_ variable found in the binary's source: the scan is broken")
	}
	var help bytes.Buffer
	if code := dispatch([]string{"help", "env"}, &help, &help); code != exitOK {
		t.Fatalf("sfconform help env: exit %d\n%s", code, help.String())
	}
	for v, f := range read {
		if !strings.Contains(help.String(), "  "+v+"=") {
			t.Errorf("%s reads %s, which 'sfconform help env' does not list", f, v)
		}
	}
	for _, v := range envVars {
		if _, ok := read[v.name]; !ok && strings.HasPrefix(v.name, "SFCONFORM_") {
			t.Errorf("'sfconform help env' lists %s, which nothing in the binary reads", v.name)
		}
	}
	// The README's testing section names the binary's variables too.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for v := range read {
		if !bytes.Contains(readme, []byte("`"+v+"`")) {
			t.Errorf("README.md does not name %s", v)
		}
	}
}
