package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// attackPage tries to register an agent named by the page's query on the guard server at the given
// base URL, the ways a page can: a no-cors fetch with a text/plain body (a "simple" request, sent without
// a preflight), a form post, and a cors fetch with application/json (which needs a preflight the server
// never grants). It sets window.attackDone once every attempt has settled; window.attackStatus is the
// status of the cors fetch when the browser let the page read it.
const attackPage = `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" target="sink" enctype="text/plain"></form>
<script>
(async () => {
  const q = new URLSearchParams(location.search);
  const base = q.get('base'), name = q.get('name');
  const url = base + '/api/v1/agents/initAgent';
  const body = JSON.stringify({agent: {agent_name: name}, steps: []});
  const tries = [
    fetch(url, {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: body}),
    fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: body})
      .then(r => { window.attackStatus = r.status; }),
  ];
  // A text/plain form sends name=value: the input's name carries the JSON up to a string that absorbs "=".
  const f = document.getElementById('f');
  f.action = url;
  const i = document.createElement('input');
  i.name = body.slice(0, -1) + ',"x":"';
  i.value = '"}';
  f.appendChild(i);
  const framed = new Promise(res => document.querySelector('iframe').addEventListener('load', res, {once: true}));
  f.submit();
  tries.push(framed);
  await Promise.allSettled(tries);
  window.attackDone = true;
})();
</script></body></html>`

// TestBrowserPageOnAnotherOriginCannotWrite opens, in headless Chromium, a page that tries to register an
// agent on a guard server listening on loopback with authentication off. Served from another origin
// (localhost:Q against the server's 127.0.0.1:P) and from a rebound name (rebind.test resolving to
// 127.0.0.1, DNS rebinding), its writes reach the server and are refused, and no agent is created;
// served from the server's own origin, the same page does register its agent, so the refusals come from
// the server's checks, not from a page that fails to send. It skips when no Chromium is installed
// (GUARD_TEST_CHROMIUM or /usr/bin/chromium), except under CI=true.
func TestBrowserPageOnAnotherOriginCannotWrite(t *testing.T) {
	chromium := chromiumOrSkip(t)

	// The guard server, on loopback, told its listen address as examples/server does. Its listener also
	// serves the attack page under /attack.html (outside guard's handler) for the same-origin and
	// rebinding cases.
	hs := httptest.NewUnstartedServer(nil)
	addr := hs.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ts := newTS(t, WithListenAddr(addr))
	type seen struct {
		method, origin, fetchSite, contentType string
		status                                 int
	}
	var mu sync.Mutex
	var requests []seen
	hs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/attack.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, attackPage)
			return
		}
		sw := &codeWriter{ResponseWriter: w}
		ts.srv.ServeHTTP(sw, r)
		if r.URL.Path == "/api/v1/agents/initAgent" {
			mu.Lock()
			requests = append(requests, seen{r.Method, r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"),
				r.Header.Get("Content-Type"), sw.status})
			mu.Unlock()
		}
	})
	hs.Start()
	t.Cleanup(hs.Close)

	// The other origin: a plain server on another port, reached as localhost (another site than 127.0.0.1).
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, attackPage)
	}))
	t.Cleanup(other.Close)
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}

	agentExists := func(name string) bool {
		r := ts.do("GET", "/api/v1/agents/"+name, nil, "Host", addr)
		switch r.Code {
		case 200:
			return true
		case 404:
			return false
		}
		t.Fatalf("GET agent %s: %d %s", name, r.Code, r.Body)
		return false
	}
	for _, tc := range []struct {
		name, page, base, agent string
		refused                 bool
	}{
		{"another origin", "http://localhost:" + otherPort + "/attack.html", "http://127.0.0.1:" + port, "cross-origin-agent", true},
		{"DNS rebinding", "http://rebind.test:" + port + "/attack.html", "http://rebind.test:" + port, "rebound-agent", true},
		{"the server's own origin", "http://127.0.0.1:" + port + "/attack.html", "http://127.0.0.1:" + port, "own-origin-agent", false},
	} {
		mu.Lock()
		requests = nil
		mu.Unlock()
		ctx, tcancel := context.WithTimeout(bctx, 60*time.Second) // a bound for a loaded machine, not a timing assertion
		url := tc.page + "?base=" + tc.base + "&name=" + tc.agent
		err := chromedp.Do(ctx, chromedp.Navigate(url),
			chromedp.Poll[chromedp.Void](`window.attackDone === true`, chromedp.WithPollingInterval(20*time.Millisecond)))
		tcancel()
		if err != nil {
			t.Fatalf("%s: loading %s and waiting for its requests: %v", tc.name, url, err)
		}
		mu.Lock()
		got := append([]seen(nil), requests...)
		mu.Unlock()
		t.Logf("%s: the server saw %+v", tc.name, got)
		posts := 0
		for _, s := range got {
			if s.method != "POST" {
				continue
			}
			posts++
			if tc.refused && s.status != http.StatusForbidden && s.status != http.StatusMisdirectedRequest {
				t.Errorf("%s: a POST from the page got %d, want 403 or 421 (%+v)", tc.name, s.status, s)
			}
		}
		if posts == 0 {
			t.Errorf("%s: no POST from the page reached the server (%+v): the test proves nothing", tc.name, got)
		}
		if exists := agentExists(tc.agent); exists == tc.refused {
			t.Errorf("%s: agent %s exists = %v, want %v", tc.name, tc.agent, exists, !tc.refused)
		}
	}
}

// codeWriter records the status of a response.
type codeWriter struct {
	http.ResponseWriter
	status int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}
