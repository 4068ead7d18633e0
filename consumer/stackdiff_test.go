package consumer

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/machine"
)

// stackWalk is a run of stack copies as a program makes them: the copy
// moves with the SP, a few words change from one step to the next, now
// and then many.
func stackWalk(rnd *rand.Rand, n int) []Step {
	var steps []Step
	addr := uint64(0x7000_0f00)
	mem := make([]byte, 0x1000)
	for i := range mem {
		mem[i] = byte(rnd.Uint32())
	}
	const top = 0x7000_1000
	for i := 0; i < n; i++ {
		switch rnd.IntN(6) {
		case 0:
			addr -= 8 * uint64(rnd.IntN(4))
		case 1:
			addr += 8 * uint64(rnd.IntN(4))
		case 2:
			for k := rnd.IntN(300); k > 0; k-- {
				mem[rnd.IntN(len(mem))] = byte(rnd.Uint32())
			}
		case 3:
			addr = top - uint64(rnd.IntN(len(mem)))
		}
		addr = min(max(addr, top-uint64(len(mem))), top)
		for k := rnd.IntN(3); k > 0; k-- {
			mem[rnd.IntN(len(mem))] = byte(rnd.Uint32())
		}
		snap := &machine.Snapshot{StackAddr: addr, Stack: append([]byte(nil), mem[len(mem)-int(top-addr):]...)}
		snap.Regs.PC = 0x1000 + uint64(i)
		snap.Regs.Set(7, addr)
		steps = append(steps, Step{Index: i, Regs: &snap.Regs, Mem: snap, Snapshot: snap})
	}
	return steps
}

// Version 4's stack copies, sent as differences from the copy the
// consumer holds, read back as the copies themselves, across batches,
// and much shorter than whole copies.
func TestStackDiffRoundTrip(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(4, 4))
	steps := stackWalk(rnd, 600)
	var sent stackCopy
	var read stackCopy
	var diffs, whole, diffBytes, wholeBytes int
	for b := 0; b < len(steps); b += 37 {
		batch := steps[b:min(b+37, len(steps))]
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		if err := writeSteps(w, batch, &sent); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")[1:]
		for i, l := range lines {
			want := batch[i].Snapshot
			if b == 0 && i == 0 && strings.Contains(l, "stackdiff") {
				t.Error("the first step is sent as differences from nothing")
			}
			if strings.Contains(l, " stackdiff=") {
				diffs++
				diffBytes += len(l)
			} else {
				whole++
				wholeBytes += len(l)
			}
			got, err := parseStep(l, false, &read)
			if err != nil {
				t.Fatalf("step %d: %v\n%s", batch[i].Index, err, l)
			}
			if got.Snapshot.StackAddr != want.StackAddr || !bytes.Equal(got.Snapshot.Stack, want.Stack) {
				t.Fatalf("step %d: read back [%#x, +%d), sent [%#x, +%d)\n%s", batch[i].Index,
					got.Snapshot.StackAddr, len(got.Snapshot.Stack), want.StackAddr, len(want.Stack), l)
			}
		}
	}
	// The first step has nothing to differ from; the others go whole
	// only when most of the copy changed (a jump of the SP, many
	// writes: 1 step in 6 changes a lot here).
	if whole < 1 || diffs < 10*whole {
		t.Errorf("%d steps sent whole, %d as differences", whole, diffs)
	}
	t.Logf("%d steps as differences, %d bytes a line; %d whole, %d bytes", diffs, diffBytes/max(diffs, 1), whole, wholeBytes/max(whole, 1))
	if diffs == 0 || diffBytes/diffs > wholeBytes/whole/4 {
		t.Errorf("differences are not much shorter than whole copies")
	}
	// A consumer that speaks version 3 gets whole copies only.
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	if err := writeSteps(w, steps[:50], nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "stackdiff") {
		t.Error("stackdiff= without a held copy")
	}
}

// What a stackdiff= may not do.
func TestStackDiffRejects(t *testing.T) {
	t.Parallel()
	held := stackCopy{valid: true, addr: 0x100, b: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	for _, c := range []struct{ v, want string }{
		{"100:8", ""},
		{"fc:c:0:0a0b0c0d", ""},
		{"fc:c:0:0a0b0c", "neither in the copy held nor in a patch"},
		{"100:c:8:01020304", ""},
		{"100:c:8:010203", "neither in the copy held nor in a patch"},
		{"100:8:4:01:2:02", "overlaps the one before"},
		{"100:8:6:010203", "ends past LEN"},
		{"100:8:2:0g", "is not OFF:HEX"},
		{"100:8:2:", "is not OFF:HEX"},
		{"100:8:2", "ADDR:LEN followed by OFF:HEX pairs"},
		{"100", "ADDR:LEN followed by OFF:HEX pairs"},
	} {
		h := held
		_, got, err := applyStackDiff(&h, c.v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v (%x), want an error saying %q", c.v, err, got, c.want)
		}
	}
	if _, b, err := applyStackDiff(&stackCopy{valid: true, addr: 0x100, b: []byte{1, 2, 3, 4}}, "fe:6:0:aa:1:bb:5:cc"); err != nil || !bytes.Equal(b, []byte{0xaa, 0xbb, 1, 2, 3, 0xcc}) {
		t.Errorf("patched copy %x, %v", b, err)
	}
	if _, _, err := applyStackDiff(&stackCopy{}, "100:0"); err == nil {
		t.Error("stackdiff= with no copy held")
	}
	if _, err := parseStep("step 1 pc=1 7=100 stackdiff=100:0", false, nil); err == nil {
		t.Error("stackdiff= in a version 3 session")
	}
}
