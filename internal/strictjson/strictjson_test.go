package strictjson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type shard struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string // want: "" for success, else a part of the error
	}{
		{"ok", `{"name":"a","count":2}` + "\n", ""},
		{"unknown field", `{"name":"a","cnt":2}`, "unknown field"},
		{"syntax", `{"name":"a",,}`, "byte offset 12"},
		{"type", `{"name":"a","count":"two"}`, "byte offset 25"},
		{"two values", `{"name":"a"} {"name":"b"}`, "more after the first JSON value"},
		{"empty", ``, "byte offset 0"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var s shard
		err := Read(p, "a test shard", &s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && (s.Name != "a" || s.Count != 2):
			t.Errorf("%s: read %+v", tc.name, s)
		case tc.want != "" && err == nil:
			t.Errorf("%s: accepted %q", tc.name, tc.text)
		case tc.want != "" && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a test shard")):
			t.Errorf("%s: error %q lacks %q, the path or what it should be", tc.name, err, tc.want)
		}
	}
	if err := Read(filepath.Join(dir, "missing.json"), "a test shard", new(shard)); err == nil {
		t.Error("a missing file was read")
	}
}
