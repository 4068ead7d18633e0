package frame

import (
	"errors"
	"fmt"
)

// Frame is one frame of a backtrace.
type Frame struct {
	// PC is frame 0's program counter, or a deeper frame's return address
	// (with any AArch64 pointer authentication code stripped).
	PC uint64 `json:"pc"`
	// CFA is this frame's canonical frame address; not meaningful when
	// Outermost or Partial.
	CFA uint64 `json:"cfa"`
	// SP and FP are the frame's stack and frame pointers (for deeper
	// frames, the values its callee returns with).
	SP uint64 `json:"sp"`
	FP uint64 `json:"fp"`
	// Outermost marks the last frame of a complete backtrace: its return
	// address is undefined.
	Outermost bool `json:"outermost,omitempty"`
	// Partial marks a frame a consumer reached (its PC, SP and FP are
	// known) but could not unwind: its CFA is unknown. Only the last frame
	// of a backtrace that ended in an error may be partial.
	Partial bool `json:"partial,omitempty"`
	// Signal marks a signal trampoline's frame: the function a signal
	// handler returns to, whose caller is the context the signal
	// interrupted. Its CFA has no meaning (it is not compared), and the
	// next frame's PC is the interrupted PC itself, not a return address.
	Signal bool `json:"signal,omitempty"`
}

func (f Frame) String() string {
	cfa := fmt.Sprintf("0x%x", f.CFA)
	switch {
	case f.Outermost:
		cfa = "outermost"
	case f.Partial:
		cfa = "unknown"
	}
	if f.Signal {
		cfa += " signal"
	}
	return fmt.Sprintf("pc=0x%x cfa=%s sp=0x%x fp=0x%x", f.PC, cfa, f.SP, f.FP)
}

// ErrNoInfo is what a consumer wraps when it stopped because it has no
// unwind information for a PC: no FDE covers it, or no row of its FDE
// does. Any other error means the consumer failed.
var ErrNoInfo = errors.New("no unwind information for this PC")
