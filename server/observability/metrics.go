package observability

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// Reasons an event is dropped, the values of the reason label of events_dropped_total.
const (
	// DropBufferFull: the buffer was full when the event arrived.
	DropBufferFull = "buffer_full"
	// DropClosed: the event arrived after the recorder was closed.
	DropClosed = "closed"
	// DropWriteError: the event was taken from the buffer but every attempt to write its batch failed.
	DropWriteError = "write_error"
)

// UnmatchedRoute is the route label of requests no route pattern matched (404, 405).
const UnmatchedRoute = "unmatched"

// evaluatorBuckets suit evaluators, from tens of microseconds (regex) to seconds (remote scoring).
var evaluatorBuckets = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds the Prometheus collectors of one server instance on a registry of its own (never the
// global one), so several servers in one process (tests) do not collide. A nil *Metrics is valid: every
// method does nothing, and Handler answers 404.
type Metrics struct {
	registry        *prometheus.Registry
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	evaluations     *prometheus.CounterVec
	controlMatches  *prometheus.CounterVec
	evaluatorDur    *prometheus.HistogramVec
	eventsReceived  prometheus.Counter
	eventsDropped   *prometheus.CounterVec
	eventsWritten   prometheus.Counter
	eventsRefused   prometheus.Counter
	bufferBytes     prometheus.Gauge
	rebuilds        prometheus.Counter
	buildInfo       *prometheus.GaugeVec
	unknownFields   *prometheus.CounterVec
	shadowEvals     *prometheus.CounterVec
	byAgent         *boundedVec[string] // metrics_labels.go
	byControl       *boundedVec[int64]
	// sessionStoreErrors counts evaluations that found the session store failing (SessionStoreError).
	sessionStoreErrors prometheus.Counter
}

// ValidatePrefix checks a metric name prefix: non-empty, [a-zA-Z_][a-zA-Z0-9_]* (colons are reserved
// for recording rules).
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("the metrics prefix must not be empty")
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("the metrics prefix must match [a-zA-Z_][a-zA-Z0-9_]* (Prometheus metric name rules)")
		}
	}
	return nil
}

// NewMetrics builds the collectors, every name prefixed by prefix and an underscore, on a new registry
// with the standard Go and process collectors, which keep their usual names (go_goroutines,
// process_cpu_seconds_total) so that existing dashboards work. It fails when prefix is not a valid metric
// name prefix.
func NewMetrics(prefix string) (*Metrics, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	name := func(s string) string { return prefix + "_" + s }
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("http_requests_total"),
			Help: "HTTP requests served, by route (path pattern), method and status code.",
		}, []string{"route", "method", "status"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    name("http_request_duration_seconds"),
			Help:    "Time to serve an HTTP request, by route (path pattern) and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("evaluations_total"),
			Help: "Evaluations (POST /evaluation) by final decision.",
		}, []string{"decision"}),
		controlMatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("control_matches_total"),
			Help: "Controls whose condition matched, by action.",
		}, []string{"action"}),
		evaluatorDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    name("evaluator_duration_seconds"),
			Help:    "Time to evaluate one control's condition, by the evaluator of its first leaf.",
			Buckets: evaluatorBuckets,
		}, []string{"evaluator"}),
		eventsReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: name("events_received_total"),
			Help: "Observability events offered to the buffer (posted by clients or produced by evaluations).",
		}),
		eventsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: name("events_dropped_total"),
			Help: "Observability events lost, by reason: buffer_full, closed, write_error.",
		}, []string{"reason"}),
		eventsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: name("events_written_total"),
			Help: "Observability events written to the database.",
		}),
		eventsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: name("events_refused_total"),
			Help: "Posted observability events answered 503 because the buffer had no room for their request (the client keeps them).",
		}),
		bufferBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: name("events_buffer_bytes"),
			Help: "Estimated heap held by observability events waiting to be written (bounded by OBSERVABILITY_BUFFER_BYTES).",
		}),
		rebuilds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: name("snapshot_rebuilds_total"),
			Help: "Rebuilds of an agent's compiled control snapshot.",
		}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: name("build_info"),
			Help: "Always 1; the labels say which build is running (set by SetBuildInfo).",
		}, []string{"version", "revision", "goversion"}),
		unknownFields: newUnknownFieldsCounter(name),
		shadowEvals:   newShadowCounter(name),
		sessionStoreErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: name("session_store_errors_total"),
			Help: "Session store calls that failed (Redis down): the controls reading session state failed by their on_error.",
		}),
	}
	m.byAgent, m.byControl = newLabelledVecs(name)
	// The label values known in advance start at zero so that rates work from the first scrape.
	for _, reason := range []string{DropBufferFull, DropClosed, DropWriteError} {
		m.eventsDropped.WithLabelValues(reason)
	}
	for _, d := range []guard.Decision{guard.DecisionAllow, guard.DecisionDeny, guard.DecisionSteer} {
		m.evaluations.WithLabelValues(string(d))
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.requestDuration, m.evaluations, m.controlMatches, m.evaluatorDur,
		m.eventsReceived, m.eventsDropped, m.eventsWritten, m.eventsRefused, m.bufferBytes, m.rebuilds, m.buildInfo, m.unknownFields,
		m.shadowEvals,
		m.byAgent.vec, m.byControl.vec,
		m.sessionStoreErrors,
	)
	return m, nil
}

