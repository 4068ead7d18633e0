package deviation

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// Path is where the list lives, from the repository's root.
const Path = "deviation/expected.txt"

//go:embed expected.txt
var expectedText []byte

// DefaultMin is how many programs that ran an entry's pattern a cell needs
// before the entry, matching nothing, is stale.
const DefaultMin = 8

// Fields that narrow a verdict, besides WRONG's frame values.
const (
	FieldLoad     = "load"     // the consumer refused the section
	FieldProducer = "producer" // the producer made no image of the program
)

// AnyPattern, in an entry naming its cells (both its producers and its
// consumers), covers the failures of every pattern: for a cell that one
// behaviour breaks throughout (a decoder misreading every function start
// of a section), where no other failure could show anyway.
const AnyPattern = "*"

// PatternSection is the pattern of what concerns a whole section: a
// consumer refusing it, a validation rule it breaks.
const PatternSection = "section"

// wrongFields are the frame values a WRONG step can first differ in (the
// oracle's Judgement.Field).
var wrongFields = []string{"pc", "sp", "fp", "cfa", "outermost", "depth"}

// Entry is one expected deviation.
type Entry struct {
	File string
	Line int
	// Producer and Consumer are as written: "*", or plug-in names
	// separated by commas (not "*" both).
	Producer, Consumer   string
	producers, consumers []string        // nil: "*"
	Targets              []target.Target // nil: every target
	Pattern              string
	// Verdicts are the verdicts it matches, one at least: a behaviour
	// that shows as ERROR or as WRONG depending on the values a wrong row
	// happens to produce names both.
	Verdicts []VerdictField
	Finding  string // path from the repository's root
	Min      int    // programs running Pattern before the entry can be stale
}

// VerdictField is a verdict, narrowed to the field that first differed
// (WRONG) or to what failed (FieldLoad, FieldProducer, an INVALID rule);
// Field "" matches every field.
type VerdictField struct {
	Verdict verdict.Verdict
	Field   string
}

func (v VerdictField) String() string {
	if v.Field == "" {
		return v.Verdict.String()
	}
	return v.Verdict.String() + ":" + v.Field
}

// HasField reports whether one of the entry's verdicts names field.
func (e *Entry) HasField(field string) bool {
	return slices.ContainsFunc(e.Verdicts, func(v VerdictField) bool { return v.Field == field })
}

// Cell is how the entry names its cell, e.g. "gas-2.44/*".
func (e *Entry) Cell() string { return e.Producer + "/" + e.Consumer }

// VerdictText is the entry's verdict as written, e.g. "WRONG:outermost".
func (e *Entry) VerdictText() string {
	var out []string
	for _, v := range e.Verdicts {
		out = append(out, v.String())
	}
	return strings.Join(out, ",")
}

// TargetText is the entry's targets as written.
func (e *Entry) TargetText() string {
	if e.Targets == nil {
		return "all"
	}
	var n []string
	for _, t := range e.Targets {
		n = append(n, t.Name())
	}
	return strings.Join(n, ",")
}

// String names the entry by its place and its key, for messages.
func (e *Entry) String() string {
	return fmt.Sprintf("%s:%d (%s %s %s %s)", e.File, e.Line, e.Cell(), e.TargetText(), e.Pattern, e.VerdictText())
}

// Applies reports whether the entry concerns the cell producer x consumer
// on target t.
func (e *Entry) Applies(producer, consumer string, t target.Target) bool {
	return (e.producers == nil || slices.Contains(e.producers, producer)) &&
		(e.consumers == nil || slices.Contains(e.consumers, consumer)) &&
		(e.Targets == nil || slices.Contains(e.Targets, t))
}

// Key is a failing step, or a failing program, of a cell: what an entry
// must match.
type Key struct {
	Producer, Consumer string
	Target             target.Target
	Pattern            string
	Verdict            verdict.Verdict
	Field              string
}

