// Package browser renders a page in a real browser, headless Chromium, and
// reports what a reader would meet: a screenshot, the console's errors,
// the requests that left the machine, and whether an element is visible.
//
// It speaks the Chrome DevTools Protocol
// (https://chromedevtools.github.io/devtools-protocol/) over the pipe
// Chromium opens with --remote-debugging-pipe: JSON messages separated by
// a NUL byte, commands on file descriptor 3, answers and events on 4. No
// WebSocket, no third-party module: the few commands it sends are
// Target.createTarget and Target.attachToTarget (flattened sessions),
// Runtime/Log/Network/Page.enable, Page.navigate, Runtime.evaluate,
// Page.captureScreenshot and Browser.close.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
)

// Chromium finds the browser: $SFCONFORM_CHROMIUM, else chromium on PATH.
func Chromium() (string, error) {
	if p := os.Getenv("SFCONFORM_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (Debian package chromium)")
}

// Need returns the browser, or ends the test as internal/testenv says:
// a skip, or a failure once setup has run.
func Need(t testing.TB) string {
	t.Helper()
	p, err := Chromium()
	if err != nil {
		testenv.Missing(t, testenv.Browser, "%v", err)
	}
	return p
}

// Page is what rendering a page found.
type Page struct {
	Screenshot []byte // PNG of the viewport
	// Errors are the console's errors and warnings, uncaught exceptions,
	// and the browser's own log entries of level error (a resource that
	// failed to load).
	Errors []string
	// Requests are the URLs the page asked for that are not the page's
	// own file:// or data: URLs.
	Requests []string
	// Visible says, per element id asked about, "visible" or why not.
	Visible map[string]string
}

// Options shape a rendering.
type Options struct {
	Width, Height int           // the viewport; 1280 x 900 when zero
	Timeout       time.Duration // the whole rendering; 60 s when zero
	// Visible are element ids to check for visibility after the load.
	Visible []string
}

// Render loads url in a fresh headless Chromium and reports on it.
func Render(ctx context.Context, chromium, url string, opt Options) (*Page, error) {
	if opt.Width == 0 {
		opt.Width, opt.Height = 1280, 900
	}
	if opt.Timeout == 0 {
		opt.Timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	profile, err := os.MkdirTemp("", "sfconform-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,%d", opt.Width, opt.Height), "--user-data-dir="+profile, "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fds 3 and 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	toBrowserR.Close()
	fromBrowserW.Close()
	c := &conn{w: toBrowserW, pending: map[int]chan reply{}}
	go c.read(fromBrowserR)
	defer func() {
		c.call(ctx, "", "Browser.close", nil, nil)
		toBrowserW.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		fromBrowserR.Close()
	}()
	page, err := render(ctx, c, url, opt)
	if err != nil {
		return nil, fmt.Errorf("chromium: %w (its stderr: %s)", err, lastLines(stderr.String(), 5))
	}
	return page, nil
}

func render(ctx context.Context, c *conn, url string, opt Options) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return nil, err
	}
	s := attached.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		if err := c.call(ctx, s, m, nil, nil); err != nil {
			return nil, err
		}
	}
	if err := c.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": opt.Width, "height": opt.Height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	page := &Page{Visible: map[string]string{}}
	var mu sync.Mutex
	loaded := make(chan struct{})
	var once sync.Once
	c.setOnEvent(func(e event) {
		if e.SessionID != s {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch e.Method {
		case "Page.loadEventFired":
			once.Do(func() { close(loaded) })
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
				Args []struct {
					Value       any    `json:"value"`
					Description string `json:"description"`
				} `json:"args"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				var parts []string
				for _, a := range p.Args {
					parts = append(parts, fmt.Sprint(a.Value)+a.Description)
				}
				page.Errors = append(page.Errors, "console."+p.Type+": "+strings.Join(parts, " "))
			}
		case "Runtime.exceptionThrown":
			page.Errors = append(page.Errors, "exception: "+string(e.Params))
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level, Text, URL string
				} `json:"entry"`
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				page.Errors = append(page.Errors, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
			}
		case "Network.requestWillBeSent":
			var p struct {
				Request struct{ URL string } `json:"request"`
			}
			json.Unmarshal(e.Params, &p)
			if u := p.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
				page.Requests = append(page.Requests, u)
			}
		}
	})
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigating to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-loaded:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s did not finish loading: %w", url, ctx.Err())
	}
	for _, id := range opt.Visible {
		var res struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
			ExceptionDetails json.RawMessage `json:"exceptionDetails"`
		}
		if err := c.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": visibleJS(id), "returnByValue": true}, &res); err != nil {
			return nil, err
		}
		if res.ExceptionDetails != nil {
			return nil, fmt.Errorf("checking #%s: %s", id, res.ExceptionDetails)
		}
		page.Visible[id] = res.Result.Value
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := c.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	c.setOnEvent(nil)
	mu.Lock()
	defer mu.Unlock()
	out := *page
	out.Errors, out.Requests = slices.Clone(page.Errors), slices.Clone(page.Requests)
	out.Screenshot = png
	return &out, nil
}

// visibleJS says whether the element with the id is visible in the
// viewport as the page stands (after the fragment scrolled to it):
// displayed, with a box, inside the viewport, and the topmost element at
// its centre (nothing covers it).
func visibleJS(id string) string {
	q, _ := json.Marshal(id)
	return `(() => {
  const e = document.getElementById(` + string(q) + `);
  if (!e) return "no element with this id";
  const st = getComputedStyle(e);
  if (st.display === "none" || st.visibility !== "visible" || Number(st.opacity) === 0) return "hidden by its style";
  const r = e.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return "an empty box";
  if (r.bottom <= 0 || r.top >= innerHeight || r.right <= 0 || r.left >= innerWidth)
    return "outside the viewport: top " + r.top + ", bottom " + r.bottom + ", viewport height " + innerHeight;
  const x = (Math.max(r.left, 0) + Math.min(r.right, innerWidth)) / 2, y = (Math.max(r.top, 0) + Math.min(r.bottom, innerHeight)) / 2;
  const t = document.elementFromPoint(x, y);
  if (!t || !(t === e || e.contains(t))) return "covered by " + (t ? t.tagName : "nothing");
  return "visible";
})()`
}

type reply struct {
	Result json.RawMessage
	Err    error
}

type event struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

// conn is one DevTools pipe.
type conn struct {
	w       *os.File
	mu      sync.Mutex
	nextID  int
	pending map[int]chan reply
	onEvent func(event)
	readErr error
}

func (c *conn) read(r *os.File) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			c.mu.Lock()
			c.readErr = fmt.Errorf("the DevTools pipe closed: %w", err)
			for id, ch := range c.pending {
				ch <- reply{Err: c.readErr}
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		msg = msg[:len(msg)-1]
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
			event
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			continue
		}
		if m.ID == 0 {
			c.mu.Lock()
			f := c.onEvent
			c.mu.Unlock()
			if f != nil {
				f(m.event)
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if m.Error != nil {
			ch <- reply{Err: fmt.Errorf("DevTools error %d: %s", m.Error.Code, m.Error.Message)}
		} else {
			ch <- reply{Result: m.Result}
		}
	}
}

func (c *conn) setOnEvent(f func(event)) {
	c.mu.Lock()
	c.onEvent = f
	c.mu.Unlock()
}

// call sends a command (on a session when session is set) and decodes its
// result into out.
func (c *conn) call(ctx context.Context, session, method string, params any, out any) error {
	c.mu.Lock()
	if c.readErr != nil {
		c.mu.Unlock()
		return c.readErr
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return fmt.Errorf("%s: %w", method, r.Err)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
