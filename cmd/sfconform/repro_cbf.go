package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/sfconform/sfconform/harness"
)

// backtraceCount gathers the workers' harness.BacktraceStats for
// --cbf-stats.
type backtraceCount struct {
	mu      sync.Mutex
	workers []*harness.BacktraceStats
}

// forWorker is a worker's own count (nil without --cbf-stats).
func (b *backtraceCount) forWorker() *harness.BacktraceStats {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &harness.BacktraceStats{}
	b.workers = append(b.workers, s)
	return s
}

func cbfFigure(cfg runConfig) *backtraceFigure {
	if cfg.backtraces == nil {
		return nil
	}
	var all harness.BacktraceStats
	for _, w := range cfg.backtraces.workers {
		all.Merge(w)
	}
	f := &backtraceFigure{Backtraces: all.Backtraces, Frames: all.Frames, CBFBytes: all.CBFBytes, PlainBytes: all.PlainBytes()}
	if all.Backtraces > 0 {
		f.CBFPerTrace = float64(all.CBFBytes) / float64(all.Backtraces)
		f.PlainPerTrace = float64(f.PlainBytes) / float64(all.Backtraces)
	}
	return f
}

func printCBFFigure(w io.Writer, cfg runConfig) {
	f := cbfFigure(cfg)
	if f == nil || f.Backtraces == 0 {
		return
	}
	fmt.Fprintf(w, "backtraces: %d judged, %.2f frames each; stored as CBF %.2f bytes each, as 8 bytes a frame %.2f: CBF takes %.1f%% (%d against %d bytes)\n",
		f.Backtraces, float64(f.Frames)/float64(f.Backtraces), f.CBFPerTrace, f.PlainPerTrace, 100*float64(f.CBFBytes)/float64(f.PlainBytes), f.CBFBytes, f.PlainBytes)
}
