package difffuzz

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// LookupsPerCase bounds the lookup steps added to each case (WithLookups).
const LookupsPerCase = 24

// Stats counts what a campaign saw.
type Stats struct {
	Cases    int           // cases asked (mutants, and seeds unmutated)
	Steps    int           // steps asked of the builtin consumer
	Elapsed  time.Duration // wall time of the asking
	Agreed   int           // cases without a disagreement
	ByClass  map[string]int
	Crashes  map[string]int // by class
	Glibc    int            // cases glibc was asked too
	Examples map[string]Example
}

// Example is the first outcome seen of a class, to show and keep.
type Example struct {
	Case *Case
	D    Disagreement
}

func newStats() *Stats {
	return &Stats{ByClass: map[string]int{}, Crashes: map[string]int{}, Examples: map[string]Example{}}
}

// add counts an outcome.
func (s *Stats) add(o *Outcome) {
	s.Cases++
	s.Steps += len(o.Case.Steps)
	if len(o.Others) > 1 {
		s.Glibc++
	}
	if len(o.Disagreements) == 0 {
		s.Agreed++
	}
	for _, d := range o.Disagreements {
		key := d.Consumer + " " + d.Class
		s.ByClass[key]++
		if d.Crash {
			s.Crashes[key]++
		}
		if _, ok := s.Examples[key]; !ok {
			s.Examples[key] = Example{o.Case, d}
		}
	}
}

// Unclassified counts the disagreements no rule explains.
func (s *Stats) Unclassified() int {
	n := 0
	for k, v := range s.ByClass {
		if strings.HasSuffix(k, " "+Unclassified) {
			n += v
		}
	}
	return n
}

// String is the report: cases, steps, time, and disagreements by
// consumer and class.
func (s *Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases (%d also asked of glibc), %d steps, %v: %d cases agreed\n", s.Cases, s.Glibc, s.Steps, s.Elapsed.Round(time.Millisecond), s.Agreed)
	keys := make([]string, 0, len(s.ByClass))
	for k := range s.ByClass {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s", s.ByClass[k], k)
		if c := s.Crashes[k]; c > 0 {
			fmt.Fprintf(&b, " (%d crashes)", c)
		}
		fmt.Fprintf(&b, "  [right: %s]\n", s.Examples[k].D.Right)
	}
	return b.String()
}

// Campaign asks every seed case unmutated, then n mutants (Mutate), each
// of a seed chosen in turn, with lookups, all drawn from seed; seen, when
// not nil, gets every outcome.
func Campaign(r *Runner, seeds []*Case, n int, seed int64, seen func(*Outcome)) *Stats {
	st := newStats()
	rnd := rand.New(rand.NewSource(seed))
	start := time.Now()
	ask := func(c *Case) {
		o := r.Run(c)
		st.add(o)
		if seen != nil {
			seen(o)
		}
	}
	for _, c := range seeds {
		ask(WithLookups(c, LookupsPerCase, nil))
	}
	for i := 0; i < n; i++ {
		c := seeds[i%len(seeds)]
		sec, what := Mutate(c.Section, c.Addr, rnd)
		// Some mutants get a second mutation: two faults together.
		if rnd.Intn(4) == 0 {
			var more string
			sec, more = Mutate(sec, c.Addr, rnd)
			what += "; " + more
		}
		m := c.WithSection(fmt.Sprintf("%s, mutant %d of seed %d: %s", c.Name, i, seed, what), sec)
		ask(WithLookups(m, LookupsPerCase, []uint64{c.Addr + rnd.Uint64()%uint64(len(sec)+1)}))
	}
	st.Elapsed = time.Since(start)
	return st
}