func (k Key) String() string {
	v := k.Verdict.String()
	if k.Field != "" {
		v += ":" + k.Field
	}
	return fmt.Sprintf("%s/%s %s %s %s", k.Producer, k.Consumer, k.Target.Name(), k.Pattern, v)
}

// Matches reports whether the entry covers k.
func (e *Entry) Matches(k Key) bool {
	return e.Applies(k.Producer, k.Consumer, k.Target) && (e.Pattern == k.Pattern || e.Pattern == AnyPattern) &&
		slices.ContainsFunc(e.Verdicts, func(v VerdictField) bool { return v.Verdict == k.Verdict && (v.Field == "" || v.Field == k.Field) })
}

// Stale reports whether the entry no longer deviates in a cell where ran
// programs ran its pattern and matched steps matched it.
func (e *Entry) Stale(ran, matched int) bool { return matched == 0 && ran >= e.Min }

// StaleMessage is what a suite or the matrix says of a stale entry.
func (e *Entry) StaleMessage(ran int) string {
	return fmt.Sprintf("%s no longer deviates (%d programs ran %s, none matched): fixed upstream? update the finding (%s) and remove the entry",
		e, ran, e.Pattern, e.Finding)
}

// List is the expected deviations, in the order written.
type List struct {
	Entries []*Entry
}

// Match returns the first entry covering k, or nil.
func (l *List) Match(k Key) *Entry {
	if l == nil {
		return nil
	}
	for _, e := range l.Entries {
		if e.Matches(k) {
			return e
		}
	}
	return nil
}

// For returns the entries concerning the cell producer x consumer on t.
func (l *List) For(producer, consumer string, t target.Target) []*Entry {
	if l == nil {
		return nil
	}
	var out []*Entry
	for _, e := range l.Entries {
		if e.Applies(producer, consumer, t) {
			out = append(out, e)
		}
	}
	return out
}

// Expected is the checked-in list (expected.txt, embedded).
func Expected() (*List, error) { return Parse(bytes.NewReader(expectedText), Path) }

