package conformance_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/corpus"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/target"
)

var _ = Describe("the Conform matcher", Label("matcher"), func() {
	It("reports the PC, the instruction, the row and both backtraces, and saves a replayable case", func() {
		GinkgoT().Setenv("SFCONFORM_FAILURES", GinkgoT().TempDir())
		abi := target.X86_64
		img, prog, err := campaign.Produce(producer.Builtin{Version: 3}, abi, 9, gen.Options{})
		Expect(err).NotTo(HaveOccurred())
		fdes := prog.FDEs()
		for i := range fdes {
			if fdes[i].Start == prog.Funcs[1].Addr {
				fdes[i].Rows[0].CFA.Offset += target.WordSize
			}
		}
		bad, err := producer.BuiltinFrom(prog, 3, fdes)
		Expect(err).NotTo(HaveOccurred())
		res := checker(abi).Check(bad, consumer.NewBuiltin())
		r := &Run{img: bad, prog: prog, seed: 9, cons: "builtin", res: res}

		m := Conform()
		ok, err := m.Match(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		msg := m.FailureMessage(r)
		f := res.Failures[0]
		Expect(msg).To(ContainSubstring("seed 9"))
		Expect(msg).To(ContainSubstring(f.Insn))
		Expect(msg).To(ContainSubstring("row: function 0x"))
		Expect(msg).To(ContainSubstring("WRONG"))
		Expect(msg).To(ContainSubstring("expected pc="))
		Expect(msg).To(ContainSubstring("got      pc="))
		Expect(r.saved).To(HaveSuffix(".json"))
		c, err := corpus.Load(r.saved)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Step).To(Equal(f.Step))

		// The correct table matches.
		good := checker(abi).Check(img, consumer.NewBuiltin())
		Expect(&Run{img: img, prog: prog, seed: 9, cons: "builtin", res: good}).To(Conform())
	})
})
