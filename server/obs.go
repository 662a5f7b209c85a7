package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
	"strings"
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
	// readWait bounds how long a query or statistics request waits for buffered events to be written;
	// readWaitSet false: observability.DefaultReadWait.
	readWait    time.Duration
	readWaitSet bool
}

// WithEventReadWait (OBSERVABILITY_READ_WAIT_MS) bounds how long a query or statistics request waits for
// the events buffered before it to be written, so that the server reads its own writes (default 2 s);
// 0 turns the wait off (reads see what the last batch wrote).
func WithEventReadWait(d time.Duration) Option {
	return func(c *config) { c.obs.readWait, c.obs.readWaitSet = d, true }
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

// obsRoutes returns the /api/v1/observability endpoints (503 OBSERVABILITY_DISABLED when event recording
// is off, except the status, which says so) and /metrics when metrics are configured.
func (s *Server) obsRoutes() []route {
	api := &observability.API{
		Store:    s.store,
		Recorder: s.cfg.obs.recorder,
		Enabled:  s.cfg.obs.enabled,
		Durable:  s.cfg.obs.durable,
		Metrics:  s.cfg.obs.metrics,
		Logger:   s.log,
		ControlKnown: func(ctx context.Context, id int64) error {
			_, _, err := s.store.ListControlVersions(ctx, id, guard.PageRequest{Limit: 1}) // deleted ones too
			return err
		},
	}
	if s.cfg.obs.readWaitSet {
		api.ReadWait = s.cfg.obs.readWait
		if api.ReadWait <= 0 {
			api.ReadWait = -1 // no wait
		}
	}
	if s.auth.enabled { // a key limited to agents may be configured at any time (the key file, keys at runtime)
		api.Scope, api.AllowsAgent = s.agentScope, KeyAllowsAgent
	}
	if s.auth.enabled {
		api.KeyName = KeyName
	}
	rs := []route{
		{method: "POST", path: apiPrefix + "/observability/events", level: levelRuntime, handler: http.HandlerFunc(api.PostEvents)},
		{method: "POST", path: apiPrefix + "/observability/events/query", level: levelRuntime, handler: http.HandlerFunc(api.QueryEvents)},
		{method: "GET", path: apiPrefix + "/observability/stats", level: levelRuntime, handler: http.HandlerFunc(api.Stats)},
		{method: "GET", path: apiPrefix + "/observability/stats/controls/{control_id}", level: levelRuntime, handler: http.HandlerFunc(api.ControlStats)},
		{method: "GET", path: apiPrefix + "/observability/status", level: levelRuntime, handler: http.HandlerFunc(api.Status)},
		{method: "GET", path: apiPrefix + "/observability/traces/{trace_id}", level: levelRuntime, handler: http.HandlerFunc(api.Trace)},
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
		m.ObserveAgentEvaluation(agent, res.Decision)
		m.ObserveResult(res)
	}
	if s.cfg.obs.enabled && s.cfg.obs.recorder != nil {
		traceID, spanID := eventTraceIDs(r.Header)
		if traceID == "" && spanID == "" {
			traceID, spanID = newTraceIDs()
		}
		events := observability.EventsFromResult(agent, step, stage, res, traceID, spanID, time.Now())
		setKeyName(r, events)
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

// newTraceIDs makes the trace and span ids of the events of an evaluation whose request named none: the
// reference's clients read every event's trace_id and span_id as non-empty strings (W3C sizes here:
// 32 and 16 lower-case hex digits). Not secrets: math/rand/v2 is enough, and cheap.
func newTraceIDs() (traceID, spanID string) {
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], rand.Uint64()|1) // never all zero (an invalid W3C id)
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	binary.LittleEndian.PutUint64(b[16:], rand.Uint64()|1)
	return hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
}

// recordShadow records what the agent's shadow controls would have decided (res, from
// Engine.EvaluateWithShadow) as shadow events. Their result is never part of the response. res is nil
// when the request's one evaluation deadline had passed once the enforced controls were evaluated: the
// shadow controls get what is left, none once it has passed (counted in shadow_evaluations_total by
// outcome).
func (s *Server) recordShadow(r *http.Request, agent string, step *guard.Step, stage guard.Stage, res *guard.Result) {
	if res == nil {
		s.cfg.obs.metrics.ObserveShadow(observability.ShadowSkipped)
		return
	}
	s.cfg.obs.metrics.ObserveShadow(shadowOutcome(res))
	traceID, spanID := r.Header.Get(TraceIDHeader), r.Header.Get(SpanIDHeader)
	if traceID == "" && spanID == "" {
		traceID, spanID = newTraceIDs()
	}
	events := observability.EventsFromResult(agent, step, stage, res, traceID, spanID, time.Now())
	for i := range events {
		events[i].Shadow = true
	}
	setKeyName(r, events)
	if len(events) > 0 {
		s.cfg.obs.recorder.Enqueue(events)
	}
}

// shadowOutcome is ShadowDeadline when the request's deadline cut one of res's controls, else
// ShadowComplete.
func shadowOutcome(res *guard.Result) string {
	for i := range res.Errors {
		if err := res.Errors[i].Result.Error; err != "" && (strings.Contains(err, guard.ErrEvaluationDeadline.Error()) ||
			strings.Contains(err, guard.ErrEvaluationCancelled.Error())) {
			return observability.ShadowDeadline
		}
	}
	return observability.ShadowComplete
}

// setKeyName records on an evaluation's events the name of the request's API key (KeyName), so an event
// says which key's request decided; nothing to do when authentication is off.
func setKeyName(r *http.Request, events []guard.Event) {
	name := KeyName(r.Context())
	if name == "" {
		return
	}
	for i := range events {
		events[i].KeyName = name
	}
}
