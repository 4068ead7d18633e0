package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// What the provisioned GNU as versions make of the signal trampoline
// (measured; TestGasSignalTrampoline holds each of these to what it
// says). The x86-64 trampoline's CFI is glibc's for __restore_rt: the CFA
// is a DW_CFA_def_cfa_expression on %rsp (DW_OP_breg7 160; DW_OP_deref),
// the RA and %rbp DW_CFA_expression rules on %rsp.
var gasSignalFindings = map[gasCase]string{
	{"gas-2.40", target.X86_64, "signal", false}: "writes no FDE for the trampoline, without a warning",
	{"gas-2.44", target.X86_64, "signal", false}: "skips the trampoline's FDE: \"Warning: skipping SFrame FDE; CFI insn CFI_escape (0x103)\"",
	{"gas-2.47", target.X86_64, "signal", false}: "warns \"no SFrame FDE emitted; .cfi_escape with op (0xf)\" " +
		"and emits the trampoline's FDE anyway, with the signal flag and no FRE at all",
}

func init() {
	for c, why := range gasSignalFindings {
		gasCannot[c] = why
	}
	// --scfi derives the rows from the instructions: a nop, a move and a
	// system call get the entry rules (x86-64 CFA sp+8, RA at CFA-8;
	// AArch64 CFA sp+0, RA in x30) and no signal flag, without a word.
	// No CFI tells it more.
	for _, tc := range []string{"gas-2.44", "gas-2.47"} {
		for _, abi := range []target.Target{target.X86_64, target.AArch64, target.AArch64BE} {
			gasCannot[gasCase{tc, abi, "signal", true}] = "SCFI gives the signal trampoline the entry rules and no signal flag"
			// The trampoline's FDE without rows (no CFI at all): the same.
			gasCannot[gasCase{tc, abi, "signal-empty-fde", true}] = "SCFI gives the signal trampoline the entry rules and no signal flag"
		}
	}
}

// TestGasSignalTrampoline assembles programs with a signal handler with
// every provisioned GNU as that emits SFrame, and holds each to what it
// was measured to do with the trampoline: where it describes it, the rows
// are gen's and (SFrame version 3) the FDE has the signal flag; where it
// cannot (gasSignalFindings), it does exactly what the finding says, so
// that a new release that fixes it shows up here.
func TestGasSignalTrampoline(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no provisioned GNU toolchain to assemble the signal trampoline with: %v", err)
	}
	for _, tc := range all {
		if tc.SFrameVersion == 0 {
			continue
		}
		t.Run(tc.Name+"/"+tc.Target.Name(), func(t *testing.T) {
			t.Parallel()
			p, err := Generate(tc.Target, 1, Options{Patterns: []string{"signal"}})
			if err != nil {
				t.Fatal(err)
			}
			tramp := p.SignalTrampoline()
			if tramp == nil {
				t.Fatal("a program of the signal pattern has no trampoline")
			}
			dir := t.TempDir()
			src := filepath.Join(dir, "p.s")
			if err := os.WriteFile(src, []byte(p.Assembly()), 0o644); err != nil {
				t.Fatal(err)
			}
			obj, exe := filepath.Join(dir, "p.o"), filepath.Join(dir, "p")
			args := append(append([]string(nil), tc.ASFlags...), "--gsframe", "-o", obj, src)
			warn, err := exec.Command(tc.AS, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", tc.AS, strings.Join(args, " "), err, warn)
			}
			largs := append(append([]string(nil), tc.LDFlags...), fmt.Sprintf("-Ttext=0x%x", p.Base), "-e", "_start", "-o", exe, obj)
			if out, err := exec.Command(tc.LD, largs...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.LD, err, out)
			}
			tab, err := sframe.ReadELF(exe)
			if err != nil {
				t.Fatal(err)
			}
			got, ferr := tab.FindFDE(tramp.Addr)
			var fde sframe.FDE
			if ferr == nil {
				fde, err = got.FDE()
				if err != nil {
					t.Fatal(err)
				}
			}
			found := ferr == nil && fde.Start == tramp.Addr
			want := p.FDEs()[len(p.Funcs)-1]
			switch why, cannot := gasSignalFindings[gasCase{tc.Name, tc.Target, "signal", false}]; {
			case !cannot:
				if !found || fde.Signal != (tc.SFrameVersion >= 3) || len(fde.Rows) != len(want.Rows) {
					t.Fatalf("trampoline FDE %+v (found %v), want gen's %+v with the signal flag in version 3 only", fde, found, want)
				}
				for i, w := range want.Rows {
					g := fde.Rows[i]
					if g.Start != w.Start || g.CFA != w.CFA || g.RA != w.RA || g.FP != w.FP {
						t.Errorf("row %d: %s %+v, gen %+v", i, tc.Name, g, w)
					}
				}
			case tc.Name == "gas-2.47":
				if !found || !fde.Signal || len(fde.Rows) != 0 || !strings.Contains(string(warn), "no SFrame FDE emitted; .cfi_escape with op (0xf)") {
					t.Errorf("the finding no longer holds (%s): FDE found %v %+v, warnings:\n%s", why, found, fde, warn)
				}
			default:
				quoted := "skipping SFrame FDE; CFI insn CFI_escape (0x103)"
				if found || (tc.Name == "gas-2.44") != strings.Contains(string(warn), quoted) {
					t.Errorf("the finding no longer holds (%s): FDE found %v, warnings:\n%s", why, found, warn)
				}
			}
		})
	}
}
