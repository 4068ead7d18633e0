package oracle

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/verdict"
)

// Probes: lookups at PCs no instruction executes. Bytes of the image's
// code that lie in no function symbol (a gap between functions, alignment
// padding, the byte at a function's start + size when no function starts
// there) have no unwind information: a table that covers them is wrong,
// and so is an unwinder that takes a function's range to include its end
// (pc <= start + size). The truth there needs no machine state: whatever
// the registers, frame 0 has no FDE and the answer is NOINFO.
//
// Inside a function the oracle knows the truth only where the machine
// really is; those edges (a function's last byte, the next function's
// first, a return address at start + size) are reached by execution.

// MaxProbes bounds the probe PCs of one image.
const MaxProbes = 16

// ProbePCs appends to dst PCs of the image's code (Code, not its other
// segments, which a toolchain's images share with code of other programs)
// that lie in no function symbol: for every run of such bytes its first
// byte (a function's start + size) and its last (the byte before the next
// function's start), at most MaxProbes in all.
func ProbePCs(dst []uint64, img *image.Image) []uint64 {
	lo, hi := img.CodeAddr, img.CodeAddr+uint64(len(img.Code))
	at := lo // the first byte no symbol seen so far covers
	add := func(pc uint64) {
		if len(dst) < MaxProbes && (len(dst) == 0 || dst[len(dst)-1] != pc) {
			dst = append(dst, pc)
		}
	}
	hole := func(a, b uint64) { // [a, b) in no function
		if a < b {
			add(a)
			add(b - 1)
		}
	}
	for _, s := range img.Symbols { // sorted by address
		if s.IsStack() || s.End() <= lo || s.Addr >= hi {
			continue
		}
		hole(at, min(s.Addr, hi))
		at = max(at, s.End())
	}
	hole(at, hi)
	return dst
}

// JudgeProbe judges a consumer's backtrace at a probe PC, regs' SP and FP
// as frame 0's: OK when it found no unwind information for frame 0
// (NOINFO), WRONG (field "no-function") when it unwound from there or
// returned another frame 0, ERROR when it failed otherwise.
func JudgeProbe(pc, sp, fp uint64, got []frame.Frame, err error) Judgement {
	// The answer every probe of a conforming consumer gets, without
	// Compare's allocations.
	if err != nil && errors.Is(err, frame.ErrNoInfo) {
		if len(got) == 0 || len(got) == 1 && got[0].Partial && got[0].PC == pc && got[0].SP == sp && got[0].FP == fp {
			return Judgement{verdict.OK, -1, "", ""}
		}
	}
	j := Compare([]frame.Frame{{PC: pc, SP: sp, FP: fp}}, got, err)
	switch {
	case j.Verdict == verdict.NoInfo && j.Frame == 0:
		return Judgement{verdict.OK, -1, "", ""}
	case j.Verdict == verdict.Error:
		return j
	case j.Verdict == verdict.Wrong && j.Frame == 0:
		return Judgement{verdict.Wrong, 0, "no-function", fmt.Sprintf("pc 0x%x lies in no function, so it has no unwind information; %s", pc, j.Detail)}
	}
	return Judgement{verdict.Wrong, 0, "no-function",
		fmt.Sprintf("pc 0x%x lies in no function, so it has no unwind information; the consumer returned %d frames (%v)", pc, len(got), err)}
}
