package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports a run as it goes: on a terminal one line rewritten in
// place, elsewhere (a CI log) a plain line every period. Messages (a
// failure, a minimization) go through it so they never land inside the
// live line. The clock is injected so that tests drive it.
type progress struct {
	w     io.Writer
	live  bool
	now   func() time.Time
	every time.Duration // between two lines (plain) or redraws (live)

	mu           sync.Mutex
	start, drawn time.Time
	cells, done  int // cells in the run, cells finished
	perCell      int // programs a cell checks
	planned      int // programs the run will check (less the cells that stopped short)
	programs     int
	instructions int
	failures     int
	width        int // of the live line on screen
}

// Periods: a terminal redraws four times a second; a log gets a line
// every 30 seconds.
const (
	liveEvery  = 250 * time.Millisecond
	plainEvery = 30 * time.Second
)

func newProgress(w io.Writer, live bool, now func() time.Time, cells, perCell int) *progress {
	p := &progress{w: w, live: live, now: now, every: plainEvery, cells: cells, perCell: perCell, planned: cells * perCell}
	if live {
		p.every = liveEvery
	}
	p.start = now()
	p.drawn = p.start
	return p
}

// isTerminal says whether w is a terminal one can rewrite a line on.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// program counts a checked program.
func (p *progress) program(instructions int, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.programs++
	p.instructions += instructions
	if failed {
		p.failures++
	}
	p.maybeDraw()
}

// cellDone counts a finished cell, which checked checked programs (fewer
// than planned when it was unsupported or stopped on an error).
func (p *progress) cellDone(checked int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.planned -= p.perCell - checked
	p.maybeDraw()
}

// printf writes a message line, keeping the live line below it.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
	fmt.Fprintf(p.w, format, args...)
	if p.live && p.width > 0 {
		p.draw()
	}
}

// finish ends the live line, or writes the last plain one.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	if p.live {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

func (p *progress) maybeDraw() {
	if t := p.now(); t.Sub(p.drawn) >= p.every {
		p.draw()
	}
}

func (p *progress) draw() {
	p.drawn = p.now()
	line := p.line()
	if !p.live {
		fmt.Fprintln(p.w, "progress: "+line)
		return
	}
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.width = len(line)
}

// line is the state: cells and programs done, the rate, the failures, the
// time spent and left (from the programs' rate so far).
func (p *progress) line() string {
	elapsed := p.now().Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(p.instructions) / s
	}
	left := "?"
	if p.programs > 0 && p.planned >= p.programs {
		left = (time.Duration(float64(elapsed) * float64(p.planned-p.programs) / float64(p.programs))).Round(time.Second).String()
	}
	return fmt.Sprintf("cells %d/%d, programs %d/%d, %s instr/s, %d failed, %s elapsed, %s left",
		p.done, p.cells, p.programs, p.planned, humanRate(rate), p.failures, elapsed.Round(time.Second), left)
}

func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
