package harness

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
)

// errSnapshotTaken ends a run once SnapshotAt has its step.
var errSnapshotTaken = errors.New("harness: snapshot taken")

// SnapshotAt runs path of img up to step (an index among that run's
// instructions, as Failure.Step counts them) and returns the machine
// state there as a batch consumer receives it: the registers the run
// tracks and a copy of the live stack (takeSnapshot). For a reproducer:
// what the consumer unwound from.
func (c *Checker) SnapshotAt(img *image.Image, path, step int) (*machine.Snapshot, error) {
	if img.Target != c.target {
		return nil, fmt.Errorf("harness: %s image on a %s checker", img.Target.Name(), c.target.Name())
	}
	regs := map[int]uint64(nil)
	if path < len(img.Paths) {
		regs = img.Paths[path]
	}
	c.m.SetTrack(img.RuleRegs...)
	run := emu.Run{Code: img.Code, CodeAddr: img.CodeAddr, Segments: c.segments(img), Entry: img.Entry, Exit: img.Exit,
		Regs: regs, Budget: c.opt.Budget}
	if s, ok := img.SignalOf(path); ok {
		run.Signal = &emu.Signal{At: s.At, Count: s.Count, Signo: s.Signo, Handler: s.Handler, Restorer: s.Restorer}
	}
	var snap *machine.Snapshot
	_, err := c.m.Execute(&run, func(s *emu.Step) error {
		if s.Index != step {
			return nil
		}
		snap = takeSnapshot(s, c.target, img.Symbols)
		return errSnapshotTaken
	})
	if snap != nil {
		return snap, nil
	}
	if err == nil {
		err = errors.New("the run ended before it")
	}
	return nil, fmt.Errorf("harness: no step %d on path %d: %w", step, path, err)
}