// SetBuildInfo sets the <prefix>_build_info gauge to 1 with the labels of the running build (the series of
// an earlier call is removed), so dashboards can show and join on the version.
func (m *Metrics) SetBuildInfo(version, revision, goVersion string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(version, revision, goVersion).Set(1)
}

// Registry returns the instance's registry (to register more collectors, or to gather in tests).
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.registry
}

// Handler serves the registry in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			problem.Write(w, r, nil, problem.New(http.StatusNotFound, problem.CodeNotFound, "metrics are not enabled on this server"))
		})
	}
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// ObserveEvaluation counts one evaluation by its final decision.
func (m *Metrics) ObserveEvaluation(decision guard.Decision) {
	if m == nil {
		return
	}
	m.evaluations.WithLabelValues(decisionLabel(decision)).Inc()
}

// ObserveResult counts the matched controls of res by action and observes how long each evaluated
// control took, labelled by its first leaf's evaluator.
func (m *Metrics) ObserveResult(res *guard.Result) {
	if m == nil || res == nil {
		return
	}
	for i := range res.Matches {
		m.controlMatches.WithLabelValues(decisionLabel(res.Matches[i].Action)).Inc()
	}
	m.observeControls(res)
	for _, list := range [][]guard.ControlResult{res.Matches, res.Errors, res.NonMatches} {
		for i := range list {
			cr := &list[i]
			if cr.EvaluatorName == "" || cr.Duration <= 0 {
				continue
			}
			m.evaluatorDur.WithLabelValues(cr.EvaluatorName).Observe(cr.Duration.Seconds())
		}
	}
}

// SnapshotRebuilt counts one rebuild of an agent's compiled snapshot. The agent is not a label (it would
// make the series count grow with the number of agents).
func (m *Metrics) SnapshotRebuilt(agent string) {
	if m == nil {
		return
	}
	_ = agent
	m.rebuilds.Inc()
}

func (m *Metrics) eventsIn(received, dropped int, reason string) {
	if m == nil {
		return
	}
	m.eventsReceived.Add(float64(received))
	if dropped > 0 {
		m.eventsDropped.WithLabelValues(reason).Add(float64(dropped))
	}
}

func (m *Metrics) eventsRefusedN(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.eventsRefused.Add(float64(n))
}

func (m *Metrics) setBufferBytes(n int64) {
	if m == nil {
		return
	}
	m.bufferBytes.Set(float64(n))
}

func (m *Metrics) eventsLost(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.eventsDropped.WithLabelValues(DropWriteError).Add(float64(n))
}

func (m *Metrics) eventsStored(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.eventsWritten.Add(float64(n))
}

func (m *Metrics) observeRequest(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// decisionLabel keeps label values to the known decisions (observe is a synonym of log).
func decisionLabel(d guard.Decision) string {
	switch d {
	case guard.DecisionAllow, guard.DecisionDeny, guard.DecisionSteer, guard.DecisionWarn, guard.DecisionLog:
		return string(d)
	case guard.DecisionObserve:
		return string(guard.DecisionLog)
	}
	return "other"
}

// SessionStoreError counts one failed call of the session store.
func (m *Metrics) SessionStoreError() { m.sessionStoreErrors.Inc() }
