package harness

import (
	"fmt"

	"github.com/sfconform/sfconform/image"

	"github.com/sfconform/sfconform/cbf"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/sframe"
)

// CodeBase is where generated programs are laid out.
const CodeBase = emu.CodeBase

// BacktraceCBF stores a backtrace's PCs in the Compact Backtrace Format:
// frame 0 and a frame a signal interrupted (the one after a signal frame)
// as exact PCs, the others as return addresses. stopped marks a backtrace
// that ended on an error before its outermost frame, which CBF says with
// "trunc".
func BacktraceCBF(frames []frame.Frame, stopped bool) []byte {
	bt := cbf.Backtrace{Size: cbf.Word64, Truncated: stopped}
	for i, f := range frames {
		k := cbf.KindRA
		if i == 0 || frames[i-1].Signal {
			k = cbf.KindPC
		}
		bt.Frames = append(bt.Frames, cbf.Frame{Kind: k, Addr: f.PC})
	}
	b, err := cbf.Encode(bt)
	if err != nil {
		return nil // more frames than CBF holds: the JSON frames remain
	}
	return b
}

// RowAt describes the SFrame row covering pc in the image's section, for
// reports only (the oracle never reads the section).
func RowAt(img *image.Image, pc uint64) string {
	sec, addr, where := img.SFrame, img.SFrameAddr, ""
	if len(img.Modules) > 0 {
		i := img.ModuleAt(pc)
		if i < 0 {
			return fmt.Sprintf("no module holds 0x%x", pc)
		}
		m := img.Modules[i]
		sec, addr, where = m.SFrame, m.SFrameAddr, "module "+m.Name+": "
	}
	t, err := sframe.Decode(sec, addr)
	if err != nil {
		return where + "section does not decode: " + err.Error()
	}
	fde, row, err := t.FindRow(pc)
	if err != nil {
		return err.Error()
	}
	return where + fmt.Sprintf("function 0x%x+0x%x (size %d), row at +0x%x: CFA %s, RA %s, FP %s%s",
		fde.Start, pc-fde.Start, fde.Size, row.Start, row.CFA, row.RA, row.FP, flags(row))
}

func flags(r sframe.Row) string {
	s := ""
	if r.MangledRA {
		s += fmt.Sprintf(", RA signed (key %d)", r.PAuthKey)
	}
	if r.Signal {
		s += ", signal frame"
	}
	return s
}
