package observability

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
	"go.uber.org/zap/zaptest"
)

// eachStore runs fn over the in-memory fake, SQLite and (with GUARD_TEST_POSTGRES_URL) PostgreSQL.
func eachStore(t *testing.T, fn func(t *testing.T, st guard.EventStore)) {
	t.Run("memory", func(t *testing.T) { fn(t, &memStore{}) })
	storetest.Each(t, func(t *testing.T, s *store.Store) { fn(t, s) })
}

// harness is the four endpoints over one store, with a recorder that only writes when flushed.
type harness struct {
	t       testing.TB
	api     *API
	mux     *http.ServeMux
	metrics *Metrics
}

func newHarness(t testing.TB, st guard.EventStore, cfg RecorderConfig) *harness {
	t.Helper()
	m := mustMetrics(t)
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Hour
	}
	cfg.Metrics = m
	rec := NewRecorder(st, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rec.Close(ctx); err != nil {
			t.Errorf("close recorder: %v", err)
		}
	})
	h := &harness{t: t, metrics: m, mux: http.NewServeMux(),
		api: &API{Store: st, Recorder: rec, Enabled: true, Metrics: m, Logger: zaptest.NewLogger(t), Now: func() time.Time { return baseTime.Add(30 * time.Second) }}}
	h.api.Routes(h.mux, "/api/v1")
	return h
}

func (h *harness) flush() {
	h.t.Helper()
	if err := h.api.Recorder.Flush(context.Background()); err != nil {
		h.t.Fatalf("flush: %v", err)
	}
}

// do sends a request; body is JSON-encoded unless it is a string or []byte.
func (h *harness) do(method, path string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	var b []byte
	switch v := body.(type) {
	case nil:
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			h.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.mux.ServeHTTP(rec, req)
	return rec
}

// decode parses a JSON response of the wanted status into v.
func decode(t testing.TB, rec *httptest.ResponseRecorder, status int, v any) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
}

// problemOf parses a problem+json response of the wanted status and error code.
func problemOf(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) problem.Body {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, rec.Body)
	}
	var p problem.Body
	decode(t, rec, status, &p)
	if p.ErrorCode != code || p.Status != status || p.Detail == "" {
		t.Fatalf("problem = %+v, want %d %s with a detail", p, status, code)
	}
	return p
}

// problemAt is problemOf also checking that the first problem is on field (when field is not "").
func problemAt(t testing.TB, rec *httptest.ResponseRecorder, status int, code, field string) problem.Body {
	t.Helper()
	p := problemOf(t, rec, status, code)
	if field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != field) {
		t.Fatalf("errors = %+v, want the first on %q", p.Errors, field)
	}
	return p
}

// wireEvent is mkEvent(i) as a JSON object that tests can alter.
func wireEvent(t testing.TB, i int) map[string]any {
	t.Helper()
	b, err := json.Marshal(mkEvent(i))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func postBody(events ...map[string]any) map[string]any {
	if events == nil {
		events = []map[string]any{}
	}
	return map[string]any{"events": events}
}
