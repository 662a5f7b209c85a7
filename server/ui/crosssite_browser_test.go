package ui_test

// A page on another site, opened in a real browser while guard runs locally with authentication off,
// tries every kind of request a page can make a browser send without the server's consent. None may
// change anything.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// crossSitePage is the attacker's page. GUARD is the server's origin; C1 is a control linked to agent a1
// with two versions, C2 a control that is not linked. The page reports in document.title when every
// attempt has settled.
const crossSitePage = `<!doctype html><html><head><title>working</title></head><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="GUARD/api/v1/agents/initAgent" enctype="text/plain" target="sink">
<input name='{"agent":{"agent_name":"pwned-form","agent_description":"' value='"},"steps":[]}'>
</form>
<script>
(async () => {
  const g = 'GUARD';
  const simple = (method, path, body) => fetch(g + path, {method, mode: 'no-cors', body,
    headers: body === undefined ? {} : {'Content-Type': 'text/plain'}}).then(() => 'sent', e => 'error');
  const cors = (method, path, body) => fetch(g + path, {method, body,
    headers: {'Content-Type': 'application/json'}}).then(r => 'status ' + r.status, e => 'blocked');
  const results = await Promise.all([
    simple('POST', '/api/v1/agents/initAgent', '{"agent":{"agent_name":"pwned-fetch"},"steps":[]}'),
    simple('POST', '/api/v1/agents/a1/controls/C2'),
    simple('POST', '/api/v1/controls/C1/versions/1/restore'),
    simple('POST', '/api/v1/controls/C1/versions/1/restore', 'x'),
    simple('POST', '/api/v1/evaluation', '{"agent_name":"a1","stage":"pre","step":{"type":"llm","name":"chat","input":"x"}}'),
    cors('PUT', '/api/v1/controls', '{"name":"pwned-put"}'),
    cors('DELETE', '/api/v1/controls/C1?force=true'),
    cors('PATCH', '/api/v1/controls/C1', '{"enabled":false}'),
  ]);
  window.results = results;
  const sink = document.querySelector('iframe');
  sink.onload = () => { document.title = 'done'; };
  document.getElementById('f').submit();
})();
</script></body></html>`

func TestCrossSitePageChangesNothing(t *testing.T) {
	a := startApp(t, appOptions{})
	a.initAgent("a1", "target")
	var c1, c2 struct {
		ControlID int64 `json:"control_id"`
	}
	a.call("PUT", "/api/v1/controls", map[string]any{"name": "c1", "data": regexData("x")}, 200, &c1)
	a.call("PUT", fmt.Sprintf("/api/v1/controls/%d/data", c1.ControlID), map[string]any{"data": regexData("xy")}, 200, nil)
	a.call("PUT", "/api/v1/controls", map[string]any{"name": "c2", "data": regexData("z")}, 200, &c2)
	a.call("POST", fmt.Sprintf("/api/v1/agents/a1/controls/%d", c1.ControlID), nil, 200, nil)
	before := a.snapshot()

	// The attacker's site: another host name (localhost, while guard is reached as 127.0.0.1), so the
	// browser treats it as cross-site, as it would a page on the internet.
	page := strings.NewReplacer("GUARD", a.url, "C1", fmt.Sprint(c1.ControlID), "C2", fmt.Sprint(c2.ControlID)).Replace(crossSitePage)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	a.do("open the attacker's page", chromedp.Navigate(evilURL+"/"))
	a.waitJS("every attempt settled", `document.title === 'done'`)
	t.Logf("attempts: %v", eval[[]string](a, "results", `window.results`))
	if err := a.rec.Flush(a.ctx); err != nil {
		t.Fatal(err)
	}
	if after := a.snapshot(); after != before {
		t.Fatalf("the cross-site page changed the server:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// regexData is control data that denies input matching pattern.
func regexData(pattern string) map[string]any {
	return map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}}},
		"action": map[string]any{"decision": "deny"},
	}
}

// snapshot reads what the attacks could have changed: agents, controls with their versions, links and
// recorded events.
func (a *app) snapshot() string {
	a.t.Helper()
	var b strings.Builder
	var agents struct {
		Agents []struct {
			Name string `json:"agent_name"`
		} `json:"agents"`
	}
	a.call("GET", "/api/v1/agents?limit=100", nil, 200, &agents)
	for _, ag := range agents.Agents {
		var m map[string]any
		a.call("GET", "/api/v1/agents/"+ag.Name, nil, 200, &m)
		fmt.Fprintf(&b, "agent %v\n", m)
	}
	var controls struct {
		Controls []map[string]any `json:"controls"`
	}
	a.call("GET", "/api/v1/controls?limit=100", nil, 200, &controls)
	for _, c := range controls.Controls {
		var v map[string]any
		a.call("GET", fmt.Sprintf("/api/v1/controls/%v/versions?limit=100", c["control_id"]), nil, 200, &v)
		fmt.Fprintf(&b, "control %v\nversions %v\n", c, v["versions"])
	}
	var events map[string]any
	a.call("POST", "/api/v1/observability/events/query", map[string]any{"agent_name": "a1"}, 200, &events)
	fmt.Fprintf(&b, "events %v\n", events["total"])
	return b.String()
}
