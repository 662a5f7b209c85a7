package observability

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard/server/problem"
)

// Runtime and registration bodies (initAgent, /evaluation, events and their query, captured steps) skip the fields they
// do not know, so that clients of any version (the reference implementation's SDKs among them) keep
// working. What was skipped is not silent: it is counted per route and logged at debug level with the
// field paths (never the values).

// LenientRoutes are the route patterns whose bodies are decoded leniently (the label values of
// unknown_fields_ignored_total, which start at zero).
var LenientRoutes = []string{
	"POST /api/v1/agents/initAgent",
	"POST /api/v1/evaluation",
	"POST /api/v1/observability/events",
	"POST /api/v1/observability/events/query",
	"POST /api/v1/steps/captured",
}

func newUnknownFieldsCounter(name func(string) string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: name("unknown_fields_ignored_total"),
		Help: "Unknown request body fields skipped by the lenient decoding of runtime routes, by route pattern.",
	}, []string{"route"})
	for _, r := range LenientRoutes {
		c.WithLabelValues(r)
	}
	return c
}

// UnknownFieldsIgnored counts n skipped fields of a request to route (a route pattern such as
// "POST /api/v1/evaluation").
func (m *Metrics) UnknownFieldsIgnored(route string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.unknownFields.WithLabelValues(route).Add(float64(n))
}

// NoteIgnored counts and logs (debug) the fields a lenient decoding of r's body skipped; it does nothing
// when none was. The route label is r's pattern, never its raw path; w gives the request id.
func NoteIgnored(m *Metrics, log *zap.Logger, w http.ResponseWriter, r *http.Request, ig problem.Ignored) {
	if ig.Count == 0 {
		return
	}
	route := r.Pattern
	if route == "" {
		route = UnmatchedRoute
	}
	requestID := w.Header().Get(problem.RequestIDHeader)
	m.UnknownFieldsIgnored(route, ig.Count)
	if log != nil {
		log.Debug("unknown request fields ignored", zap.String("route", route), zap.String("request_id", requestID),
			zap.Int("count", ig.Count), zap.Strings("fields", ig.Paths))
	}
}
