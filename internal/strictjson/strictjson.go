package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Read decodes the JSON file path into v; an error names the file, the
// byte offset and what the file should have been ("a pipelines result").
func Read(path, what string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset - 1 // Offset counts the bad byte; name the bad byte itself
		case errors.As(err, &te):
			off = te.Offset
		}
		return fmt.Errorf("%s: byte offset %d: not %s: %v", path, off, what, err)
	}
	// One value and nothing after it: a second document (two shards
	// concatenated) is refused, not silently dropped.
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return fmt.Errorf("%s: byte offset %d: not %s: more after the first JSON value", path, dec.InputOffset(), what)
	}
	return nil
}
