package packages

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sfconform/sfconform/internal/strictjson"
)

// Shard is what one run of the campaign (a subset of packages, targets,
// series and optimisation levels, on one machine) hands to the job that
// merges the shards into the one report: what it selected, how long it
// took, and its builds' results (those it resumed as well).
type Shard struct {
	Name    string        `json:"name"` // the selection, as the command line gave it
	Elapsed time.Duration `json:"elapsed"`
	// Resumed counts the results the run read from an earlier run of
	// the shard (a re-run after a failure) and did not build: Elapsed
	// does not include them.
	Resumed int            `json:"resumed"`
	Results []*BuildResult `json:"results"`
}

// NewShard is the shard of a run's results that took elapsed.
func NewShard(name string, elapsed time.Duration, results []*BuildResult) *Shard {
	s := &Shard{Name: name, Elapsed: elapsed, Results: results}
	for _, r := range results {
		if r.Resumed {
			s.Resumed++
		}
	}
	return s
}

// WriteJSON writes the shard as JSON (ReadShard reads it back).
func (s *Shard) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(s)
}

// ReadShard reads a shard WriteJSON wrote; bad input is an error naming
// the file and the byte offset.
func ReadShard(path string) (*Shard, error) {
	var s Shard
	if err := strictjson.Read(path, "a packages shard", &s); err != nil {
		return nil, err
	}
	if len(s.Results) == 0 {
		return nil, fmt.Errorf("%s: byte offset 0: a packages shard without results", path)
	}
	for i, r := range s.Results {
		if r == nil || r.Package == "" || r.Target == "" || r.Series == "" || r.Status == "" {
			return nil, fmt.Errorf("%s: result %d: no package, target, series or status", path, i)
		}
	}
	return &s, nil
}

// buildKey names one build of the campaign: package, target, series and
// optimisation level.
func buildKey(r *BuildResult) string {
	return strings.Join([]string{r.Package, r.Target, r.Series, r.OptLevel()}, " ")
}

// Merge joins shards into the results one run over all of them gives (in
// Load's order). A build in two shards is an error naming both: shards of
// one campaign do not overlap, and a shard given twice would count its
// builds twice.
func Merge(shards ...*Shard) ([]*BuildResult, error) {
	from := map[string]string{}
	var out []*BuildResult
	for _, s := range shards {
		for _, r := range s.Results {
			k := buildKey(r)
			if prev, ok := from[k]; ok {
				return nil, fmt.Errorf("build %s is in shard %q and in shard %q", k, prev, s.Name)
			}
			from[k] = s.Name
			out = append(out, r)
		}
	}
	sortResults(out)
	return out, nil
}

// ShardTable writes the campaign's layout: a row per shard with its
// builds, its build and check CPU and its wall time, and the campaign's
// wall time (the longest shard's, when they run side by side).
func ShardTable(w io.Writer, shards []*Shard) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	var longest, sum time.Duration
	for _, s := range shards {
		longest = max(longest, s.Elapsed)
		sum += s.Elapsed
	}
	p("\n## Campaign\n\n%d shards; wall time %s side by side (the longest shard), %s one after the other.\n\n", len(shards),
		longest.Round(time.Second), sum.Round(time.Second))
	p("Builds: those of the shard, of which built (the others failed or are not possible) and resumed (read from an\n")
	p("earlier attempt of the shard; the wall time is this attempt's). CPU: user+system seconds of the builds and checks.\n\n")
	p("| shard | builds | built | resumed | build CPU s | check CPU s | wall s |\n|---|---|---|---|---|---|---|\n")
	for _, s := range shards {
		var built int
		var b, c time.Duration
		for _, r := range s.Results {
			if r.Status == Built {
				built++
			}
			b += r.BuildCPU
			c += r.CheckCPU
		}
		p("| %s | %d | %d | %d | %.0f | %.0f | %.0f |\n", esc(s.Name), len(s.Results), built, s.Resumed, b.Seconds(), c.Seconds(), s.Elapsed.Seconds())
	}
}
