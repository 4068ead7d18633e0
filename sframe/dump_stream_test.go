package sframe

import (
	"bytes"
	"encoding/json"
	"testing"
)

// referenceJSON is DumpJSON's document built whole and encoded by
// encoding/json, as DumpJSON wrote it before it streamed: the streaming
// writer must produce the same bytes.
func referenceJSON(t *testing.T, tab *Table) []byte {
	t.Helper()
	doc := jsonDump{Sections: []jsonSection{}}
	for _, s := range tab.Sections {
		fdes, err := s.FDEs()
		if err != nil {
			t.Fatal(err)
		}
		h := &s.Header
		js := jsonSection{Offset: s.Offset, Base: hexAddr(s.Base), Version: int(h.Version), Flags: flagNames(h.Flags),
			ABI: h.ABI.Name(), CFAFixedFP: int(h.CFAFixedFP), CFAFixedRA: int(h.CFAFixedRA),
			NumFDEs: h.NumFDEs, NumFREs: h.NumFREs, Functions: []jsonFunction{}}
		for i := range fdes {
			js.Functions = append(js.Functions, jsonOfFunction(h, i, &fdes[i]))
		}
		doc.Sections = append(doc.Sections, js)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDumpJSONStreamsTheDocument compares the streamed JSON with
// encoding/json's rendering of the same document on every fixture (all
// versions, targets, flexible and PCMASK functions, objects and linked
// files), and on two concatenated sections and an empty table.
func TestDumpJSONStreamsTheDocument(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, tab *Table) {
		var got bytes.Buffer
		if err := DumpJSON(&got, tab); err != nil {
			t.Fatal(err)
		}
		want := referenceJSON(t, tab)
		if !bytes.Equal(got.Bytes(), want) {
			i := 0
			for i < got.Len() && i < len(want) && got.Bytes()[i] == want[i] {
				i++
			}
			lo := max(0, i-200)
			t.Fatalf("DumpJSON differs from encoding/json at byte %d:\n got: %q\nwant: %q", i,
				got.Bytes()[lo:min(got.Len(), i+100)], want[lo:min(len(want), i+100)])
		}
	}
	forEachFixture(t, allFixtures, func(t *testing.T, f *fixture) {
		tab := f.decode(t)
		check(t, tab)
		if len(tab.Sections) == 1 {
			// The same section twice, as a linker that concatenates leaves it.
			buf := append(append([]byte(nil), f.raw...), make([]byte, (8-len(f.raw)%8)%8)...)
			buf = append(buf, f.raw...)
			tab2, err := Decode(buf, f.base)
			if err == nil && len(tab2.Sections) == 2 {
				check(t, tab2)
			}
		}
	})
	t.Run("empty", func(t *testing.T) { check(t, &Table{}) })
}
