package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// pipelineProgramsPinned are the hashes of BenchmarkPipeline's first
// pinnedPrograms images per target (code, section and paths). They were
// f53b72c's, whose benchmark the speed figures compare with, until three
// corrections changed bytes without changing the mix (same patterns, no
// idle functions): the x86-64 signal restorer is the kernel's
// __restore_rt sequence, PLT-like stubs run every instruction of their
// block, and a function may be followed by a few bytes of gap or padding
// (and signals land at a function's bounds). A change that makes the
// programs heavier belongs in a benchmark of its own
// (BenchmarkPipelineDefaultMix), not in this one's programs.
var pipelineProgramsPinned = map[string]string{
	"x86-64":     "b6bc1c0cf80597b5465e919b37d7af6c38ee386cb3cc4f312c4e0c80b34561ca",
	"aarch64":    "22501f15d6b471fdc5a4a15097174492504fe1d4352d4b20a9026184129f6178",
	"aarch64_be": "f9aa1e1a80a95312dd0c1c7a1fb3f8f329f6f5d37d6c7481d068e886c331b168",
	"s390x":      "939c87d8ebf82a07b6c6384058361d0a136b6988df9ff9782c32abfb711b1a68",
}

const pinnedPrograms = 64

// TestPipelineProgramsPinned checks that BenchmarkPipeline makes the
// programs it made at commit f53b72c, byte for byte.
func TestPipelineProgramsPinned(t *testing.T) {
	for _, abi := range target.All {
		h := sha256.New()
		for seed := range int64(pinnedPrograms) {
			img, _, err := Produce(producer.Builtin{Version: 3}, abi, seed, pipelineOptions)
			if err != nil {
				t.Fatalf("%s seed %d: %v", abi.Name(), seed, err)
			}
			fmt.Fprintf(h, "%d %d %v\n", len(img.Code), len(img.SFrame), img.Paths)
			h.Write(img.Code)
			h.Write(img.SFrame)
		}
		if got, want := hex.EncodeToString(h.Sum(nil)), pipelineProgramsPinned[abi.Name()]; got != want {
			t.Errorf("%s: BenchmarkPipeline's first %d programs hash to %s, pinned %s", abi.Name(), pinnedPrograms, got, want)
		}
	}
}
