package difffuzz

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Keeper writes reproducer files, one per distinct signature (Signature):
// the first case that shows a kind of crash or of unclassified
// disagreement is kept, the thousand after it are not. Signatures of the
// files already in the directory count as seen.
//
// With a Runner, a kept case is first cut down to what shows the
// disagreement: a crash on loading keeps no step, a crash or a difference
// on one step keeps that step alone, when the case so cut still shows a
// disagreement of the same class and signature.
type Keeper struct {
	Dir    string
	Runner *Runner
	// PerClass keeps one reproducer per consumer, class and crash or
	// not, instead of one per signature.
	PerClass bool
	mu       sync.Mutex
	seen     map[string]bool
}

// NewKeeper reads the signatures of the reproducers in dir.
func NewKeeper(dir string) (*Keeper, error) {
	k := &Keeper{Dir: dir, seen: map[string]bool{}}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		r, err := ReadRepro(p)
		if err != nil {
			return nil, err
		}
		d := Disagreement{Consumer: r.Consumer, Class: r.Class, Crash: r.Crash, Step: r.Step, Detail: r.Detail}
		k.seen[Signature(d)] = true
		k.seen[fmt.Sprintf("%s|%s|%v", d.Consumer, d.Class, d.Crash)] = true
	}
	return k, nil
}

// Keep writes a reproducer of d in c unless its signature was seen. It
// returns the file written, or "".
func (k *Keeper) Keep(c *Case, d Disagreement) (string, error) {
	sig := Signature(d)
	if k.PerClass {
		sig = fmt.Sprintf("%s|%s|%v", d.Consumer, d.Class, d.Crash)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen[sig] {
		return "", nil
	}
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		return "", err
	}
	c, d = k.cut(c, d)
	rep := &Repro{Case: c, Consumer: d.Consumer, Class: d.Class, Step: d.Step, Crash: d.Crash, Detail: d.Detail}
	rep.Nondeterministic = !k.repeats(rep)
	// A nondeterministic one does not stand for its kind: a later case
	// may show it for sure.
	k.seen[sig] = !rep.Nondeterministic
	path := filepath.Join(k.Dir, reproName(d, c)+".json")
	return path, WriteRepro(path, rep)
}

// replays is how many times a case is asked again before its reproducer
// counts as deterministic: a crash that depends on the heap bytes
// libsframe reads past its buffer (their addresses move with ASLR) often
// repeats once and not the next time.
const replays = 3

// repeats reports whether asking the reproducer's case again shows its
// disagreement again, every one of replays times (with a Runner; without
// one it is taken to).
func (k *Keeper) repeats(r *Repro) bool {
	if k.Runner == nil {
		return true
	}
	for range replays {
		if _, ok := Replay(k.Runner, r); !ok {
			return false
		}
	}
	return true
}

// Replay asks a reproducer's case and returns the disagreement matching
// the one kept (same consumer, step, crash or not), and whether it has
// the kept class.
func Replay(r *Runner, rep *Repro) (*Outcome, bool) {
	o := r.Run(rep.Case)
	for _, d := range o.Disagreements {
		if d.Consumer == rep.Consumer && d.Step == rep.Step && d.Crash == rep.Crash {
			return o, d.Class == rep.Class
		}
	}
	return o, false
}

// cut returns c with only the steps d needs, and d as the cut case shows
// it, or c and d themselves when the cut case does not show it.
func (k *Keeper) cut(c *Case, d Disagreement) (*Case, Disagreement) {
	if k.Runner == nil {
		return c, d
	}
	cut := *c
	switch {
	case d.Step == -1:
		cut.Steps = nil
	case d.Step >= 0 && d.Step < len(c.Steps):
		cut.Steps = c.Steps[d.Step : d.Step+1]
	default:
		return c, d // after the steps, or the whole batch: all of them
	}
	want, step := Signature(d), 0 // the one step left is step 0
	if d.Step == -1 {
		step = -1
	}
	for _, e := range k.Runner.Run(&cut).Disagreements {
		if e.Consumer == d.Consumer && e.Step == step && Signature(e) == want {
			return &cut, e
		}
	}
	return c, d
}

var (
	numbers = regexp.MustCompile(`0x[0-9a-fA-F]+|-?[0-9]+`)
	// crashWhere picks what a crash report says the process was doing:
	// the signal and the phase, an assertion, or the C library's heap
	// check.
	stops      = regexp.MustCompile(`(?:[a-z][a-z0-9:.-]*) (complete|noinfo|failed), `) // "CONSUMER STOP, "
	crashWhere = regexp.MustCompile(`fatal signal [0-9]+ \([A-Z]+\)( at address [^ ]+)? in [a-z_]+|Assertion .*failed|[a-z]+\(\): [a-z ]+|stack smashing detected|no answer within`)
)

// Signature says what kind of thing d is, without the numbers: consumer,
// class, crash or not, where (load, a step, after the steps) and, for a
// crash, what the process was doing when it died.
func Signature(d Disagreement) string {
	where := "step"
	switch {
	case d.Step == -1:
		where = "load"
	case d.Step == AfterSteps:
		where = "after"
	}
	sig := fmt.Sprintf("%s|%s|%v|%s", d.Consumer, d.Class, d.Crash, where)
	if !d.Crash {
		// How each one stopped: builtin first, then the other.
		for _, m := range stops.FindAllStringSubmatch(d.Detail, 2) {
			sig += "|" + m[1]
		}
	} else {
		var parts []string
		for _, m := range crashWhere.FindAllString(d.Detail, -1) {
			parts = append(parts, numbers.ReplaceAllString(m, "N"))
		}
		sig += "|" + strings.Join(parts, ";")
	}
	return sig
}
