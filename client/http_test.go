package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guardrail-control/guard"
)

const testKey = "sekret-key-123"

// recorded is one request a recording server saw.
type recorded struct {
	method, path, query, body string
	header                    http.Header
}

// recordingServer answers every request with status and body, and sends what it saw on the channel.
func recordingServer(t *testing.T, status int, body string) (*httptest.Server, <-chan recorded) {
	t.Helper()
	ch := make(chan recorded, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- recorded{r.Method, r.URL.Path, r.URL.RawQuery, string(b), r.Header.Clone()}
		if status >= 400 {
			w.Header().Set("Content-Type", "application/problem+json")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func newTestClient(t testing.TB, url string) *HTTPClient {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := NewHTTPClient(url, testKey, WithTimeout(5*time.Second), WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHealthCheckSendsKeyAndDecodes(t *testing.T) {
	srv, ch := recordingServer(t, 200, `{"status":"healthy","version":"1.2.3"}`)
	c := newTestClient(t, srv.URL+"/")
	h, err := c.HealthCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h != (Health{Status: "healthy", Version: "1.2.3"}) {
		t.Fatalf("health = %+v", h)
	}
	r := <-ch
	if r.path != "/health" || r.method != http.MethodGet {
		t.Fatalf("request %s %s", r.method, r.path)
	}
	if got := r.header.Get("X-API-Key"); got != testKey {
		t.Fatalf("X-API-Key = %q", got)
	}
}

func TestNewHTTPClientRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"ftp://x", "localhost:8000", "http://user:pw@host"} {
		if _, err := NewHTTPClient(u, ""); err == nil {
			t.Errorf("NewHTTPClient(%q) accepted", u)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("error echoes credentials: %v", err)
		}
	}
	c, err := NewHTTPClient("", "")
	if err != nil || c.BaseURL() != DefaultServerURL {
		t.Fatalf("default URL: %v %v", c, err)
	}
}

func TestAPIErrorDecoding(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   APIError
	}{
		{"problem with field errors", 422,
			`{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"invalid control data","error_code":"VALIDATION_ERROR","request_id":"r1","errors":[{"field":"data.scope.stages.0","code":"enum","message":"must be one of pre, post"}]}`,
			APIError{Status: 422, Code: "VALIDATION_ERROR", Title: "Unprocessable Entity", Detail: "invalid control data", Type: "about:blank", RequestID: "r1",
				Problems: []guard.Problem{{Field: "data.scope.stages.0", Code: "enum", Message: "must be one of pre, post"}}}},
		{"not found", 404, `{"title":"Not Found","status":404,"detail":"control 42 does not exist","error_code":"CONTROL_NOT_FOUND"}`,
			APIError{Status: 404, Code: "CONTROL_NOT_FOUND", Title: "Not Found", Detail: "control 42 does not exist"}},
		{"html from a proxy", 502, `<html>bad gateway sekret</html>`, APIError{Status: 502, Title: "Bad Gateway"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := recordingServer(t, tt.status, tt.body)
			_, err := newTestClient(t, srv.URL).GetControl(context.Background(), 42)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v, want *APIError", err, err)
			}
			got, _ := json.Marshal(ae)
			want, _ := json.Marshal(&tt.want)
			if string(got) != string(want) {
				t.Fatalf("APIError\n got %s\nwant %s", got, want)
			}
			if errors.Is(err, ErrUnreachable) {
				t.Fatal("an API error must not match ErrUnreachable")
			}
			if strings.Contains(err.Error(), "sekret") || strings.Contains(err.Error(), testKey) {
				t.Fatalf("error leaks the body or the key: %v", err)
			}
			if IsUnavailable(err) != (tt.status >= 500) {
				t.Fatalf("IsUnavailable = %v", IsUnavailable(err))
			}
		})
	}
}

func TestUnreachableAndCancelled(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newTestClient(t, url)
	_, err := c.HealthCheck(context.Background())
	if !errors.Is(err, ErrUnreachable) || !IsUnavailable(err) {
		t.Fatalf("closed server: %v, want ErrUnreachable", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("error leaks the key: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.HealthCheck(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnreachable) {
		t.Fatalf("cancelled: %v, want context.Canceled and not ErrUnreachable", err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	sc, _ := NewHTTPClient(slow.URL, "", WithTimeout(50*time.Millisecond), WithHTTPClient(hc))
	if _, err := sc.HealthCheck(context.Background()); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("timeout: %v, want ErrUnreachable", err)
	}
}

func TestAgentControlsETag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.Header().Set("ETag", `"v1"`)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = io.WriteString(w, `{"controls":[{"id":3,"control_id":3,"name":"c","enabled":true,"control":{"enabled":true,"execution":"sdk","action":{"decision":"deny"},"condition":{}}}]}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	cs, tag, nm, err := c.AgentControls(context.Background(), "a", "")
	if err != nil || nm || tag != `"v1"` || len(cs) != 1 || cs[0].Name != "c" || cs[0].Control.Execution != guard.ExecutionSDK {
		t.Fatalf("first: %+v %q %v %v", cs, tag, nm, err)
	}
	cs, tag, nm, err = c.AgentControls(context.Background(), "a", tag)
	if err != nil || !nm || cs != nil || tag != `"v1"` {
		t.Fatalf("second: %+v %q %v %v", cs, tag, nm, err)
	}
}

// TestMethodsHitTheContract checks the method, path, query and body of every typed method.
func TestMethodsHitTheContract(t *testing.T) {
	ctx := context.Background()
	tru := true
	data := guard.ControlData{Enabled: true, Action: guard.Action{Decision: guard.DecisionDeny}}
	tests := []struct {
		name                    string
		call                    func(c *HTTPClient) error
		method, path, query     string
		bodyContains, bodyLacks string
	}{
		{"create", func(c *HTTPClient) error { _, err := c.CreateControl(ctx, "n", &data); return err },
			"PUT", "/api/v1/controls", "", `"execution":"server"`, ""},
		{"create without data", func(c *HTTPClient) error { _, err := c.CreateControl(ctx, "n", nil); return err },
			"PUT", "/api/v1/controls", "", `{"name":"n"}`, "data"},
		{"list", func(c *HTTPClient) error {
			_, err := c.ListControls(ctx, ControlListOptions{PageOptions: PageOptions{Cursor: "abc", Limit: 5}, Name: "x", Enabled: &tru, Tag: "t", StepType: "tool", Stage: guard.StagePre})
			return err
		}, "GET", "/api/v1/controls", "cursor=abc&enabled=true&limit=5&name=x&stage=pre&step_type=tool&tag=t", "", ""},
		{"get", func(c *HTTPClient) error { _, err := c.GetControl(ctx, 7); return err }, "GET", "/api/v1/controls/7", "", "", ""},
		{"patch", func(c *HTTPClient) error {
			_, err := c.PatchControl(ctx, 7, guard.ControlPatch{Enabled: &tru})
			return err
		},
			"PATCH", "/api/v1/controls/7", "", `{"enabled":true}`, ""},
		{"delete force", func(c *HTTPClient) error { _, err := c.DeleteControl(ctx, 7, true); return err },
			"DELETE", "/api/v1/controls/7", "force=true", "", ""},
		{"data get", func(c *HTTPClient) error { _, err := c.GetControlData(ctx, 7); return err }, "GET", "/api/v1/controls/7/data", "", "", ""},
		{"data put", func(c *HTTPClient) error { _, err := c.PutControlData(ctx, 7, data); return err },
			"PUT", "/api/v1/controls/7/data", "", `"tags":[]`, ""},
		{"validate", func(c *HTTPClient) error { return c.ValidateControlData(ctx, data) }, "POST", "/api/v1/controls/validate", "", `"data":`, ""},
		{"versions", func(c *HTTPClient) error { _, err := c.ListControlVersions(ctx, 7, PageOptions{Limit: 2}); return err },
			"GET", "/api/v1/controls/7/versions", "limit=2", "", ""},
		{"version", func(c *HTTPClient) error { _, err := c.GetControlVersion(ctx, 7, 3); return err }, "GET", "/api/v1/controls/7/versions/3", "", "", ""},
		{"restore", func(c *HTTPClient) error { _, err := c.RestoreControlVersion(ctx, 7, 3); return err },
			"POST", "/api/v1/controls/7/versions/3/restore", "", "", ""},
		{"init agent", func(c *HTTPClient) error {
			_, err := c.InitAgent(ctx, InitAgentRequest{Agent: AgentInfo{Name: "a"}, ConflictMode: guard.ConflictOverwrite})
			return err
		}, "POST", "/api/v1/agents/initAgent", "", `"steps":[]`, ""},
		{"list agents", func(c *HTTPClient) error { _, err := c.ListAgents(ctx, AgentListOptions{Name: "bo"}); return err },
			"GET", "/api/v1/agents", "name=bo", "", ""},
		{"get agent", func(c *HTTPClient) error { _, err := c.GetAgent(ctx, "my agent"); return err }, "GET", "/api/v1/agents/my agent", "", "", ""},
		{"patch agent", func(c *HTTPClient) error {
			d := "x"
			_, err := c.PatchAgent(ctx, "a", AgentPatch{Description: &d})
			return err
		}, "PATCH", "/api/v1/agents/a", "", `{"agent_description":"x"}`, ""},
		{"link", func(c *HTTPClient) error { return c.LinkControl(ctx, "a", 7) }, "POST", "/api/v1/agents/a/controls/7", "", "", ""},
		{"unlink", func(c *HTTPClient) error { _, err := c.UnlinkControl(ctx, "a", 7); return err }, "DELETE", "/api/v1/agents/a/controls/7", "", "", ""},
		{"evaluate", func(c *HTTPClient) error {
			_, err := c.Evaluate(WithTrace(ctx, "t1", "s1"), "a", guard.Step{Type: "llm", Name: "n", Input: "hi"}, guard.StagePre)
			return err
		}, "POST", "/api/v1/evaluation", "", `"stage":"pre"`, ""},
		{"evaluators", func(c *HTTPClient) error { _, err := c.ListEvaluators(ctx); return err }, "GET", "/api/v1/evaluators", "", "", ""},
		{"post events", func(c *HTTPClient) error { _, err := c.PostEvents(ctx, []guard.Event{{AgentName: "a"}}); return err },
			"POST", "/api/v1/observability/events", "", `"events":[`, ""},
		{"query events", func(c *HTTPClient) error { _, err := c.QueryEvents(ctx, guard.EventQuery{AgentName: "a"}); return err },
			"POST", "/api/v1/observability/events/query", "", `"limit":100`, ""},
		{"stats", func(c *HTTPClient) error {
			_, err := c.Stats(ctx, StatsOptions{AgentName: "a", TimeRange: "5m", IncludeTimeseries: true})
			return err
		}, "GET", "/api/v1/observability/stats", "agent_name=a&include_timeseries=true&time_range=5m", "", ""},
		{"control stats", func(c *HTTPClient) error { _, err := c.ControlStats(ctx, 7, "a", "1h"); return err },
			"GET", "/api/v1/observability/stats/controls/7", "agent_name=a&time_range=1h", "", ""},
		{"fleet stats", func(c *HTTPClient) error { _, err := c.Stats(ctx, StatsOptions{TimeRange: "24h"}); return err },
			"GET", "/api/v1/observability/stats", "time_range=24h", "", ""},
		{"fleet control stats", func(c *HTTPClient) error { _, err := c.ControlStats(ctx, 7, "", ""); return err },
			"GET", "/api/v1/observability/stats/controls/7", "", "", ""},
		{"captured steps", func(c *HTTPClient) error {
			_, err := c.CapturedSteps(ctx, CapturedStepQuery{AgentName: "a"})
			return err
		},
			"GET", "/api/v1/steps/captured", "agent_name=a", "", ""},
		{"captured steps, every filter", func(c *HTTPClient) error {
			at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.FixedZone("x", 3600))
			_, err := c.CapturedSteps(ctx, CapturedStepQuery{AgentName: "a", StepType: "tool", StepName: "search", Stage: guard.StagePost,
				Start: at, End: at.Add(time.Hour), Limit: 5})
			return err
		}, "GET", "/api/v1/steps/captured", "agent_name=a&end_time=2026-11-24T10%3A00%3A00Z&limit=5&stage=post&start_time=2026-11-24T09%3A00%3A00Z&step_name=search&step_type=tool", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, ch := recordingServer(t, 200, `{}`)
			if err := tt.call(newTestClient(t, srv.URL)); err != nil {
				t.Fatal(err)
			}
			r := <-ch
			if r.method != tt.method || r.path != tt.path || r.query != tt.query {
				t.Fatalf("got %s %s ?%s, want %s %s ?%s", r.method, r.path, r.query, tt.method, tt.path, tt.query)
			}
			if !strings.Contains(r.body, tt.bodyContains) || (tt.bodyLacks != "" && strings.Contains(r.body, tt.bodyLacks)) {
				t.Fatalf("body %s", r.body)
			}
			if r.body != "" && r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
			}
			if tt.name == "evaluate" && (r.header.Get("X-Trace-Id") != "t1" || r.header.Get("X-Span-Id") != "s1") {
				t.Fatalf("trace headers %v", r.header)
			}
		})
	}
}
