package html

import (
	"bytes"
	"strings"
	"testing"
)

// Values are text: markup in a reproducer's strings is escaped, and the
// failing step's row carries the id the report links to.
func TestRenderEscapesAndMarksTheFailingStep(t *testing.T) {
	t.Parallel()
	r := &Report{
		Title:    `<script>alert("title")</script>`,
		Verdicts: []string{"OK", "WRONG"},
		Matrix:   []Cell{{Target: "x86-64", Producer: "p", Consumer: `exec:<img src=x onerror=alert(1)>`, Status: "failed", Counts: []int{3, 1}, Links: []Link{{Text: "#1", Href: "#failure-0"}}}},
		Failures: []Failure{{
			ID: "failure-0", StepID: "failing-step-0", Title: "t", Verdict: "WRONG", Detail: `a "quoted" <b>detail</b>`,
			Steps:  []Step{{Addr: "0x10", Insn: "push %rbp"}, {Addr: "0x11", Insn: "mov %rsp,%rbp", Failing: true}},
			Frames: []Frame{{Index: 0, Fields: []Field{{Name: "cfa", Expected: "0x8", Got: "0x10", Differs: true}}}},
			Stack:  &Stack{Slots: []Slot{{Addr: "0x8", Value: "0x0", Marks: []Mark{{Text: "CFA of #0", Kind: "cfa"}}}}},
		}},
	}
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", "<img", "<b>detail"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(page, `<tr class="failing" id="failing-step-0"><td class="mono"> 0x11</td><td class="mono">mov %rsp,%rbp</td>`) {
		t.Errorf("the failing step's row is not marked:\n%s", page)
	}
	if strings.Count(page, `id="failing-step-0"`) != 1 || !strings.Contains(page, `<td class="mono diff">0x8</td>`) ||
		!strings.Contains(page, `<span class="mark cfa">CFA of #0</span>`) || !strings.Contains(page, `<td class="n">1</td>`) {
		t.Errorf("the page misses a part:\n%s", page)
	}
}
