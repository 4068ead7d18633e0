package harness

import "github.com/sfconform/sfconform/frame"

// BacktraceStats counts stored backtraces and their sizes: as Compact
// Backtrace Format (BacktraceCBF, as reproducers store them) and as a
// plain list of 8-byte addresses.
type BacktraceStats struct {
	Backtraces int
	Frames     int
	CBFBytes   int
}

// Add counts one backtrace.
func (s *BacktraceStats) Add(frames []frame.Frame) {
	s.Backtraces++
	s.Frames += len(frames)
	s.CBFBytes += len(BacktraceCBF(frames, false))
}

// Merge adds another count.
func (s *BacktraceStats) Merge(o *BacktraceStats) {
	s.Backtraces += o.Backtraces
	s.Frames += o.Frames
	s.CBFBytes += o.CBFBytes
}

// PlainBytes is the size of the same backtraces as 8 bytes per frame.
func (s *BacktraceStats) PlainBytes() int { return 8 * s.Frames }
