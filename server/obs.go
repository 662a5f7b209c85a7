package server

import (
	"context"
	"net/http"
	"time"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/tracing"
)

// Trace headers copied into observability events (eventTraceIDs).
const (
	TraceIDHeader = "X-Trace-Id"
	SpanIDHeader  = "X-Span-Id"
)

// obsConfig holds the observability wiring.
type obsConfig struct {
	metrics  *observability.Metrics
	enabled  bool
	recorder *observability.Recorder
	durable  bool
}

// WithMetrics serves m at GET /metrics, counts requests by route pattern and records evaluation metrics.
func WithMetrics(m *observability.Metrics) Option { return func(c *config) { c.obs.metrics = m } }

// WithObservability turns event recording on or off (OBSERVABILITY_ENABLED): when enabled, every
// evaluated control of POST /evaluation becomes an event enqueued on rec.
func WithObservability(enabled bool, rec *observability.Recorder) Option {
	return func(c *config) {
		c.obs.enabled = enabled
		c.obs.recorder = rec
	}
}

// WithDurableEvents (OBSERVABILITY_DURABLE) makes POST /observability/events answer 201 once the posted
// events are committed instead of 202 once buffered. Events recorded by POST /evaluation stay buffered.
func WithDurableEvents(durable bool) Option { return func(c *config) { c.obs.durable = durable } }

// obsRoutes returns the four /api/v1/observability endpoints (503 OBSERVABILITY_DISABLED when event
// recording is off) and /metrics when metrics are configured.
func (s *Server) obsRoutes() []route {
	api := &observability.API{
		Store:    s.store,
		Recorder: s.cfg.obs.recorder,
		Enabled:  s.cfg.obs.enabled,
		Durable:  s.cfg.obs.durable,
		Metrics:  s.cfg.obs.metrics,
		Logger:   s.log,
	}
	rs := []route{
		{method: "POST", path: apiPrefix + "/observability/events", level: levelRuntime, handler: http.HandlerFunc(api.PostEvents)},
		{method: "POST", path: apiPrefix + "/observability/events/query", level: levelRuntime, handler: http.HandlerFunc(api.QueryEvents)},
		{method: "GET", path: apiPrefix + "/observability/stats", level: levelRuntime, handler: http.HandlerFunc(api.Stats)},
		{method: "GET", path: apiPrefix + "/observability/stats/controls/{control_id}", level: levelRuntime, handler: http.HandlerFunc(api.ControlStats)},
	}
	if s.cfg.obs.metrics != nil {
		rs = append(rs, route{method: "GET", path: "/metrics", level: levelPublic, handler: s.cfg.obs.metrics.Handler()})
	}
	return rs
}

// observeHTTP wraps next with the HTTP metrics middleware when metrics are configured.
func (s *Server) observeHTTP(next http.Handler) http.Handler {
	if s.cfg.obs.metrics == nil {
		return next
	}
	return s.cfg.obs.metrics.Middleware(next)
}

// afterEvaluation records metrics and observability events of one evaluation.
func (s *Server) afterEvaluation(r *http.Request, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) {
	if m := s.cfg.obs.metrics; m != nil {
		m.ObserveEvaluation(res.Decision)
		m.ObserveResult(res)
	}
	if s.cfg.obs.enabled && s.cfg.obs.recorder != nil {
		traceID, spanID := eventTraceIDs(r.Header)
		events := observability.EventsFromResult(agent, step, stage, res, traceID, spanID, time.Now())
		tagApprovalEvent(events, res.Approval)
		if len(events) > 0 {
			s.cfg.obs.recorder.Enqueue(events)
		}
	}
	s.captureEvaluation(r, agent, step, stage, res)
}

// eventTraceIDs returns the trace and span ids the events of a request carry: X-Trace-Id and X-Span-Id
// as sent when either is present (they are set on purpose, per step, by the guard and reference SDKs, and
// events recorded before traceparent was read carry them), otherwise the trace id and the parent id of a
// valid W3C traceparent: the ids of the caller's span. A malformed traceparent is ignored.
func eventTraceIDs(h http.Header) (traceID, spanID string) {
	traceID, spanID = h.Get(TraceIDHeader), h.Get(SpanIDHeader)
	if traceID != "" || spanID != "" {
		return traceID, spanID
	}
	if tp := h.Get(tracing.TraceparentHeader); tp != "" {
		traceID, spanID, _ = tracing.ParseTraceparent(tp)
	}
	return traceID, spanID
}

// evaluateShadow evaluates the agent's shadow controls on the step and records what they would have
// decided as shadow events. Their result is never part of the response; an engine without shadow
// controls never gets here.
func (s *Server) evaluateShadow(r *http.Request, eng *guard.Engine, agent string, step *guard.Step, stage guard.Stage) {
	if !s.cfg.obs.enabled || s.cfg.obs.recorder == nil {
		return // nothing would be kept: the evaluation would be wasted
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.evalTimeout)
	res, err := eng.EvaluateShadow(ctx, step, stage)
	cancel()
	if err != nil || res == nil {
		return
	}
	events := observability.EventsFromResult(agent, step, stage, res,
		r.Header.Get(TraceIDHeader), r.Header.Get(SpanIDHeader), time.Now())
	for i := range events {
		events[i].Shadow = true
	}
	if len(events) > 0 {
		s.cfg.obs.recorder.Enqueue(events)
	}
}
