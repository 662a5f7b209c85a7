// Package observability records what controls do and serves it back: Prometheus metrics on a registry
// owned by the server instance, a bounded in-memory buffer that writes events to the store in batches,
// the HTTP handlers of /api/v1/observability (events in, queries and statistics out) and a background
// pruner enforcing the retention.
package observability

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// MaxEventsPerRequest bounds the events of one POST /observability/events.
const MaxEventsPerRequest = 1000

// Query limits of POST /observability/events/query.
const (
	DefaultQueryLimit = 100
	MaxQueryLimit     = 1000
)

// API serves the four observability endpoints. Errors are written with server/problem.
type API struct {
	Store    guard.EventStore
	Recorder *Recorder // nil when observability is disabled
	Enabled  bool      // OBSERVABILITY_ENABLED; when false every endpoint answers 503 OBSERVABILITY_DISABLED
	// Durable (OBSERVABILITY_DURABLE): POST /observability/events answers 201 once the events are committed
	// instead of 202 once buffered. Events recorded by evaluations stay buffered either way.
	Durable bool
	// ReadWait bounds how long a query or a statistics request waits for the events buffered before it
	// to be written, so that a server reads its own writes (0: DefaultReadWait; negative: no wait, the
	// read sees what the last batch wrote).
	ReadWait time.Duration
	Metrics  *Metrics
	Logger   *zap.Logger
	Now      func() time.Time // nil: time.Now
	// Scope and AllowsAgent limit a request to the agents its API key reaches (nil: every agent); the
	// server sets them from the key (server/scope.go).
	Scope       func(ctx context.Context) (guard.AgentScope, error)
	AllowsAgent func(ctx context.Context, agent string) bool
	// KeyName names the API key of a request (server.KeyName): posted events record it. nil: none.
	KeyName func(ctx context.Context) string
	// ControlKnown reports guard.ErrControlNotFound when no control, live or deleted, has the id: the
	// statistics of such an id without events are a 404. nil: every id is known.
	ControlKnown func(ctx context.Context, id int64) error
}

func (a *API) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *API) logger() *zap.Logger {
	if a.Logger == nil {
		return zap.NewNop()
	}
	return a.Logger
}

// errDisabled is the answer of every endpoint when observability is off.
var errDisabled = problem.New(http.StatusServiceUnavailable, problem.CodeObservabilityOff,
	"observability is disabled on this server (OBSERVABILITY_ENABLED=false): events are neither recorded nor stored, "+
		"so there is nothing to post, query or aggregate")

// available reports whether the endpoint can serve, writing the 503 when it cannot.
func (a *API) available(w http.ResponseWriter, r *http.Request, needRecorder bool) bool {
	if !a.Enabled || a.Store == nil || needRecorder && a.Recorder == nil {
		problem.Write(w, r, a.logger(), errDisabled)
		return false
	}
	return true
}

// Routes registers the four endpoints on mux under prefix (e.g. "/api/v1"), for tests and for servers
// that do not list them one by one.
func (a *API) Routes(mux *http.ServeMux, prefix string) {
	mux.HandleFunc("POST "+prefix+"/observability/events", a.PostEvents)
	mux.HandleFunc("POST "+prefix+"/observability/events/query", a.QueryEvents)
	mux.HandleFunc("GET "+prefix+"/observability/stats", a.Stats)
	mux.HandleFunc("GET "+prefix+"/observability/stats/controls/{control_id}", a.ControlStats)
	mux.HandleFunc("GET "+prefix+"/observability/status", a.Status)
}
