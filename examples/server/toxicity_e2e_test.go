package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ext.toxicity in the real server binary (issue 7 points 2 and 3): discovered only when EXT_API_KEY is
// set, scored through the moderation service EXT_API_URL names, and the key never shown.

// extKey is the API key the tests give the server; it must never come back out of it.
const extKey = "some-secret-key"

// fakeModeration is an OpenAI-compatible moderation endpoint. Text containing "idiot" scores 0.9 for
// harassment, other text 0.01; text containing "trigger-401" gets a 401 whose body echoes the bearer
// key in every field, as careless services do, to check the server does not pass it on.
type fakeModeration struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string // the Authorization header of each request
}

func newFakeModeration(t *testing.T) *fakeModeration {
	f := &fakeModeration{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		var req struct {
			Input string `json:"input"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(req.Input, "trigger-401") {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided: " + key, "type": key, "param": key, "code": key}})
			return
		}
		score := 0.01
		if strings.Contains(req.Input, "idiot") {
			score = 0.9
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "modr-1", "model": "omni-moderation-test",
			"results": []any{map[string]any{"flagged": score > 0.5, "categories": map[string]bool{"harassment": score > 0.5},
				"category_scores": map[string]float64{"harassment": score, "harassment/threatening": 0.001,
					"hate": 0.002, "hate/threatening": 0.0001, "violence": 0.003}}}})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// authHeaders returns the Authorization headers received so far.
func (f *fakeModeration) authHeaders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

// toxicityControl is the data of a deny control scoring the input with ext.toxicity.
func toxicityControl() map[string]any {
	return map[string]any{
		"condition": map[string]any{"selector": map[string]any{"path": "input"},
			"evaluator": map[string]any{"name": "ext.toxicity", "config": map[string]any{
				"metric": "input_toxicity", "operator": "gt", "target_value": 0.5, "timeout_ms": 5000}}},
		"action": map[string]any{"decision": "deny"},
	}
}

// evaluatorNames returns GET /api/v1/evaluators as a map from name to entry, and the raw body.
func (p *proc) evaluatorNames() (map[string]map[string]any, []byte) {
	p.t.Helper()
	b := p.expect(http.StatusOK, http.MethodGet, "/api/v1/evaluators", nil)
	m := map[string]map[string]any{} // the reference's shape: a map from name to info
	if err := json.Unmarshal(b, &m); err != nil {
		p.t.Fatalf("GET /evaluators: %v in %s", err, b)
	}
	return m, b
}

func TestToxicityUnavailableWithoutKey(t *testing.T) {
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db")}, "serve", "--migrate")
	evs, body := p.evaluatorNames()
	if _, ok := evs["ext.toxicity"]; ok {
		t.Fatalf("ext.toxicity is listed without EXT_API_KEY: %s", body)
	}
	if _, ok := evs["regex"]; !ok {
		t.Fatalf("regex is not listed: %s", body)
	}
	m := p.call(http.StatusUnprocessableEntity, http.MethodPut, "/api/v1/controls", map[string]any{"name": "toxic", "data": toxicityControl()})
	requireProblem(t, m, "VALIDATION_ERROR", "data.condition.evaluator.name", "unknown_evaluator")
	// Saving data on an existing control is refused the same way, and the control keeps no data.
	id := int64(p.call(http.StatusOK, http.MethodPut, "/api/v1/controls", map[string]any{"name": "toxic"})["control_id"].(float64))
	m = p.call(http.StatusUnprocessableEntity, http.MethodPut, controlPath(id)+"/data", map[string]any{"data": toxicityControl()})
	requireProblem(t, m, "VALIDATION_ERROR", "data.condition.evaluator.name", "unknown_evaluator")
	p.stop()
}

func TestToxicityWithKey(t *testing.T) {
	fake := newFakeModeration(t)
	p := startServer(t, map[string]string{"DB_URL": filepath.Join(t.TempDir(), "guard.db"), "DEBUG": "true",
		"EXT_API_KEY": extKey, "EXT_API_URL": fake.srv.URL + "/v1/moderations"}, "serve", "--migrate")
	var bodies []string // every response body of the test, checked for the key at the end
	record := func(b []byte) []byte { bodies = append(bodies, string(b)); return b }

	evs, body := p.evaluatorNames()
	record(body)
	tox, ok := evs["ext.toxicity"]
	if !ok {
		t.Fatalf("ext.toxicity is not listed with EXT_API_KEY set: %s", body)
	}
	if tox["requires_api_key"] != true {
		t.Fatalf("ext.toxicity requires_api_key = %v, want true", tox["requires_api_key"])
	}

	var ctl struct {
		ID int64 `json:"control_id"`
	}
	if err := json.Unmarshal(record(p.expect(http.StatusOK, http.MethodPut, "/api/v1/controls",
		map[string]any{"name": "no-toxicity", "data": toxicityControl()})), &ctl); err != nil {
		t.Fatal(err)
	}
	record(p.expect(http.StatusOK, http.MethodPost, "/api/v1/agents/initAgent", map[string]any{
		"agent": map[string]any{"agent_name": "tox-bot"}, "steps": []any{map[string]any{"type": "llm", "name": "chat"}}}))
	record(p.expect(http.StatusOK, http.MethodPost, "/api/v1/agents/tox-bot/controls/"+itoa(ctl.ID), nil))
	record(p.expect(http.StatusOK, http.MethodGet, controlPath(ctl.ID)+"/data", nil))

	evaluate := func(input string) map[string]any {
		t.Helper()
		b := record(p.expect(http.StatusOK, http.MethodPost, "/api/v1/evaluation", map[string]any{
			"agent_name": "tox-bot", "stage": "pre", "step": map[string]any{"type": "llm", "name": "chat", "input": input}}))
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("evaluation: %v in %s", err, b)
		}
		return m
	}
	if m := evaluate("you are an idiot"); m["decision"] != "deny" || len(m["matches"].([]any)) != 1 {
		t.Fatalf("toxic input: %v, want a deny by the ext.toxicity control", m)
	}
	if m := evaluate("have a nice day"); m["decision"] != "allow" {
		t.Fatalf("friendly input: %v, want allow", m)
	}
	// A 401 from the service (whose body repeats the key) is an evaluator error; on_error defaults to
	// deny (fail closed). The error text reaches the response, but not the key.
	m := evaluate("trigger-401")
	errs, _ := m["errors"].([]any)
	if m["decision"] != "deny" || len(errs) != 1 {
		t.Fatalf("401 from the service: %v, want a deny with one error", m)
	}
	if msg, _ := errs[0].(map[string]any)["result"].(map[string]any)["error"].(string); !strings.Contains(msg, "401") {
		t.Fatalf("401 from the service: error %q does not say 401", msg)
	}

	auth := fake.authHeaders()
	if len(auth) < 3 {
		t.Fatalf("the moderation service saw %d requests, want at least 3", len(auth))
	}
	for _, a := range auth {
		if a != "Bearer "+extKey {
			t.Fatalf("the moderation service saw Authorization %q, want the bearer key", a)
		}
	}
	// More places the key could leak: the metrics and the OpenAPI document.
	for _, path := range []string{"/metrics", "/openapi.json", "/health"} {
		_, _, b := p.do(http.MethodGet, path, nil, nil)
		record(b)
	}
	p.stop()

	for _, b := range bodies {
		if strings.Contains(b, extKey) {
			t.Fatalf("a response body holds the API key: %s", b)
		}
	}
	for name, out := range map[string]string{"stderr": p.stderr.String(), "stdout": p.stdout.String()} {
		if out == "" && name == "stderr" {
			t.Fatal("no logs on stderr: the leak check would be empty")
		}
		if strings.Contains(out, extKey) {
			t.Fatalf("the server's %s holds the API key:\n%s", name, out)
		}
	}
	if !strings.Contains(p.stderr.String(), "DEBUG") {
		t.Fatalf("DEBUG=true did not switch to development logging:\n%s", p.stderr)
	}
}

// requireProblem checks a problem body's error_code and that it lists a problem at field with code.
func requireProblem(t *testing.T, m map[string]any, errorCode, field, code string) {
	t.Helper()
	if m["error_code"] != errorCode {
		t.Fatalf("error_code = %v, want %s: %v", m["error_code"], errorCode, m)
	}
	errs, _ := m["errors"].([]any)
	for _, e := range errs {
		if e, ok := e.(map[string]any); ok && e["field"] == field && e["code"] == code {
			return
		}
	}
	t.Fatalf("no problem %s at %s in %v", code, field, m)
}

func controlPath(id int64) string { return "/api/v1/controls/" + itoa(id) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
