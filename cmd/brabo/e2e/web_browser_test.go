package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browser starts Debian's chromium headless with a fresh profile, as the
// machine's notes say it must be started here (no background networking:
// the network is closed). Without chromium the test is skipped, unless
// BRABO_REQUIRE_BROWSER is set (.ci/run sets it, so CI never skips).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("BRABO_REQUIRE_BROWSER") != "" {
			t.Fatal("chromium is not installed (apt-get install -y chromium), and BRABO_REQUIRE_BROWSER is set")
		}
		t.Skip("chromium is not installed; .ci/run installs it (BRABO_REQUIRE_BROWSER fails this)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1100, 900),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// No timeout on the first call's context: it bounds the browser's life.
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// run runs browser actions, each step bounded so a missing element fails
// the test with its name instead of hanging it.
func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(step, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one browser action that returns a value, bounded like do.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(step, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// css is a CSS selector (a bare string would be a DOM text search).
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// text is the rendered text of the first element the selector finds.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return get(t, ctx, "text of "+sel, chromedp.Text(css(sel)))
}

// webLogin logs in through the login form, as a person would.
func webLogin(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	do(t, ctx, "log in",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), token),
		chromedp.Submit(css("#token")),
		chromedp.WaitVisible(css("#queue")),
	)
}

// formLogin logs in through the login form without a browser and returns
// a client holding the session's cookie (a session is not the token: the
// cookie can only come from a login).
func formLogin(t *testing.T, base, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the login page has no CSRF field:\n%s", page)
	}
	resp, err = client.PostForm(base+"/login", url.Values{"csrf": {string(m[1])}, "token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, _ := url.Parse(base)
	for _, c := range jar.Cookies(u) {
		if c.Name == "brabo_session" {
			return client
		}
	}
	t.Fatalf("logging in with the form set no session cookie (%d)", resp.StatusCode)
	return nil
}

func webLogout(t *testing.T, ctx context.Context) {
	t.Helper()
	do(t, ctx, "log out",
		chromedp.Click(css("form.logout button")),
		chromedp.WaitVisible(css("#token")),
	)
}

// evalBool evaluates a JavaScript expression that must be true.
func evalBool(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if !get(t, ctx, what, chromedp.Evaluate[bool](expr)) {
		t.Fatalf("%s: %s is false", what, expr)
	}
}

// waitJS waits until a JavaScript expression is true.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%s)", what, expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves a full-page PNG under the test's temp dir, and under
// docs/ too when BRABO_UPDATE_SCREENSHOTS is set (how the README's picture
// is made).
func screenshot(t *testing.T, ctx context.Context, dir, name string) string {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	if len(png) < 1000 {
		t.Fatalf("screenshot %s is %d bytes", name, len(png))
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("BRABO_UPDATE_SCREENSHOTS") != "" {
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// tabTo presses Tab until the focused element matches the selector, as a
// keyboard user would, and fails after max presses.
func tabTo(t *testing.T, ctx context.Context, selector string, max int) {
	t.Helper()
	for i := 0; i < max; i++ {
		here := get(t, ctx, "focus check", chromedp.Evaluate[bool](fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, selector)))
		if here {
			return
		}
		do(t, ctx, "press Tab", chromedp.KeyEvent(kb.Tab))
	}
	at, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : ""`))
	t.Fatalf("%d Tab presses did not reach %s; focus is on %s", max, selector, strings.TrimSpace(at))
}
