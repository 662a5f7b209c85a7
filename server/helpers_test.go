package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/store"
	"github.com/guardrail-control/guard/store/storetest"
)

// tserver is a server over a fresh migrated SQLite store.
type tserver struct {
	t   testing.TB
	srv *Server
	st  *store.Store
	// onResponse, when set, sees every request and its response (the OpenAPI test validates them).
	onResponse func(*http.Request, *resp)
}

func newTS(t testing.TB, opts ...Option) *tserver {
	t.Helper()
	st := storetest.SQLite(t)
	return newTSOn(t, st, opts...)
}

func newTSOn(t testing.TB, st *store.Store, opts ...Option) *tserver {
	t.Helper()
	srv, err := New(st, append([]Option{WithVersion("test-1.2.3"), WithPolicyPollInterval(20e6)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &tserver{t: t, srv: srv, st: st}
}

// resp is a recorded response.
type resp struct {
	Code   int
	Header http.Header
	Body   []byte
}

// do sends a request; body is a string (sent as is), nil (no body) or anything JSON-encodable.
// hdr holds header name/value pairs ("Host" sets the request's Host).
func (ts *tserver) do(method, path string, body any, hdr ...string) *resp {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" { // net/http serves the Host header as r.Host
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	ts.srv.ServeHTTP(rec, req)
	out := &resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if ts.onResponse != nil {
		ts.onResponse(req, out)
	}
	return out
}

// ok sends a request and fails the test unless the status is want; it returns the decoded JSON body.
func (ts *tserver) ok(want int, method, path string, body any, hdr ...string) map[string]any {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	if r.Code != want {
		ts.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Code, want, r.Body)
	}
	return r.obj(ts.t)
}

func (r *resp) obj(t testing.TB) map[string]any {
	t.Helper()
	if len(r.Body) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// problemBody decodes a problem response, checking the contract's shape.
func (r *resp) problem(t testing.TB) problem.Body {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json; body %s", ct, r.Body)
	}
	var b problem.Body
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("problem body: %v: %s", err, r.Body)
	}
	if b.Status != r.Code || b.ErrorCode == "" || b.Title == "" || b.Type == "" || b.Instance == "" || b.RequestID == "" {
		t.Fatalf("incomplete problem body (status %d): %s", r.Code, r.Body)
	}
	if b.ErrorCode == problem.CodeValidation && len(b.Errors) == 0 {
		t.Fatalf("VALIDATION_ERROR without errors: %s", r.Body)
	}
	return b
}

// expectProblem checks status and error code.
func (ts *tserver) expectProblem(status int, code, method, path string, body any, hdr ...string) problem.Body {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	if r.Code != status {
		ts.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Code, status, r.Body)
	}
	b := r.problem(ts.t)
	if b.ErrorCode != code {
		ts.t.Fatalf("%s %s: error_code %s, want %s; body %s", method, path, b.ErrorCode, code, r.Body)
	}
	return b
}

// Control data used across tests.
func regexData(pattern, decision string, stages ...string) map[string]any {
	d := map[string]any{
		"condition": map[string]any{
			"selector":  map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "regex", "config": map[string]any{"pattern": pattern}},
		},
		"action": map[string]any{"decision": decision},
	}
	if decision == "steer" {
		d["action"] = map[string]any{"decision": "steer", "steering_context": map[string]any{"message": "rephrase", "required_actions": []string{"redact"}}}
	}
	if len(stages) > 0 {
		d["scope"] = map[string]any{"stages": stages}
	}
	return d
}

// createControl creates a control with data (nil: none) and returns its id.
func (ts *tserver) createControl(name string, data map[string]any) int64 {
	ts.t.Helper()
	body := map[string]any{"name": name}
	if data != nil {
		body["data"] = data
	}
	m := ts.ok(200, "PUT", "/api/v1/controls", body)
	return int64(m["control_id"].(float64))
}

func (ts *tserver) initAgent(name string, steps ...map[string]any) map[string]any {
	ts.t.Helper()
	if steps == nil {
		steps = []map[string]any{{"type": "llm", "name": "chat"}}
	}
	return ts.ok(200, "POST", "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": name, "agent_description": "test agent"}, "steps": steps,
	})
}

func (ts *tserver) link(agent string, id int64) {
	ts.t.Helper()
	ts.ok(200, "POST", fmt.Sprintf("/api/v1/agents/%s/controls/%d", agent, id), nil)
}

func (ts *tserver) eval(agent, stage string, input any) map[string]any {
	ts.t.Helper()
	return ts.ok(200, "POST", "/api/v1/evaluation", map[string]any{
		"agent_name": agent, "stage": stage, "step": map[string]any{"type": "llm", "name": "chat", "input": input},
	})
}

func decision(m map[string]any) string { s, _ := m["decision"].(string); return s }
