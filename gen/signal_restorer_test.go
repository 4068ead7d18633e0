package gen

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// TestSignalRestorerBytes: the code a handler returns to is the real
// restorer's, byte for byte, so an unwinder that recognises a signal
// trampoline by its instructions (glibc's uw-sigframe.h, libgcc's
// linux-unwind.h) recognises ours: glibc's x86-64 __restore_rt (movq
// $15,%rax; syscall, sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c), the
// AArch64 vDSO's __kernel_rt_sigreturn (mov x8, #139; svc #0) and the
// s390x vDSO's (svc 173).
func TestSignalRestorerBytes(t *testing.T) {
	t.Parallel()
	a64 := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0xd2801168), 0xd4000001)
	want := map[target.Target][]byte{
		target.X86_64:    {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
		target.AArch64:   a64,
		target.AArch64BE: a64, // instructions are little-endian in both byte orders
		target.S390X:     {0x0a, 0xad},
	}
	for _, abi := range target.All {
		p, err := Generate(abi, 1, Options{Patterns: []string{"signal"}})
		if err != nil {
			t.Fatal(err)
		}
		sigs := p.Signals()
		if len(sigs) == 0 {
			t.Fatalf("%s: a program of the signal pattern delivers no signal", abi.Name())
		}
		code := p.CodeAt(sigs[0].Restorer)
		if w := want[abi]; len(code) < len(w) || !bytes.Equal(code[:len(w)], w) {
			t.Errorf("%s: the handler returns to % x, want % x", abi.Name(), code[:min(len(code), len(w))], w)
		}
	}
}
