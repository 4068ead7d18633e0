package difffuzz

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// FuzzConsumers is the open-ended differential fuzzing: the engine mutates
// a seed section (which selects the seed's target, address and recorded
// machine states) and a PC, and the case, with lookups, goes to builtin,
// libsframe and (valid sections) glibc.
//
//	go test ./difffuzz -run '^$' -fuzz FuzzConsumers -fuzztime 10m -parallel 2
//
// Every crash, and every unclassified disagreement, of a kind not kept
// yet is written as a reproducer to testdata/repros (TestRepros replays
// them); without -fuzz, go test asks the seed inputs only and writes to a
// temporary directory. An unclassified disagreement fails the fuzz target, as Go's
// fuzzing wants, unless SFCONFORM_DIFFFUZZ_KEEP names a directory: then
// reproducers go there, the run goes on, and each worker writes its
// counts by class to stats-PID.json in it (TestFuzzStats adds them up).
func FuzzConsumers(f *testing.F) {
	seeds := seedsFor(f)
	rnd := rand.New(rand.NewSource(1))
	for i, c := range seeds {
		f.Add(uint16(i), []byte(c.Section), uint64(0))
		// Structured mutants too: the engine's byte-level mutations
		// rarely hit a field on its own.
		for k := 0; k < 3; k++ {
			m, _ := Mutate(c.Section, c.Addr, rnd)
			f.Add(uint16(i), m, rnd.Uint64())
		}
	}
	r := runnerFor(f, true)
	// Only a fuzzing run adds to testdata/repros: go test (make test)
	// runs the seed inputs alone and leaves the tree as it found it.
	dir, collect := f.TempDir(), false
	if fuzzing() {
		dir = reproDir
	}
	if d := os.Getenv("SFCONFORM_DIFFFUZZ_KEEP"); d != "" {
		dir, collect = d, true
	}
	keep, err := NewKeeper(dir)
	if err != nil {
		f.Fatal(err)
	}
	keep.Runner = runnerFor(f, true)
	st, start := newStats(), time.Now()
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, which uint16, sec []byte, pc uint64) {
		base := seeds[int(which)%len(seeds)]
		c := WithLookups(base.WithSection(base.Name+", fuzzed", sec), LookupsPerCase,
			[]uint64{pc, base.Addr + pc%uint64(len(sec)+1)})
		mu.Lock() // one libsframe process per worker
		o := r.Run(c)
		st.add(o)
		if collect && st.Cases%200 == 0 {
			writeStats(t, dir, st, start)
		}
		mu.Unlock()
		for _, d := range o.Disagreements {
			if !d.Crash && d.Class != Unclassified {
				continue
			}
			path, err := keep.Keep(o.Case, d)
			if err != nil {
				t.Fatal(err)
			}
			if d.Class == Unclassified && !collect {
				t.Errorf("unclassified: %v\n  layout: %v\n  reproducer: %s", d, o.Layout.broken, path)
			}
		}
	})
}

// fuzzing reports whether the test binary runs with -fuzz (not only the
// seed inputs).
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// workerStats is what a fuzzing worker writes to stats-PID.json: its
// counts, and who is right in each class (from the first example).
type workerStats struct {
	Cases, Steps, Agreed, Glibc int
	Elapsed                     time.Duration
	ByClass, Crashes            map[string]int
	Right                       map[string]string
}

// writeStats writes this worker's counts.
func writeStats(t *testing.T, dir string, st *Stats, start time.Time) {
	w := workerStats{Cases: st.Cases, Steps: st.Steps, Agreed: st.Agreed, Glibc: st.Glibc, Elapsed: time.Since(start),
		ByClass: st.ByClass, Crashes: st.Crashes, Right: map[string]string{}}
	for k, e := range st.Examples {
		w.Right[k] = e.D.Right
	}
	b, err := json.Marshal(w)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("stats-%d.json", os.Getpid())), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
