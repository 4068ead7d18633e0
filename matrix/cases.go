package matrix

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/outfile"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
)

// CaseName is the file a blame's case is stored under:
// TARGET-PRODUCER-CONSUMER-PATTERN-VERDICT[-FIELD].json (.txt for a
// program the producer made no image of).
func CaseName(c Cell, b harness.Blame, noImage bool) string {
	v := b.Verdict.String()
	if b.Field != "" {
		v += "-" + b.Field
	}
	ext := ".json"
	if noImage {
		ext = ".txt"
	}
	return fileSafe(strings.Join([]string{c.Target.Name(), c.Producer, c.Consumer, b.Pattern, v}, "-")) + ext
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// Cases are the stored cases of a report: one per expected deviation (the
// smallest program it matched, in any of its cells), one per unexpected
// failure of a cell (pattern and verdict).
type Cases struct {
	ByEntry   map[*deviation.Entry]string
	ByFailure map[Cell]map[harness.Blame]string
	Files     int
	Bytes     int64
}

// SaveCases stores the report's cases in dir, after removing the cases a
// previous run stored there. A toolchain's sample is made again alone (one
// program, one link) when it fails the same way so: its section then
// holds that program's functions only, and the case is small.
func SaveCases(dir string, rep *Report) (*Cases, error) {
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	txt, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, p := range append(old, txt...) {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cs := &Cases{ByEntry: map[*deviation.Entry]string{}, ByFailure: map[Cell]map[harness.Blame]string{}}
	checkers := campaign.NewWorker(harness.Options{})
	defer checkers.Close()
	save := func(c Cell, b harness.Blame, s *Sample) (string, error) {
		name := CaseName(c, b, s.Img == nil)
		path := filepath.Join(dir, name)
		data, err := caseData(c, b, alone(c, b, s, checkers), path)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", c, b, err)
		}
		if err := outfile.Write(path, data); err != nil {
			return "", err
		}
		cs.Files++
		cs.Bytes += int64(len(data))
		return name, nil
	}
	type choice struct {
		cell Cell
		b    harness.Blame
		s    *Sample
	}
	var order []*deviation.Entry
	best := map[*deviation.Entry]choice{}
	for _, cr := range rep.Cells {
		o := cr.Outcome
		if o == nil {
			continue
		}
		for _, h := range o.Hits {
			for _, b := range h.Blames {
				s := o.Blames[b].Sample
				if s == nil {
					continue
				}
				c, ok := best[h.Entry]
				if !ok {
					order = append(order, h.Entry)
				}
				if !ok || s.Size < c.s.Size {
					best[h.Entry] = choice{cr.Cell, b, s}
				}
			}
		}
		for _, b := range o.Unexpected {
			s := o.Blames[b].Sample
			if s == nil {
				continue
			}
			name, err := save(cr.Cell, b, s)
			if err != nil {
				return nil, err
			}
			if cs.ByFailure[cr.Cell] == nil {
				cs.ByFailure[cr.Cell] = map[harness.Blame]string{}
			}
			cs.ByFailure[cr.Cell][b] = name
		}
	}
	for _, e := range order {
		c := best[e]
		name, err := save(c.cell, c.b, c.s)
		if err != nil {
			return nil, err
		}
		cs.ByEntry[e] = name
	}
	return cs, nil
}

// alone makes a toolchain's sample again as a batch of one and returns
// it when it still fails as b; otherwise s.
func alone(c Cell, b harness.Blame, s *Sample, checkers *campaign.Worker) *Sample {
	if s.Img == nil || s.Img.Record == nil || s.Img.Record.Batch <= 1 {
		return s
	}
	prod, err := producer.New(c.Producer)
	if err != nil {
		return s
	}
	img, prog, err := campaign.Produce(prod, c.Target, s.Seed, gen.Options{Patterns: []string{s.Pattern}})
	if err != nil {
		return s
	}
	cons, err := consumer.New(c.Consumer)
	if err != nil {
		return s
	}
	defer cons.Close()
	chk, err := checkers.Checker(c.Target)
	if err != nil {
		return s
	}
	res := chk.CheckProgram(img, nil, prog, cons)
	n := res.Blames[b]
	if n == nil {
		return s
	}
	first := n.First
	return &Sample{Pattern: s.Pattern, Seed: s.Seed, Size: len(img.Code), Img: img, Prog: prog, Failure: &first, Violations: res.Violations}
}

// Case is the reproducer of an image's sample in cell c (package corpus),
// nil for a program the producer made no image of.
func (s *Sample) Case(c Cell) *corpus.Case {
	if s.Img == nil {
		return nil
	}
	res := &harness.Result{Violations: s.Violations, Paths: 1}
	if s.Failure != nil {
		res.Failures = []harness.Failure{*s.Failure}
	} else if s.Err != nil {
		res.RunErr = s.Err
	}
	return repro.NewCase(repro.CaseInput{Img: s.Img, Prog: s.Prog, Seed: s.Seed, ConsumerName: c.Consumer, Res: res})
}

// NoImageText is what is kept of a program the producer made no image
// of: the error (the tools' commands and output) and the program's
// assembly, which reproduces it with the tools alone.
func (s *Sample) NoImageText(c Cell) string {
	return fmt.Sprintf("%s, seed %d, pattern %s: the producer made no image\n\n%v\n\n--- the program's assembly ---\n%s",
		c, s.Seed, s.Pattern, s.Err, s.Prog.Assembly())
}

// caseData is the stored form of a sample: a reproducer (package corpus)
// that replays with sfconform run --replay PATH, or NoImageText.
func caseData(c Cell, b harness.Blame, s *Sample, path string) ([]byte, error) {
	cs := s.Case(c)
	if cs == nil {
		return []byte(s.NoImageText(c)), nil
	}
	cs.Format = corpus.FormatName
	cs.Replay = "sfconform run --replay " + filepath.ToSlash(path)
	if cs.Record != nil {
		rec := *cs.Record
		rec.Commands = stableCommands(rec.Commands)
		cs.Record = &rec
	}
	data, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// batchDir matches the temporary directory a toolchain producer ran its
// batch in (os.MkdirTemp's "sfconform-NAME-DIGITS"), gone once it
// finished.
var batchDir = regexp.MustCompile(`[^\s"']*/sfconform-[^\s/"']+-[0-9]+/`)

// stableCommands names the batch directory in a toolchain's commands
// $WORK/, so that make matrix stores the same cases for the same seeds
// and a regenerated docs/matrix changes only where the results do.
func stableCommands(cmds []string) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		out[i] = batchDir.ReplaceAllString(c, "$$WORK/")
	}
	return out
}
