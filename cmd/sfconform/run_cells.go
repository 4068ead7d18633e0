package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/outfile"
)

// The types of the summary 'run --json' writes and 'merge' reads: the
// campaign package's, which owns the schema.
type (
	summary         = campaign.Summary
	cell            = campaign.Cell
	differs         = campaign.Differs
	patternResult   = campaign.PatternResult
	backtraceFigure = campaign.BacktraceFigure
)

// runCells runs the cells of every target x producer x consumer with the
// campaign package's workers, each with one emulator per target it meets.
func runCells(cfg runConfig, stderr io.Writer) ([]*cell, int64) {
	var cells []*cell
	for _, t := range cfg.targets {
		for _, p := range cfg.producers {
			for _, c := range cfg.consumers {
				cells = append(cells, campaign.NewCell(t, p, c))
			}
		}
	}
	sink := &runSink{cfg: cfg, stderr: stderr}
	campaign.Run(campaign.Config{
		Seeds:    cfg.shard.Seeds(cfg.seed, cfg.programs, cfg.batch),
		Paths:    cfg.paths,
		Batch:    cfg.batch,
		Patterns: cfg.patterns,
		Workers:  cfg.workers,
		Checker:  func() harness.Options { return harness.Options{Backtraces: cfg.backtraces.forWorker()} },
	}, cells, sink)
	return cells, sink.unsaved.Load()
}

// runSink is what run does with each checked program: count it in the
// progress, save a failure as a reproducer and say so on stderr.
type runSink struct {
	cfg    runConfig
	stderr io.Writer
	mu     sync.Mutex
	// unsaved counts the failures no reproducer could be written for:
	// the run exits 2 at the end when there are any.
	unsaved atomic.Int64
}

func (s *runSink) report(format string, args ...any) {
	if s.cfg.progress != nil {
		s.cfg.progress.printf(format, args...)
	} else if !s.cfg.quiet {
		s.mu.Lock()
		fmt.Fprintf(s.stderr, format, args...)
		s.mu.Unlock()
	}
}

func (s *runSink) Program(k *campaign.Checked) string {
	c, p, res := k.Cell, k.Program, k.Result
	if res == nil {
		// The tools failed on this program: kept with its assembly.
		path, err := saveToolFailure(s.cfg.out, c, p)
		if err != nil {
			s.unsaved.Add(1)
			fmt.Fprintf(s.stderr, "%s seed %d: saving the producer's failure: %v\n", c.Name(), p.Seed, err)
			path = ""
		}
		if s.cfg.progress != nil {
			s.cfg.progress.program(0, true)
		}
		s.report("FAIL %s seed %d: %v\n", c.Name(), p.Seed, firstLine(p.Err.Error()))
		return path
	}
	if s.cfg.progress != nil {
		s.cfg.progress.program(res.Steps, !res.Clean())
	}
	if res.Clean() {
		return ""
	}
	path, err := saveFailure(s.cfg, k, s.report)
	if err != nil {
		s.unsaved.Add(1)
		fmt.Fprintf(s.stderr, "%s seed %d: saving the failure: %v\n", c.Name(), p.Seed, err)
		path = ""
	}
	s.report("FAIL %s seed %d: %s\n", c.Name(), p.Seed, describe(res))
	return path
}

func (s *runSink) Note(c *cell, msg string) { s.report("%s %s\n", c.Name(), msg) }

func (s *runSink) CellDone(c *cell) {
	if s.cfg.progress != nil {
		s.cfg.progress.cellDone(c.Programs)
	}
}

// saveToolFailure keeps a program the tools could not make an image of:
// its coordinates, the error (commands and the tools' output) and its
// assembly, which reproduces it with the tools alone.
func saveToolFailure(dir string, c *cell, p campaign.Produced) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d-producer.txt", c.Target, strings.NewReplacer("/", "_", ":", "_").Replace(c.Producer), p.Seed))
	text := fmt.Sprintf("target %s, producer %s, seed %d: the producer made no image\n\n%v\n\n--- the program's assembly ---\n%s",
		c.Target, c.Producer, p.Seed, p.Err, p.Prog.Assembly())
	return path, outfile.Write(path, []byte(text))
}
