package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// The field an error is about, for a file a person may have to repair:
// where a byte offset of the document lies ("symbols[3].name"), and where
// the value of a field starts.

// step is one level of the path to a value.
type step struct {
	object  bool
	key     string // object: the current member's name
	index   int    // array: the current element's index, -1 before the first
	wantKey bool   // object: the next string is a member name
}

// walker follows a document's tokens and knows the path of the value
// being read.
type walker struct {
	doc   []byte
	dec   *json.Decoder
	stack []step
}

func newWalker(doc []byte) *walker {
	return &walker{doc: doc, dec: json.NewDecoder(bytes.NewReader(doc))}
}

// path names the value the walker is in: members by name, elements by
// index, "" for the document itself.
func (w *walker) path() string {
	var b strings.Builder
	for _, s := range w.stack {
		switch {
		case s.object && s.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case !s.object && s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		}
	}
	return b.String()
}

// next reads one token; at the start of a value it calls at with the
// value's path and byte offset. It returns false at the end of the
// document or at the first error.
func (w *walker) next(at func(path string, off int64)) bool {
	start := w.skipSpace(w.dec.InputOffset())
	tok, err := w.dec.Token()
	if err != nil {
		return false
	}
	top := len(w.stack) - 1
	isValue := true
	if top >= 0 {
		s := &w.stack[top]
		switch {
		case s.object && s.wantKey:
			if key, ok := tok.(string); ok {
				s.key, s.wantKey, isValue = key, false, false
			}
		case !s.object:
			if d, ok := tok.(json.Delim); !ok || d != ']' {
				s.index++
			}
		}
	}
	d, isDelim := tok.(json.Delim)
	if isDelim && (d == '}' || d == ']') {
		isValue = false
	}
	if isValue && at != nil {
		at(w.path(), start)
	}
	switch {
	case isDelim && (d == '{' || d == '['):
		w.stack = append(w.stack, step{object: d == '{', index: -1, wantKey: d == '{'})
		return true
	case isDelim:
		w.stack = w.stack[:len(w.stack)-1]
	}
	// A value ended: the enclosing object wants its next member's name.
	if top := len(w.stack) - 1; top >= 0 && w.stack[top].object && !w.stack[top].wantKey && (isValue || isDelim) {
		w.stack[top].wantKey = true
	}
	return true
}

// skipSpace moves off past white space and the separators before the
// next token.
func (w *walker) skipSpace(off int64) int64 {
	for off < int64(len(w.doc)) && strings.IndexByte(" \t\r\n:,", w.doc[off]) >= 0 {
		off++
	}
	return off
}

// fieldAt names the field whose value holds byte offset off, or the
// deepest field read before the document ends or breaks there.
func fieldAt(doc []byte, off int64) string {
	w := newWalker(doc)
	field := ""
	for w.next(func(path string, start int64) {
		if start <= off {
			field = path
		}
	}) {
		if w.dec.InputOffset() > off {
			break
		}
	}
	if field == "" {
		return "the document"
	}
	return field
}

// offsetOf is the byte offset where the value of the field at path
// starts, or -1.
func offsetOf(doc []byte, path string) int64 {
	w := newWalker(doc)
	found := int64(-1)
	for found < 0 && w.next(func(p string, start int64) {
		if p == path {
			found = start
		}
	}) {
	}
	return found
}

// locateValueError finds what a decoding error that carries no offset is
// about: the first top-level member that does not decode on its own, and
// in it the refused text (a *badValue) or the unknown member's name.
func locateValueError(doc []byte, err error) (string, int64) {
	var members map[string]json.RawMessage
	if json.Unmarshal(doc, &members) != nil {
		return "the document", -1
	}
	w := newWalker(doc)
	var order []string
	for w.next(func(path string, _ int64) {
		if len(w.stack) == 1 && path != "" && !strings.ContainsAny(path, ".[") {
			order = append(order, path)
		}
	}) {
	}
	for _, key := range order {
		one, _ := json.Marshal(map[string]json.RawMessage{key: members[key]})
		var c Case
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.DisallowUnknownFields()
		merr := dec.Decode(&c)
		if merr == nil {
			continue
		}
		start := offsetOf(doc, key)
		if start < 0 {
			return key, -1
		}
		needle := ""
		var bv *badValue
		switch {
		case errors.As(merr, &bv):
			needle = strconv.Quote(bv.text)
		case strings.HasPrefix(merr.Error(), "json: unknown field "):
			needle = strings.TrimPrefix(merr.Error(), "json: unknown field ")
		}
		if needle == "" {
			return key, start
		}
		i := bytes.Index(doc[start:], []byte(needle))
		if i < 0 {
			return key, start
		}
		off := start + int64(i)
		if strings.HasPrefix(merr.Error(), "json: unknown field ") {
			// The member's name: the field is the value after it.
			return fieldAt(doc, w.skipSpace(off+int64(len(needle)))), off
		}
		return fieldAt(doc, off), off
	}
	return "the document", -1
}
