package dumper

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/sfconform/sfconform/sframe"
)

// The file reads back with debug/elf in both byte orders: the machine
// of the ABI, an executable, and .sframe at its address with its bytes.
func TestELF(t *testing.T) {
	t.Parallel()
	section := []byte{0xde, 0xe2, 3, 5, 4, 0, 0, 0, 1, 2, 3}
	for abi, machine := range map[sframe.ABI]elf.Machine{
		sframe.ABIAMD64LE: elf.EM_X86_64, sframe.ABIAArch64LE: elf.EM_AARCH64,
		sframe.ABIAArch64BE: elf.EM_AARCH64, sframe.ABIS390XBE: elf.EM_S390,
	} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			b, err := ELF(abi, order, section, 0x4020b0)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%v %v: %v", abi, order, err)
			}
			if f.Machine != machine || f.ByteOrder != order || f.Type != elf.ET_EXEC || f.Class != elf.ELFCLASS64 {
				t.Errorf("%v %v: machine %v order %v type %v class %v", abi, order, f.Machine, f.ByteOrder, f.Type, f.Class)
			}
			s := f.Section(".sframe")
			if s == nil {
				t.Fatalf("%v %v: no .sframe", abi, order)
			}
			data, err := s.Data()
			if err != nil || !bytes.Equal(data, section) || s.Addr != 0x4020b0 || s.Type != shtGNUSFrame || s.Flags != elf.SHF_ALLOC {
				t.Errorf("%v %v: .sframe at %#x type %v flags %v, % x, %v", abi, order, s.Addr, s.Type, s.Flags, data, err)
			}
		}
	}
	if _, err := ELF(sframe.ABI(9), binary.LittleEndian, section, 0); err == nil {
		t.Error("an ELF file for ABI 9")
	}
}
