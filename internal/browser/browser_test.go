package browser

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The checks can fail: a page that logs an error, throws, asks the
// network for a file and hides one element below the fold and another
// with its style gets each of those reported; a plain page gets none.
func TestRenderReportsWhatIsWrong(t *testing.T) {
	t.Parallel()
	chromium := Need(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><title>bad</title>
<link rel="stylesheet" href="http://192.0.2.1/style.css"></head><body>
<p id="top" style="background:#0f0">top</p>
<p id="hidden" style="display:none">hidden</p>
<div style="height:5000px"></div><p id="far">far below</p>
<script>console.error("boom"); throw new Error("thrown");</script>
</body></html>`), 0o644)
	p, err := Render(context.Background(), chromium, "file://"+bad, Options{Visible: []string{"top", "hidden", "far", "nonesuch"}})
	if err != nil {
		t.Fatal(err)
	}
	errs := strings.Join(p.Errors, "\n")
	if !strings.Contains(errs, "boom") || !strings.Contains(errs, "thrown") {
		t.Errorf("errors %q miss the console error or the exception", errs)
	}
	if len(p.Requests) == 0 || !strings.Contains(p.Requests[0], "192.0.2.1") {
		t.Errorf("requests %q miss the stylesheet's", p.Requests)
	}
	want := map[string]string{"top": "visible", "hidden": "hidden by its style", "far": "outside the viewport", "nonesuch": "no element"}
	for id, w := range want {
		if !strings.HasPrefix(p.Visible[id], w) {
			t.Errorf("#%s: %q, want %q", id, p.Visible[id], w)
		}
	}
	img, err := png.Decode(bytes.NewReader(p.Screenshot))
	if err != nil || img.Bounds().Dx() != 1280 {
		t.Fatalf("screenshot: %v, %v", err, img.Bounds())
	}

	good := filepath.Join(dir, "good.html")
	os.WriteFile(good, []byte(`<!DOCTYPE html><html><head><title>good</title></head><body><p id="x">fine</p></body></html>`), 0o644)
	p, err = Render(context.Background(), chromium, "file://"+good, Options{Visible: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 || len(p.Requests) > 0 || p.Visible["x"] != "visible" {
		t.Errorf("a plain page: errors %q, requests %q, visible %q", p.Errors, p.Requests, p.Visible)
	}
}
