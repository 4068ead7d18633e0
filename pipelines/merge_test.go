package pipelines

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMergeShards: two shards written as JSON, read back and merged give
// the rows in shard order, the versions joined once, the longest shard's
// time, and a report that says it was sharded.
func TestMergeShards(t *testing.T) {
	dir := t.TempDir()
	a := &Result{Rows: []Row{{Scenario: LLD, Case: "hello: ld.lld 23 (PIE)", Toolchain: "gas-2.47", Target: "x86-64", Status: Finding, Known: "045-lld-sframe-plain-section.md", Control: "red (x)"}},
		Versions: []string{"gcc 12", "ld 2.47"}, Elapsed: 5 * time.Minute}
	b := &Result{Rows: []Row{{Scenario: LLD, Case: "hello: ld.lld 23 (PIE)", Toolchain: "gas-2.47", Target: "s390x", Status: Clean, Compared: 7, Control: "GREEN: y"}},
		Versions: []string{"gcc 12", "s390x ld 2.47"}, Elapsed: 3 * time.Minute}
	var paths []string
	for i, r := range []*Result{a, b} {
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, []string{"a.json", "b.json"}[i])
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var shards []*Result
	for i, p := range paths {
		r, err := ReadJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := []*Result{a, b}[i]; !reflect.DeepEqual(r.Rows, want.Rows) || r.Elapsed != want.Elapsed {
			t.Fatalf("%s read back as %+v, want %+v", p, r, want)
		}
		shards = append(shards, r)
	}
	m := Merge(shards...)
	if len(m.Rows) != 2 || m.Rows[0].Target != "x86-64" || m.Rows[1].Target != "s390x" {
		t.Errorf("merged rows %+v, want the x86-64 shard's then the s390x shard's", m.Rows)
	}
	if want := []string{"gcc 12", "ld 2.47", "s390x ld 2.47"}; !reflect.DeepEqual(m.Versions, want) {
		t.Errorf("merged versions %q, want %q", m.Versions, want)
	}
	if m.Elapsed != 5*time.Minute || m.ControlsFailed() != 1 {
		t.Errorf("merged: elapsed %v (want the longest shard's 5m0s), %d green controls (want 1)", m.Elapsed, m.ControlsFailed())
	}
	var md bytes.Buffer
	if err := m.Markdown(&md, "sfconform pipelines --merge"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "2 shards, the longest 5m0s, together 8m0s") {
		t.Errorf("report header lacks the shards' times:\n%s", md.String()[:300])
	}
}

// TestReadJSONBadInput: a file that is not a result is refused with its
// name and a byte offset.
func TestReadJSONBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"syntax.json": `{"rows": [ {"scenario": "lld",, ]}`,
		"type.json":   `{"rows": 3}`,
		"empty.json":  `{"rows": []}`,
		"other.json":  `{"programs": 3}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadJSON(p)
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "byte offset") {
			t.Errorf("ReadJSON(%s) = %v, want an error naming the file and a byte offset", name, err)
		}
	}
}
