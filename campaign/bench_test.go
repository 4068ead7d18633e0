package campaign

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

// benchProducers are the producers BenchmarkProducers compares: sfconform's
// own encoder (both versions: v3 is what gas-2.47 writes) and every
// toolchain producer registered.
func benchProducers(b *testing.B) []producer.Producer {
	var out []producer.Producer
	for _, n := range producer.Names() {
		if n == "builtin-v2" || n == "builtin-v3" || strings.HasPrefix(n, "gas-") || strings.HasPrefix(n, "llvm-mc-") {
			p, err := producer.New(n)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, p)
		}
	}
	if len(out) < 2 {
		testenv.Missing(b, testenv.Binutils, "no toolchain producer registered to compare with builtin")
	}
	return out
}

// BenchmarkProducers measures programs/s per producer and target, in one
// run so that the toolchains compare with sfconform's own encoder under
// the same load: "produce" generates and makes the images (a toolchain
// producer in batches of defaultBatch, one assembler and one linker run
// each), "pipeline" also checks every program (a toolchain producer's
// against sfconform's own encoding too) while the next batch is made, as
// the run command does.
func BenchmarkProducers(b *testing.B) {
	const batch = 64 // the run command's default
	for _, stage := range []string{"produce", "pipeline"} {
		for _, prod := range benchProducers(b) {
			for _, abi := range target.All {
				if _, err := prod.SFrameVersion(abi); err != nil {
					continue
				}
				b.Run(stage+"/"+prod.Name()+"/"+abi.Name(), func(b *testing.B) {
					benchProducer(b, stage, prod, abi, batch)
				})
			}
		}
	}
}

// benchProducer is one producer's figure on one target: "produce" makes
// the images (a toolchain producer in batches, one assembler and one
// linker run each), "pipeline" also checks every program (a toolchain
// producer's against sfconform's own encoding too) while the next batch
// is made, as the run command does.
func benchProducer(b *testing.B, stage string, prod producer.Producer, abi target.Target, batch int) {
	c, err := harness.New(abi, harness.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cons := consumer.NewBuiltin()
	toolchain := producer.IsToolchain(prod)
	steps := 0
	seeds := make([]int64, b.N)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	plan, err := NewPlan(prod, abi, nil)
	if err != nil {
		b.Fatal(err)
	}
	for progs := range plan.ProduceAhead(seeds, batch, 0, nil) {
		for _, p := range progs {
			if p.Err != nil {
				b.Fatal(p.Err)
			}
			if stage == "produce" {
				continue
			}
			if toolchain {
				ref, err := harness.Reference(p.Img, p.Prog)
				if err != nil {
					b.Fatal(err)
				}
				steps += c.CheckAgainst(p.Img, ref, cons).Steps
			} else {
				steps += c.Check(p.Img, cons).Steps
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "programs/s")
	if steps > 0 {
		b.ReportMetric(float64(steps)/b.Elapsed().Seconds(), "instr/s")
	}
}
