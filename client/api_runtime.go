package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/guardrail-control/guard"
)

// EvaluatorInfo describes an evaluator the server offers (GET /evaluators).
type EvaluatorInfo struct {
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Version        string          `json:"version"`
	ConfigSchema   json.RawMessage `json:"config_schema"`
	RequiresAPIKey bool            `json:"requires_api_key"`
	// TimeoutMS is the evaluator's default timeout (a config's timeout_ms overrides it); 0 from servers
	// before it was listed.
	TimeoutMS int64 `json:"timeout_ms"`
}

// EventsAck is the answer of POST /observability/events: 202 with the events enqueued, or, on a server
// with OBSERVABILITY_DURABLE=true, 201 with the events stored (committed) before the answer. A full
// buffer is an *APIError with status 503 (OBSERVABILITY_BUFFER_FULL): nothing was taken, send again later.
type EventsAck struct {
	Received int `json:"received"`
	Enqueued int `json:"enqueued"`
	Dropped  int `json:"dropped"`
	Stored   int `json:"stored"`
}

// EventPage is the answer of POST /observability/events/query.
type EventPage struct {
	Events []guard.Event `json:"events"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// StatsOptions asks for an agent's statistics. TimeRange is one of 1m 5m 15m 1h 6h 24h 7d 30d ("" means
// the server default, 1h).
type StatsOptions struct {
	AgentName         string // empty: every agent, with a breakdown per agent in StatsResponse.Agents
	TimeRange         string
	IncludeTimeseries bool
}

// StatsResponse is the answer of GET /observability/stats.
type StatsResponse = guard.StatsReport

// ControlStatsResponse is the answer of GET /observability/stats/controls/{control_id}.
type ControlStatsResponse = guard.ControlStatsReport

// Evaluate asks the server to evaluate step at stage against the agent's server controls
// (POST /evaluation). Trace and span ids set on ctx with WithTrace are sent as X-Trace-Id and X-Span-Id;
// an OpenTelemetry span in ctx is sent as traceparent (every request of the client does so).
func (c *HTTPClient) Evaluate(ctx context.Context, agentName string, step guard.Step, stage guard.Stage) (*guard.Result, error) {
	body := struct {
		AgentName string      `json:"agent_name"`
		Step      guard.Step  `json:"step"`
		Stage     guard.Stage `json:"stage"`
	}{agentName, step, stage}
	cl := call{method: http.MethodPost, path: "/evaluation", in: body}
	if tr, ok := ctx.Value(traceKey{}).(traceIDs); ok {
		cl.header = http.Header{}
		if tr.traceID != "" {
			cl.header.Set("X-Trace-Id", tr.traceID)
		}
		if tr.spanID != "" {
			cl.header.Set("X-Span-Id", tr.spanID)
		}
	}
	var out guard.Result
	cl.out = &out
	if _, err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListEvaluators returns the evaluators the server offers, sorted by name. It reads the reference's
// shape the server answers (a map from evaluator name to its info, docs/compatibility.md) and the list
// {"evaluators": [...]} of servers before it.
func (c *HTTPClient) ListEvaluators(ctx context.Context) ([]EvaluatorInfo, error) {
	var raw map[string]json.RawMessage
	if _, err := c.do(ctx, call{method: http.MethodGet, path: "/evaluators", out: &raw}); err != nil {
		return nil, err
	}
	if old, ok := raw["evaluators"]; ok && len(old) > 0 && old[0] == '[' {
		var list []EvaluatorInfo
		if err := json.Unmarshal(old, &list); err != nil {
			return nil, fmt.Errorf("guard client: GET /evaluators: %w", err)
		}
		return list, nil
	}
	out := make([]EvaluatorInfo, 0, len(raw))
	for name, v := range raw {
		var info EvaluatorInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return nil, fmt.Errorf("guard client: GET /evaluators: %s: %w", name, err)
		}
		if info.Name == "" {
			info.Name = name
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PostEvents sends 1 to 1000 observability events. An event's Source may be empty or "sdk" (the server
// stores sdk); "server" is reserved for the server's own recorder and refused. An event whose
// ControlExecutionID the server already holds is not stored again.
func (c *HTTPClient) PostEvents(ctx context.Context, events []guard.Event) (EventsAck, error) {
	body := struct {
		Events []guard.Event `json:"events"`
	}{events}
	var out EventsAck
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/observability/events", in: body, out: &out})
	return out, err
}

// postWireEvents is PostEvents for the agent's pre-formatted events.
func (c *HTTPClient) postWireEvents(ctx context.Context, events []wireEvent) (EventsAck, error) {
	body, err := appendEventsJSON(make([]byte, 0, 400*len(events)+16), events)
	if err != nil {
		return EventsAck{}, err
	}
	var out EventsAck
	_, err = c.do(ctx, call{method: http.MethodPost, path: "/observability/events", raw: body, out: &out})
	return out, err
}

// QueryEvents returns events matching q, newest first. A zero Limit asks for 100.
func (c *HTTPClient) QueryEvents(ctx context.Context, q guard.EventQuery) (EventPage, error) {
	if q.Limit == 0 {
		q.Limit = 100
	}
	var out EventPage
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/observability/events/query", in: q, out: &out})
	return out, err
}

// Stats returns an agent's evaluation statistics, or every agent's when opts.AgentName is empty.
func (c *HTTPClient) Stats(ctx context.Context, opts StatsOptions) (StatsResponse, error) {
	q := url.Values{}
	if opts.AgentName != "" {
		q.Set("agent_name", opts.AgentName)
	}
	if opts.TimeRange != "" {
		q.Set("time_range", opts.TimeRange)
	}
	if opts.IncludeTimeseries {
		q.Set("include_timeseries", "true")
	}
	var out StatsResponse
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/observability/stats", query: q, out: &out})
	return out, err
}

// ControlStats returns the statistics of one control for an agent, or for every agent when agentName is
// empty (with a breakdown per agent).
func (c *HTTPClient) ControlStats(ctx context.Context, controlID int64, agentName, timeRange string) (ControlStatsResponse, error) {
	q := url.Values{}
	if agentName != "" {
		q.Set("agent_name", agentName)
	}
	if timeRange != "" {
		q.Set("time_range", timeRange)
	}
	var out ControlStatsResponse
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/observability/stats/controls/" + strconv.FormatInt(controlID, 10), query: q, out: &out})
	return out, err
}

// traceIDs carries the trace and span ids of a step.
type traceIDs struct{ traceID, spanID string }

type traceKey struct{}

// WithTrace returns a context carrying a trace id and a span id. Protect copies them into the events it
// records and Evaluate sends them as X-Trace-Id and X-Span-Id. Applications that use OpenTelemetry need
// not call it: the span of the context is propagated (traceparent) and its ids go into the events; ids
// given with WithTrace win over it in events, as X-Trace-Id wins on the server.
func WithTrace(ctx context.Context, traceID, spanID string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceIDs{traceID, spanID})
}

type stepContextKey struct{}

// WithStepContext returns a context whose value m becomes the context of the steps Protect checks
// (selectors context.<field>, e.g. context.user_role). m must hold JSON-like values and must not be
// modified afterwards.
func WithStepContext(ctx context.Context, m map[string]any) context.Context {
	return context.WithValue(ctx, stepContextKey{}, m)
}