// Load reads a list from a file of the same format.
func Load(path string) (*List, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// ParseError is a line of a list that does not parse.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a list; name is the file's name for messages. Every line
// that does not parse is reported (errors.Join of *ParseError), and none
// of the list is returned then.
func Parse(r io.Reader, name string) (*List, error) {
	l := &List{}
	var errs []error
	sc := bufio.NewScanner(r)
	line := 0
	seen := map[string]int{}
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		e, err := parseEntry(f)
		if err != nil {
			errs = append(errs, &ParseError{File: name, Line: line, Msg: err.Error()})
			continue
		}
		e.File, e.Line = name, line
		key := strings.Join(f[:4], " ")
		if prev, dup := seen[key]; dup {
			errs = append(errs, &ParseError{File: name, Line: line, Msg: fmt.Sprintf("the same cell, target, pattern and verdict as line %d", prev)})
			continue
		}
		seen[key] = line
		l.Entries = append(l.Entries, e)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &ParseError{File: name, Line: line + 1, Msg: err.Error()})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// parseVerdict reads one verdict of an entry of pattern.
func parseVerdict(item, pattern string) (VerdictField, error) {
	vtext, field, _ := strings.Cut(item, ":")
	v, err := verdict.Parse(vtext)
	if err != nil {
		return VerdictField{}, fmt.Errorf("verdict %q: want WRONG, NOINFO, ERROR or INVALID, optionally :FIELD", item)
	}
	vf := VerdictField{v, strings.ReplaceAll(field, "_", " ")}
	switch v {
	case verdict.OK:
		return vf, errors.New("verdict OK: an OK step deviates from nothing")
	case verdict.Wrong:
		if field != "" && !slices.Contains(wrongFields, field) {
			return vf, fmt.Errorf("verdict %s: WRONG's field is one of %s", item, strings.Join(wrongFields, ", "))
		}
	case verdict.NoInfo:
		if field != "" && field != FieldLoad {
			return vf, fmt.Errorf("verdict %s: NOINFO's field can only be %s", item, FieldLoad)
		}
	case verdict.Error:
		if field != "" && field != FieldLoad && field != FieldProducer {
			return vf, fmt.Errorf("verdict %s: ERROR's field is %s or %s", item, FieldLoad, FieldProducer)
		}
	case verdict.Invalid:
		if field == "" || pattern != PatternSection {
			return vf, fmt.Errorf("verdict %s: INVALID names its rule (INVALID:RULE, spaces as _) and the pattern %s", item, PatternSection)
		}
	}
	if vf.Field == FieldLoad && pattern != PatternSection {
		return vf, fmt.Errorf("verdict %s: a refused section is charged to the pattern %s, not %s", item, PatternSection, pattern)
	}
	return vf, nil
}

func parseEntry(f []string) (*Entry, error) {
	if len(f) < 5 {
		return nil, fmt.Errorf("want CELL TARGET PATTERN VERDICT FINDING [min=N], got %d fields", len(f))
	}
	e := &Entry{Min: DefaultMin}
	var ok bool
	if e.Producer, e.Consumer, ok = strings.Cut(f[0], "/"); !ok || e.Producer == "" || e.Consumer == "" {
		return nil, fmt.Errorf("cell %q: want PRODUCER/CONSUMER (one of them may be *)", f[0])
	}
	if e.Producer == "*" && e.Consumer == "*" {
		return nil, fmt.Errorf("cell %q: an entry is keyed by a producer or a consumer series, not by every cell", f[0])
	}
	for _, side := range []struct {
		text string
		list *[]string
	}{{e.Producer, &e.producers}, {e.Consumer, &e.consumers}} {
		if side.text == "*" {
			continue
		}
		for _, n := range strings.Split(side.text, ",") {
			if n == "" || n == "*" {
				return nil, fmt.Errorf("cell %q: want PRODUCER/CONSUMER, each * or names separated by commas", f[0])
			}
			if slices.Contains(*side.list, n) {
				return nil, fmt.Errorf("cell %q: %s named twice", f[0], n)
			}
			*side.list = append(*side.list, n)
		}
	}
	if f[1] != "all" {
		for _, n := range strings.Split(f[1], ",") {
			t, err := target.Parse(n)
			if err != nil {
				return nil, fmt.Errorf("target %q: %v", n, err)
			}
			if slices.Contains(e.Targets, t) {
				return nil, fmt.Errorf("target %s named twice", n)
			}
			e.Targets = append(e.Targets, t)
		}
	}
	e.Pattern = f[2]
	switch {
	case e.Pattern == "all":
		return nil, fmt.Errorf("pattern %q: name one pattern, or * for a whole cell", e.Pattern)
	case e.Pattern == AnyPattern && (e.producers == nil || e.consumers == nil):
		return nil, fmt.Errorf("pattern *: only an entry naming both its producers and its consumers may cover every pattern")
	}
	for _, item := range strings.Split(f[3], ",") {
		vf, err := parseVerdict(item, e.Pattern)
		if err != nil {
			return nil, err
		}
		if slices.Contains(e.Verdicts, vf) {
			return nil, fmt.Errorf("verdict %s named twice", item)
		}
		e.Verdicts = append(e.Verdicts, vf)
	}
	e.Finding = f[4]
	if !strings.HasPrefix(e.Finding, "docs/findings/") || !strings.HasSuffix(e.Finding, ".md") {
		return nil, fmt.Errorf("finding %q: want docs/findings/NNN-slug.md", e.Finding)
	}
	for _, opt := range f[5:] {
		k, val, _ := strings.Cut(opt, "=")
		if k != "min" {
			return nil, fmt.Errorf("option %q: only min=N is known", opt)
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("option %q: min is a number of programs, at least 1", opt)
		}
		e.Min = n
	}
	return e, nil
}
