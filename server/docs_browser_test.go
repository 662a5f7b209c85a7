package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDocsPageRendersOffline loads /docs in headless Chromium with every request outside the test server
// failing, and waits for the rendered operations and schemas. It skips when no Chromium is installed
// (GUARD_TEST_CHROMIUM or /usr/bin/chromium), except under CI=true.
func TestDocsPageRendersOffline(t *testing.T) {
	chromium := chromiumOrSkip(t)
	ts := newTS(t)
	hs := httptest.NewServer(ts.srv)
	defer hs.Close()

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+"/docs")); err != nil {
		t.Fatalf("starting Chromium and loading /docs: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
	defer tcancel()
	if _, err := chromedp.Run(tctx, chromedp.Poll[chromedp.Void](`!!document.getElementById('schema-EvaluationResult')`,
		chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("rendering /docs: %v", err)
	}
	ops, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.querySelectorAll('details.op .m').length`))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('main').innerText`))
	if err != nil {
		t.Fatal(err)
	}
	resources, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').map(e => e.name)`))
	if err != nil {
		t.Fatal(err)
	}
	if ops < 20 || !strings.Contains(text, "/api/v1/evaluation") || !strings.Contains(text, "/api/v1/controls/{control_id}/versions/{version}/restore") {
		t.Fatalf("rendered %d operations: %.300s", ops, text)
	}
	var outside []string
	for _, r := range resources {
		if !strings.HasPrefix(r, hs.URL) {
			outside = append(outside, r)
		}
	}
	if len(outside) > 0 || len(resources) == 0 {
		t.Fatalf("the page requested outside resources: %v", outside)
	}
}
