package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDisconnectStopsEvaluation: a backtracking match cannot be interrupted, only bounded, so before the
// request deadline a disconnected client left its match in flight running for the control's whole
// timeout_ms (10 s here) while no answer could be written anyway. Now the match runs under the shorter of
// timeout_ms and the time left before the default 2 s deadline, and no new match starts once the client
// has gone: the handler returns well before one timeout_ms has passed.
func TestDisconnectStopsEvaluation(t *testing.T) {
	ts := newTS(t)
	ts.initAgent("gone")
	for i := range 40 {
		data := regexData(`^(?=(a+)+$)`, "log")
		data["condition"].(map[string]any)["evaluator"].(map[string]any)["config"].(map[string]any)["timeout_ms"] = 10000
		ts.link("gone", ts.createControl(fmt.Sprintf("slow-%d", i), data))
	}
	started, finished := make(chan struct{}), make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		ts.srv.ServeHTTP(w, r)
		close(finished)
	}))
	defer hs.Close()
	body, _ := json.Marshal(map[string]any{"agent_name": "gone", "stage": "pre",
		"step": map[string]any{"type": "llm", "name": "chat", "input": strings.Repeat("a", 40) + "c"}})
	// The client gives up after half a second, in the middle of the first match, like a caller with a
	// short timeout of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/api/v1/evaluation", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not arrive")
	}
	select {
	case <-finished:
	case <-time.After(7 * time.Second):
		t.Fatal("the evaluation kept running after the client went away")
	}
}
