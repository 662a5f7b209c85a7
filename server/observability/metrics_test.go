package observability

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	guard "github.com/guardrail-control/guard"
)

func mustMetrics(t testing.TB) *Metrics {
	t.Helper()
	m, err := NewMetrics("guard")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrape fetches the metrics through their HTTP handler and parses the text format.
func scrape(t testing.TB, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type = %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return fams
}

// sample finds the metric of family name whose labels include want.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	fam := fams[name]
	if fam == nil {
		return nil
	}
next:
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// counterValue is the value of a counter sample, 0 when absent.
func counterValue(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := sample(fams, name, labels)
	if m == nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

func TestNewMetricsValidatesThePrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"guard", true}, {"_x", true}, {"my_app2", true}, {"A", true},
		{"", false}, {"2guard", false}, {"guard-x", false}, {"guard:x", false}, {"gu ard", false}, {"gärd", false},
	} {
		m, err := NewMetrics(tc.prefix)
		if tc.ok != (err == nil) || tc.ok != (m != nil) {
			t.Errorf("NewMetrics(%q) = %v, %v; want ok=%v", tc.prefix, m, err, tc.ok)
		}
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.ObserveEvaluation(guard.DecisionDeny)
	m.ObserveResult(&guard.Result{Matches: []guard.ControlResult{{Action: guard.DecisionDeny}}})
	m.SnapshotRebuilt("a")
	m.eventsIn(3, 1, DropBufferFull)
	m.eventsLost(2)
	m.eventsStored(2)
	if m.Registry() != nil {
		t.Fatal("nil Metrics has a registry")
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	rec := httptest.NewRecorder()
	m.Middleware(next).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusTeapot {
		t.Fatalf("nil Middleware changed the response: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("nil Handler = %d %q, want a 404 problem", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestMetricsCountRequestsByRoutePattern(t *testing.T) {
	m := mustMetrics(t)
	other := mustMetrics(t) // a second instance in the same process does not collide
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /things", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	srv := httptest.NewServer(m.Middleware(mux))
	defer srv.Close()

	get := func(path string) int {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode
	}
	get("/things/1")
	get("/things/secret-token-42")
	get("/nowhere")
	res, err := http.Post(srv.URL+"/things", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	for _, method := range []string{http.MethodDelete, "BREW"} { // 405, and a method outside the standard set
		req, _ := http.NewRequest(method, srv.URL+"/things/3", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
	}
	func() { // a panic goes on up (to the server's recoverer) and is recorded as a 500
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		m.Middleware(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/boom", nil))
	}()

	fams := scrape(t, m)
	for _, tc := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"route": "/things/{id}", "method": "GET", "status": "200"}, 2},
		{map[string]string{"route": "/things", "method": "POST", "status": "201"}, 1},
		{map[string]string{"route": UnmatchedRoute, "method": "GET", "status": "404"}, 1},
		{map[string]string{"route": "/boom", "method": "GET", "status": "500"}, 1},
		{map[string]string{"route": UnmatchedRoute, "method": "DELETE", "status": "405"}, 1},
		{map[string]string{"route": UnmatchedRoute, "method": "OTHER", "status": "405"}, 1},
	} {
		if got := counterValue(t, fams, "guard_http_requests_total", tc.labels); got != tc.want {
			t.Errorf("http_requests_total%v = %v, want %v", tc.labels, got, tc.want)
		}
	}
	h := sample(fams, "guard_http_request_duration_seconds", map[string]string{"route": "/things/{id}", "method": "GET"})
	if h == nil || h.GetHistogram().GetSampleCount() != 2 {
		t.Fatalf("duration histogram = %v, want 2 samples", h)
	}
	for _, fam := range fams {
		for _, mm := range fam.GetMetric() {
			for _, lp := range mm.GetLabel() {
				if strings.Contains(lp.GetValue(), "secret-token") {
					t.Fatalf("the raw path leaked into label %s of %s", lp.GetName(), fam.GetName())
				}
			}
		}
	}
	if got := counterValue(t, scrape(t, other), "guard_http_requests_total", nil); got != 0 {
		t.Fatalf("the other instance counted %v requests", got)
	}
}

func TestMetricsHaveThePrefixAndTheRuntimeCollectors(t *testing.T) {
	m, err := NewMetrics("acme")
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveEvaluation(guard.DecisionAllow)
	m.SetBuildInfo("0.0.1", "old", "go0")
	m.SetBuildInfo("1.2.3", "abc123", "go1.99")
	fams := scrape(t, m)
	for name := range fams {
		standard := strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_")
		if !strings.HasPrefix(name, "acme_") && !standard {
			t.Errorf("metric %s lacks the prefix", name)
		}
		if strings.HasPrefix(name, "acme_go_") || strings.HasPrefix(name, "acme_process_") {
			t.Errorf("metric %s: the standard collectors keep their names", name)
		}
	}
	for _, want := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "acme_evaluations_total",
		"acme_events_dropped_total", "acme_snapshot_rebuilds_total", "acme_build_info"} {
		if fams[want] == nil {
			t.Errorf("metric %s missing", want)
		}
	}
	if bi := fams["acme_build_info"]; bi != nil {
		ms := bi.GetMetric()
		if len(ms) != 1 || ms[0].GetGauge().GetValue() != 1 {
			t.Fatalf("build_info: %v", ms)
		}
		got := map[string]string{}
		for _, lp := range ms[0].GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if got["version"] != "1.2.3" || got["revision"] != "abc123" || got["goversion"] != "go1.99" || len(got) != 3 {
			t.Fatalf("build_info labels: %v", got)
		}
	}
}

func TestRouteLabel(t *testing.T) {
	for in, want := range map[string]string{"GET /x/{id}": "/x/{id}", "": UnmatchedRoute, "/ui/": "/ui/", "GET /{$}": "/{$}"} {
		if got := routeLabel(in); got != want {
			t.Errorf("routeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMetricsCountEvaluationsMatchesAndEvaluatorTime(t *testing.T) {
	m := mustMetrics(t)
	res := &guard.Result{
		Decision: guard.DecisionDeny,
		Matches: []guard.ControlResult{
			{Action: guard.DecisionDeny, EvaluatorName: "regex", Duration: 2 * time.Millisecond},
			{Action: guard.DecisionObserve, EvaluatorName: "list", Duration: time.Millisecond},
		},
		Errors:     []guard.ControlResult{{Action: guard.DecisionDeny, EvaluatorName: "ext.toxicity", Duration: time.Second}},
		NonMatches: []guard.ControlResult{{Action: guard.DecisionSteer, EvaluatorName: "regex", Duration: time.Millisecond}},
	}
	m.ObserveEvaluation(res.Decision)
	m.ObserveEvaluation(guard.DecisionAllow)
	m.ObserveEvaluation(guard.DecisionAllow)
	m.ObserveResult(res)
	m.ObserveResult(nil)
	m.SnapshotRebuilt("agent-a")

	fams := scrape(t, m)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"guard_evaluations_total", map[string]string{"decision": "deny"}, 1},
		{"guard_evaluations_total", map[string]string{"decision": "allow"}, 2},
		{"guard_evaluations_total", map[string]string{"decision": "steer"}, 0},
		{"guard_control_matches_total", map[string]string{"action": "deny"}, 1},
		{"guard_control_matches_total", map[string]string{"action": "log"}, 1},
		{"guard_snapshot_rebuilds_total", nil, 1},
	}
	for _, c := range checks {
		if got := counterValue(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if h := sample(fams, "guard_evaluator_duration_seconds", map[string]string{"evaluator": "regex"}); h.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("regex evaluator samples = %d, want 2", h.GetHistogram().GetSampleCount())
	}
	if h := sample(fams, "guard_evaluator_duration_seconds", map[string]string{"evaluator": "ext.toxicity"}); h.GetHistogram().GetSampleSum() != 1 {
		t.Errorf("ext.toxicity evaluator sum = %v, want 1", h.GetHistogram().GetSampleSum())
	}
}

func TestMiddlewareKeepsFlushing(t *testing.T) {
	m := mustMetrics(t)
	h := m.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "part")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the middleware: %v", err)
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stream", nil))
	if !rec.Flushed {
		t.Fatal("the response was not flushed")
	}
	if got := counterValue(t, scrape(t, m), "guard_http_requests_total", map[string]string{"route": UnmatchedRoute, "status": "200"}); got != 1 {
		t.Fatalf("requests = %v, want 1", got)
	}
}
