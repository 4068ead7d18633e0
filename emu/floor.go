package emu

import (
	"fmt"

	"github.com/sfconform/sfconform/target"
	uc "github.com/unicorn-engine/unicorn/bindings/go/unicorn"
)

// loopProgram is a two-instruction countdown loop per target; the count
// goes in DWARF register reg.
type loopProgram struct {
	code []byte
	reg  int
}

var loops = map[target.Target]loopProgram{
	target.X86_64: {[]byte{
		0x48, 0xff, 0xc9, // dec %rcx
		0x75, 0xfb, // jne 0 (.-3)
	}, 2},
	target.AArch64: {[]byte{
		0x00, 0x04, 0x00, 0xf1, // subs x0, x0, #1
		0xe1, 0xff, 0xff, 0x54, // b.ne .-4
	}, 0},
	target.AArch64BE: {[]byte{
		0x00, 0x04, 0x00, 0xf1, // subs x0, x0, #1
		0xe1, 0xff, 0xff, 0x54, // b.ne .-4
	}, 0},
	target.S390X: {[]byte{
		0xa7, 0x3b, 0x00, 0x01, // aghi %r3,1
		0xa7, 0x27, 0xff, 0xfe, // brctg %r2,.-4
	}, 2},
}

// BareHook runs about n instructions, a two-instruction loop, on a plain
// Unicorn instance with an empty Go code hook through the binding: the
// floor of any per-instruction check of the emulated machine (see
// BenchmarkBareHook). It returns how many instructions ran; the caller
// times the call (instance setup is a few hundred microseconds of it).
func BareHook(abi target.Target, n int) (int, error) {
	return bareRun(abi, max(n/2, 1), func(uc.Unicorn, uint64, uint32) {}, func() {}, func() {})
}

// bareRun runs the target's loop iters times on a plain instance with
// hook as its Go code hook; start and stop bracket the emulation alone.
func bareRun(abi target.Target, iters int, hook func(u uc.Unicorn, addr uint64, size uint32), start, stop func()) (int, error) {
	t, err := cpuOf(abi)
	if err != nil {
		return 0, err
	}
	u, err := uc.NewUnicorn(t.arch, t.mode)
	if err != nil {
		return 0, err
	}
	defer u.Close()
	if abi == target.S390X {
		if err := u.RegWrite(uc.S390X_REG_PSWM, pswAMode64); err != nil {
			return 0, err
		}
	}
	if err := u.MemMap(CodeBase, CodeSize); err != nil {
		return 0, err
	}
	count := 0
	if _, err := u.HookAdd(uc.HOOK_CODE, func(u uc.Unicorn, addr uint64, size uint32) {
		count++
		hook(u, addr, size)
	}, 1, 0); err != nil {
		return 0, err
	}
	l := loops[abi]
	if err := u.MemWrite(CodeBase, l.code); err != nil {
		return 0, err
	}
	if err := u.RegWrite(t.regs[l.reg], uint64(iters)); err != nil {
		return 0, err
	}
	start()
	err = u.Start(CodeBase, CodeBase+uint64(len(l.code)))
	stop()
	if err != nil || count != 2*iters {
		return count, fmt.Errorf("emu: %s: bare hook loop of %d: %d instructions, %v", abi.Name(), iters, count, err)
	}
	return count, nil
}
