package check_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/check"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// writeELF writes img as a linked executable: its code as a PT_LOAD R+X
// segment and section .text, its SFrame section as .sframe in a read-only
// segment of its own, its functions in .symtab. No .eh_frame: the static
// differential has nothing to compare against, so structure and emulation
// judge the file.
func writeELF(t *testing.T, img *image.Image, path string) {
	t.Helper()
	var bo binary.ByteOrder = binary.LittleEndian
	var mach elf.Machine
	switch img.Target {
	case target.X86_64:
		mach = elf.EM_X86_64
	case target.AArch64:
		mach = elf.EM_AARCH64
	case target.AArch64BE:
		mach, bo = elf.EM_AARCH64, binary.BigEndian
	case target.S390X:
		mach, bo = elf.EM_S390, binary.BigEndian
	}
	const ehsz, phsz, shsz = 64, 56, 64
	// File layout: header, 2 program headers, code at 0x1000, section at
	// the next page, string and symbol tables, section headers.
	codeOff := uint64(0x1000)
	sfOff := (codeOff + uint64(len(img.Code)) + 0xfff) &^ 0xfff
	var shstr, str bytes.Buffer
	shstr.WriteByte(0)
	str.WriteByte(0)
	name := func(b *bytes.Buffer, s string) uint32 {
		n := uint32(b.Len())
		b.WriteString(s)
		b.WriteByte(0)
		return n
	}
	var syms bytes.Buffer
	syms.Write(make([]byte, 24)) // the null symbol
	for _, s := range img.Symbols {
		if s.IsStack() || s.Kind == image.KindSignalRestorer {
			continue // a stack is no code; a restorer is never called
		}
		var e [24]byte
		bo.PutUint32(e[0:], name(&str, s.Name))
		e[4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
		bo.PutUint16(e[6:], 1) // .text
		bo.PutUint64(e[8:], s.Addr)
		bo.PutUint64(e[16:], uint64(s.Size))
		syms.Write(e[:])
	}
	symOff := sfOff + uint64(len(img.SFrame))
	symOff = (symOff + 7) &^ 7
	strOff := symOff + uint64(syms.Len())
	type sec struct {
		name              string
		typ               elf.SectionType
		flags             elf.SectionFlag
		addr, off, size   uint64
		link, info, align uint32
		entsize           uint64
	}
	secs := []sec{
		{".text", elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_EXECINSTR, img.CodeAddr, codeOff, uint64(len(img.Code)), 0, 0, 16, 0},
		{".sframe", elf.SectionType(0x6ffffff4), elf.SHF_ALLOC, img.SFrameAddr, sfOff, uint64(len(img.SFrame)), 0, 0, 8, 0},
		{".symtab", elf.SHT_SYMTAB, 0, 0, symOff, uint64(syms.Len()), 4, 1, 8, 24},
		{".strtab", elf.SHT_STRTAB, 0, 0, strOff, uint64(str.Len()), 0, 0, 1, 0},
	}
	names := make([]uint32, len(secs))
	for i, s := range secs {
		names[i] = name(&shstr, s.name)
	}
	shstrName := name(&shstr, ".shstrtab")
	shstrOff := strOff + uint64(str.Len())
	shOff := (shstrOff + uint64(shstr.Len()) + 7) &^ 7
	out := make([]byte, shOff+uint64(len(secs)+2)*shsz)
	copy(out, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	if bo == binary.BigEndian {
		out[5] = 2
	}
	bo.PutUint16(out[16:], uint16(elf.ET_EXEC))
	bo.PutUint16(out[18:], uint16(mach))
	bo.PutUint32(out[20:], 1)
	bo.PutUint64(out[24:], img.Entry)
	bo.PutUint64(out[32:], ehsz)
	bo.PutUint64(out[40:], shOff)
	bo.PutUint16(out[52:], ehsz)
	bo.PutUint16(out[54:], phsz)
	bo.PutUint16(out[56:], 2)
	bo.PutUint16(out[58:], shsz)
	bo.PutUint16(out[60:], uint16(len(secs)+2))
	bo.PutUint16(out[62:], uint16(len(secs)+1))
	ph := func(i int, flags elf.ProgFlag, off, addr, size uint64) {
		p := out[ehsz+i*phsz:]
		bo.PutUint32(p[0:], uint32(elf.PT_LOAD))
		bo.PutUint32(p[4:], uint32(flags))
		bo.PutUint64(p[8:], off)
		bo.PutUint64(p[16:], addr)
		bo.PutUint64(p[24:], addr)
		bo.PutUint64(p[32:], size)
		bo.PutUint64(p[40:], size)
		bo.PutUint64(p[48:], 0x1000)
	}
	ph(0, elf.PF_R|elf.PF_X, codeOff, img.CodeAddr, uint64(len(img.Code)))
	ph(1, elf.PF_R, sfOff, img.SFrameAddr, uint64(len(img.SFrame)))
	copy(out[codeOff:], img.Code)
	if img.Target == target.S390X && img.Exit >= img.CodeAddr && img.Exit+2 <= img.CodeAddr+uint64(len(img.Code)) {
		// gen's s390x exit is "svc 0" at img.Exit, where the pipeline's
		// run stops; in a file it is the exit system call, svc 1.
		if at := codeOff + img.Exit - img.CodeAddr; out[at] == 0x0a && out[at+1] == 0 {
			out[at+1] = 1
		}
	}
	copy(out[sfOff:], img.SFrame)
	copy(out[symOff:], syms.Bytes())
	copy(out[strOff:], str.Bytes())
	copy(out[shstrOff:], shstr.Bytes())
	for i, s := range append(secs, sec{".shstrtab", elf.SHT_STRTAB, 0, 0, shstrOff, uint64(shstr.Len()), 0, 0, 1, 0}) {
		h := out[shOff+uint64(i+1)*shsz:]
		n := shstrName
		if i < len(names) {
			n = names[i]
		}
		bo.PutUint32(h[0:], n)
		bo.PutUint32(h[4:], uint32(s.typ))
		bo.PutUint64(h[8:], uint64(s.flags))
		bo.PutUint64(h[16:], s.addr)
		bo.PutUint64(h[24:], s.off)
		bo.PutUint64(h[32:], s.size)
		bo.PutUint32(h[40:], s.link)
		bo.PutUint32(h[44:], s.info)
		bo.PutUint64(h[48:], uint64(s.align))
		bo.PutUint64(h[56:], s.entsize)
	}
	if err := os.WriteFile(path, out, 0o755); err != nil {
		t.Fatal(err)
	}
}

// genImages generates programs of every target (seeds 1-3, the patterns
// of SFrame v3 but those below) and has them built by builtin-v3 and
// gas-2.47; images with code outside .text (far or low segments) are left
// out, as check runs a file whose segments lie within 16 MiB.
//
// Left out, since what makes them right is outside the ELF file: a fresh
// stack the oracle knows from a stack symbol (new-stack: a file records no
// such thing), signals (delivered by the pipeline's emulator, which check
// does not do) and far code.
func genImages(t *testing.T) map[string]*image.Image {
	out := map[string]*image.Image{}
	for _, prod := range []string{"builtin-v3", "gas-2.47"} {
		p, err := producer.New(prod)
		if err != nil {
			testenv.Missing(t, testenv.Binutils, "producer %s: %v", prod, err)
			continue
		}
		for _, tg := range target.All {
			for seed := int64(1); seed <= 3; seed++ {
				var pats []string
				for _, name := range gen.Patterns(tg) {
					if name != "new-stack" && name != "far-code" && !strings.HasPrefix(name, "signal") {
						pats = append(pats, name)
					}
				}
				prog, err := gen.Generate(tg, seed, gen.Options{SFrameVersion: 3, Patterns: pats})
				if err != nil {
					t.Fatalf("%s seed %d: %v", tg.Name(), seed, err)
				}
				img, err := p.Produce(prog)
				if err != nil {
					t.Fatalf("%s %s seed %d: %v", prod, tg.Name(), seed, err)
				}
				if len(img.Segments) > 0 {
					continue
				}
				out[filepath.Join(prod, tg.Name(), string(rune('0'+seed)))] = img
			}
		}
	}
	return out
}

// TestGenPrograms checks gen's programs written as ELF files: a clean
// program is clean (exit 0), and the same file with its .sframe corrupted
// is not: exit 2 or findings naming a byte offset.
func TestGenPrograms(t *testing.T) {
	dir := t.TempDir()
	for name, img := range genImages(t) {
		name, img := name, img
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, filepath.Clean(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			writeELF(t, img, path)
			r, err := check.File(path, check.Options{Static: true, Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary.Steps == 0 || r.Summary.Functions == 0 {
				t.Errorf("nothing run: %+v", r.Summary)
			}
			if code := check.ExitCode([]*check.Report{r}); code != 0 || r.Summary.Verdicts["WRONG"] != 0 {
				for _, f := range r.Findings {
					t.Logf("%s %s %s %s: %s", f.Severity, f.Kind, f.Func, f.PC, f.Message)
				}
				t.Errorf("exit %d (%s), verdicts %v, aside %v", code, r.Unusable, r.Summary.Verdicts, r.Summary.Aside)
			}
			// The section's first FDE's start moved by 0x40000: outside
			// the code, over another function, or a wrong row.
			bad := filepath.Join(t.TempDir(), "bad")
			writeELF(t, corrupt(t, img), bad)
			r, err = check.File(bad, check.Options{Static: true, Dynamic: true})
			if err != nil {
				t.Fatal(err)
			}
			code := check.ExitCode([]*check.Report{r})
			withOffset := false
			for _, f := range r.Findings {
				withOffset = withOffset || (f.Severity == check.SevError && f.Offset >= 0 && f.FileOffset > 0)
			}
			for _, f := range r.Findings {
				if f.Severity == check.SevError {
					t.Logf("corrupted: exit %d: %s at section offset %d, file offset %d: %s", code, f.Kind, f.Offset, f.FileOffset, f.Message)
					break
				}
			}
			if code == 0 || (code == 1 && !withOffset) {
				t.Errorf("corrupted .sframe: exit %d (%s), findings with an offset %v, summary %+v", code, r.Unusable, withOffset, r.Summary)
			}
		})
	}
}

// corrupt is img with the function-start field of its section's first
// FDE changed (SFrame v3: the 28-byte header, auxhdr_len at byte 7,
// sfh_fdeoff at byte 20; the FDE starts with its 32-bit start), bit 2 of
// its third byte flipped: a move of 0x40000 (little-endian) or 0x400
// (big-endian).
func corrupt(t *testing.T, img *image.Image) *image.Image {
	out := *img
	out.SFrame = append([]byte(nil), img.SFrame...)
	aux := int(out.SFrame[7])
	off := 28 + aux + int(binary.LittleEndian.Uint32(out.SFrame[20:]))
	if img.Target == target.AArch64BE || img.Target == target.S390X {
		off = 28 + aux + int(binary.BigEndian.Uint32(out.SFrame[20:]))
	}
	if off+4 > len(out.SFrame) {
		t.Fatalf("section of %d bytes, first FDE at %d", len(out.SFrame), off)
	}
	out.SFrame[off+2] ^= 0x04
	return &out
}
