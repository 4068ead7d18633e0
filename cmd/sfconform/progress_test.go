package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// Not on a terminal: a plain line every 30 s of the clock, none between,
// with the counts, the rate and the time left from the rate so far.
func TestProgressPlainLines(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var out bytes.Buffer
	p := newProgress(&out, false, clock.now, 4, 50) // 200 programs planned
	for i := 0; i < 20; i++ {
		clock.advance(time.Second)
		p.program(1000, i == 3)
	}
	// 20 s: no line yet.
	if out.Len() != 0 {
		t.Fatalf("a line before 30 s: %q", out.String())
	}
	for i := 0; i < 20; i++ {
		clock.advance(time.Second)
		p.program(1000, false)
	}
	// The line fell at 30 s, after 30 programs: 170 left at 1 a second.
	want := "progress: cells 0/4, programs 30/200, 1.0k instr/s, 1 failed, 30s elapsed, 2m50s left\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	// An unsupported cell checks nothing: 150 programs are left of it.
	p.cellDone(0)
	p.printf("FAIL something\n")
	p.finish()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[1] != "FAIL something" ||
		lines[2] != "progress: cells 1/4, programs 40/150, 1.0k instr/s, 1 failed, 40s elapsed, 1m50s left" {
		t.Fatalf("lines %q", lines)
	}
}

// On a terminal: one line rewritten in place (carriage return, padded
// over a longer old line); a message clears it, is written, and the line
// comes back below; finish ends it with a newline.
func TestProgressLiveLine(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var out bytes.Buffer
	p := newProgress(&out, true, clock.now, 1, 10)
	clock.advance(100 * time.Millisecond)
	p.program(5, false)
	if out.Len() != 0 {
		t.Fatalf("redrawn before 250 ms: %q", out.String())
	}
	clock.advance(200 * time.Millisecond)
	p.program(5, false)
	first := "\rcells 0/1, programs 2/10, 33 instr/s, 0 failed, 0s elapsed, 1s left"
	if out.String() != first {
		t.Fatalf("got %q, want %q", out.String(), first)
	}
	out.Reset()
	p.printf("FAIL x\n")
	blank := "\r" + strings.Repeat(" ", len(first)-1) + "\r"
	if !strings.HasPrefix(out.String(), blank+"FAIL x\n\rcells 0/1, programs 2/10") || strings.Contains(out.String(), "\n\n") {
		t.Fatalf("a message on a live line: %q", out.String())
	}
	out.Reset()
	p.finish()
	if !strings.HasPrefix(out.String(), "\rcells 0/1") || !strings.HasSuffix(out.String(), "\n") || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("finish: %q", out.String())
	}
}
