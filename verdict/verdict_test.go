package verdict

import "testing"

func TestText(t *testing.T) {
	t.Parallel()
	for v := OK; int(v) < Count; v++ {
		b, err := v.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var w Verdict
		if err := w.UnmarshalText(b); err != nil || w != v {
			t.Errorf("%v round trips to %v, %v", v, w, err)
		}
	}
	var w Verdict
	if w.UnmarshalText([]byte("MAYBE")) == nil {
		t.Error("unknown verdict accepted")
	}
	if Invalid.String() != "INVALID" || Verdict(200).String() != "Verdict(200)" {
		t.Error("names")
	}
}
