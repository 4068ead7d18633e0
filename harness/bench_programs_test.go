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
// pinnedPrograms images per target (code, section and paths): the values
// of commit f53b72c, whose benchmark the speed figures compare with. A
// change of generation or encoding that moves them belongs in a benchmark
// of its own, not in this one's programs.
var pipelineProgramsPinned = map[string]string{
	"x86-64":     "ecde1615a2d9cea17a6dd3d0691b408605de532192fa4cfb91a9dbfca6a7ca2a",
	"aarch64":    "f5e92836a90c6282ccd37a9cdb91155bd17ea18f47192b991b0a13b906d23955",
	"aarch64_be": "49e5ef3b5ed18405e31d2ece4a74e9cc976be0eb1168ca441447f04525436115",
	"s390x":      "01ef6d35d85e5d29355a4fd9c0b69344ee8fe6e095feb124c510f573502abf2d",
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
