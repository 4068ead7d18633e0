package pipelines

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/sfconform/sfconform/internal/strictjson"
)

// WriteJSON writes the result as JSON: what a shard of a campaign hands
// to the job that merges them (ReadJSON, Merge).
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// ReadJSON reads a result WriteJSON wrote; bad input is an error naming
// the file and, for malformed JSON, the byte offset.
func ReadJSON(path string) (*Result, error) {
	var r Result
	if err := strictjson.Read(path, "a pipelines result", &r); err != nil {
		return nil, err
	}
	if len(r.Rows) == 0 {
		return nil, fmt.Errorf("%s: byte offset 0: a pipelines result without rows", path)
	}
	return &r, nil
}

// Merge joins the results of shards (each a subset of targets, series or
// scenarios) into one, in the order given: the rows one after the other,
// the versions joined, the elapsed time the longest shard's (the wall
// time of a campaign whose shards run side by side), every shard's kept.
func Merge(shards ...*Result) *Result {
	out := &Result{}
	vers := map[string]bool{}
	for _, s := range shards {
		out.Rows = append(out.Rows, s.Rows...)
		for _, v := range s.Versions {
			vers[v] = true
		}
		out.Elapsed = max(out.Elapsed, s.Elapsed)
		if len(s.Shards) > 0 {
			out.Shards = append(out.Shards, s.Shards...)
		} else {
			out.Shards = append(out.Shards, s.Elapsed)
		}
	}
	for v := range vers {
		out.Versions = append(out.Versions, v)
	}
	sort.Strings(out.Versions)
	return out
}

// elapsedText is how long the run took: one machine's time, or the
// shards' (the longest, and their sum).
func (r *Result) elapsedText() string {
	if len(r.Shards) < 2 {
		return r.Elapsed.Round(time.Second).String()
	}
	var sum time.Duration
	for _, d := range r.Shards {
		sum += d
	}
	return fmt.Sprintf("%d shards, the longest %s, together %s", len(r.Shards), r.Elapsed.Round(time.Second), sum.Round(time.Second))
}
