package client

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/guardrail-control/guard"
)

// fakeAPI is an in-memory imitation of the endpoints the agent uses: health, initAgent, agent controls
// (with ETag), evaluation and events. down makes every request fail at the connection level.
type fakeAPI struct {
	mu          sync.Mutex
	controls    []guard.AgentControl
	rev         int
	initReqs    []InitAgentRequest
	initStatus  int // non-zero: initAgent answers this problem status
	evalResult  *guard.Result
	evalCalls   int
	evalTraces  []string // the traceparent header of each /evaluation request
	events      []guard.Event
	gets        int
	notModified int
	// discardEvents makes the events endpoint read and drop bodies without decoding them (benchmarks:
	// the fake server runs in the benchmark's process and its CPU would count).
	discardEvents bool

	down     atomic.Bool // connections are dropped
	evalDown atomic.Bool // only /evaluation connections are dropped
}

func newFakeAPI(t testing.TB, controls ...guard.AgentControl) (*fakeAPI, *httptest.Server) {
	t.Helper()
	f := &fakeAPI{controls: controls, rev: 1}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, Health{Status: "healthy", Version: "0.0.1"})
	})
	mux.HandleFunc("POST /api/v1/agents/initAgent", func(w http.ResponseWriter, r *http.Request) {
		var req InitAgentRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.initStatus != 0 {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(f.initStatus)
			_, _ = w.Write([]byte(`{"status":` + strconv.Itoa(f.initStatus) + `,"title":"Unauthorized","error_code":"AUTH_INVALID_KEY","detail":"invalid API key"}`))
			return
		}
		f.initReqs = append(f.initReqs, req)
		writeJSON(w, 200, InitAgentResponse{Created: len(f.initReqs) == 1, Agent: guard.Agent{Name: req.Agent.Name}, Controls: f.controls})
	})
	mux.HandleFunc("GET /api/v1/agents/{name}/controls", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.gets++
		tag := `"r` + strconv.Itoa(f.rev) + `"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			f.notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		writeJSON(w, 200, map[string]any{"controls": f.controls})
	})
	mux.HandleFunc("POST /api/v1/evaluation", func(w http.ResponseWriter, r *http.Request) {
		if f.evalDown.Load() {
			dropConnection(w)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.evalCalls++
		f.evalTraces = append(f.evalTraces, r.Header.Get("traceparent"))
		res := f.evalResult
		if res == nil {
			res = &guard.Result{IsSafe: true, Decision: guard.DecisionAllow, Confidence: 1,
				Matches: []guard.ControlResult{}, Errors: []guard.ControlResult{}, NonMatches: []guard.ControlResult{}}
		}
		writeJSON(w, 200, res)
	})
	mux.HandleFunc("POST /api/v1/observability/events", func(w http.ResponseWriter, r *http.Request) {
		if f.discardEvents {
			_, _ = io.Copy(io.Discard, r.Body)
			writeJSON(w, 202, EventsAck{})
			return
		}
		var body struct {
			Events []guard.Event `json:"events"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.events = append(f.events, body.Events...)
		f.mu.Unlock()
		writeJSON(w, 202, EventsAck{Received: len(body.Events), Enqueued: len(body.Events)})
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			dropConnection(w)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

// setControls replaces the agent's controls and bumps the revision (a new ETag).
func (f *fakeAPI) setControls(cs ...guard.AgentControl) {
	f.mu.Lock()
	f.controls = cs
	f.rev++
	f.mu.Unlock()
}

func (f *fakeAPI) counts() (gets, notModified, evalCalls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gets, f.notModified, f.evalCalls
}

func (f *fakeAPI) receivedEvents() []guard.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]guard.Event(nil), f.events...)
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ctl builds a linked control with a regex leaf.
func ctl(id int64, name string, ex guard.Execution, dec guard.Decision, path, pattern string, stages ...guard.Stage) guard.AgentControl {
	d := guard.ControlData{
		Enabled:   true,
		Execution: ex,
		Scope:     guard.Scope{Stages: stages},
		Condition: guard.Condition{
			Selector:  &guard.Selector{Path: path},
			Evaluator: &guard.EvaluatorSpec{Name: "regex", Config: map[string]any{"pattern": pattern}},
		},
		Action: guard.Action{Decision: dec},
	}
	if dec == guard.DecisionSteer {
		d.Action.SteeringContext = &guard.SteeringContext{Message: "rephrase without " + pattern, RequiredActions: []string{"redact"}}
	}
	return guard.AgentControl{ID: id, ControlID: id, Name: name, Enabled: true, Control: d}
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
