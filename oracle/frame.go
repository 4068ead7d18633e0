package oracle

import "fmt"

// Frame is one frame of a backtrace, as the oracle expects it or as a
// consumer reports it.
type Frame struct {
	PC        uint64 `json:"pc"`  // frame 0: the PC; deeper frames: the return address
	CFA       uint64 `json:"cfa"` // this frame's CFA; 0 when Outermost
	SP        uint64 `json:"sp"`  // this frame's SP (for deeper frames: the SP the callee returns with)
	FP        uint64 `json:"fp"`  // this frame's FP
	Outermost bool   `json:"outermost,omitempty"`
}

func (f Frame) String() string {
	cfa := fmt.Sprintf("0x%x", f.CFA)
	if f.Outermost {
		cfa = "outermost"
	}
	return fmt.Sprintf("pc=0x%x cfa=%s sp=0x%x fp=0x%x", f.PC, cfa, f.SP, f.FP)
}
