package client

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
)

// Agent is a registered agent with its snapshot of controls. Create it with Init, protect functions with
// Protect, and Close it when done. It is safe for concurrent use.
type Agent struct {
	s    *settings
	name string
	api  *HTTPClient
	own  *http.Client // the client Init built, closed by Close; nil when Config.HTTPClient was given
	pol  atomic.Pointer[policy]

	base       *zap.Logger // named agent_control
	log        *zap.Logger // agent_control.client
	logRefresh *zap.Logger // agent_control.refresh
	logProtect *zap.Logger // agent_control.protect

	events *eventSink   // nil when observability is off
	tracer trace.Tracer // nil without Config.TracerProvider: no spans
	steps  *stepSink    // nil unless Config.CaptureSteps

	refreshMu  sync.Mutex  // serialises refreshes; guards etag and failing
	registered atomic.Bool // initAgent succeeded (written under refreshMu)
	etag       string
	failing    bool

	// evalDownUntil (unix nanoseconds) skips POST /evaluation after it failed, for evalBackoff.
	evalDownUntil atomic.Int64
	evalFailing   atomic.Bool

	// shadowShort counts shadow passes the stage's deadline skipped or cut (shadow_deadline.go).
	shadowShort atomic.Int64
	// approvals remembers the approval requests of refused steps, for their retry (approval_retry.go).
	approvals approvalMemo
	// sessions keeps the session state of the in-process engines: one store for every compilation, so
	// that a refresh of the controls does not forget the sessions.
	sessions guard.SessionStore
	// stepLabels are the labels the agent's step schemas declare, shared by the in-process engines of
	// every compilation (step_labels.go).
	stepLabels *guard.StepLabels

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// evalBackoff is how long protected calls evaluate server controls in-process after POST /evaluation
// failed, before trying the server again.
const evalBackoff = 5 * time.Second

// Init registers the agent and loads its controls:
//
//  1. GET /health, POST /agents/initAgent (steps, metadata, conflict mode), GET /agents/{name}/controls;
//     the controls are compiled into the in-process engines.
//  2. When the server cannot be reached (or answers 5xx), the agent starts from the controls file if
//     there is one, else with no controls at all; it logs one warning, keeps trying in the background
//     (registering itself first), and protected calls proceed (fail-open on infrastructure).
//  3. A 4xx answer (bad key, bad name, strict-mode conflict) is returned as an *APIError: a configuration
//     problem must not be hidden by a fallback.
//
// A controls file that cannot be parsed is an error even when the server answers. ctx bounds Init only;
// the background refresh runs until Close.
func Init(ctx context.Context, cfg Config) (*Agent, error) {
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	root, err := s.logger()
	if err != nil {
		return nil, err
	}
	var sessions guard.SessionStore = guard.NewMemorySessionStore(0, 0)
	if s.SessionStore != nil {
		sessions = s.SessionStore
	}
	a := &Agent{s: s, name: s.agentName, base: root.Named("agent_control"), sessions: sessions,
		stepLabels: newStepLabels(s.Steps)}
	a.log = a.base.Named("client")
	a.logRefresh = a.base.Named("refresh")
	a.logProtect = a.base.Named("protect")
	if s.TracerProvider != nil {
		a.tracer = s.TracerProvider.Tracer(tracerName)
	}
	hc := s.HTTPClient
	if hc == nil {
		tr, _ := http.DefaultTransport.(*http.Transport)
		a.own = &http.Client{}
		if tr != nil {
			a.own.Transport = tr.Clone()
		}
		hc = a.own
	}
	if a.api, err = NewHTTPClient(s.ServerURL, s.APIKey, WithTimeout(s.Timeout), WithHTTPClient(hc)); err != nil {
		return nil, err
	}
	a.pol.Store(a.compile(nil, SourceNone))

	var fileControls []guard.Control
	if s.controlsFile != "" {
		if fileControls, err = loadControlsFileFor(s.controlsFile, a.name, s.Registry); err != nil {
			a.closeTransport()
			return nil, err
		}
	}

	if err := a.connect(ctx); err != nil {
		if !IsUnavailable(err) {
			a.closeTransport()
			return nil, err
		}
		if fileControls != nil {
			a.pol.Store(a.compile(fileControls, SourceFile))
			a.log.Warn("guard server unreachable; starting from the controls file and retrying in the background",
				zap.String("agent", a.name), zap.String("controls_file", s.controlsFile),
				zap.Int("controls", len(fileControls)), zap.Error(err))
		} else {
			a.log.Warn("guard server unreachable and no controls file; starting with no controls (fail-open) and retrying in the background",
				zap.String("agent", a.name), zap.Error(err))
		}
		a.refreshMu.Lock()
		a.failing = true
		a.refreshMu.Unlock()
	}

	a.ctx, a.cancel = context.WithCancel(context.Background())
	if s.observability {
		a.events = newEventSink(s.EventQueueSize, s.EventBatchSize, s.EventFlushInterval, min(s.Timeout, 5*time.Second),
			func(ctx context.Context, evs []wireEvent) error {
				_, err := a.api.postWireEvents(ctx, evs)
				return err
			}, a.base.Named("events"))
	}
	if s.CaptureSteps {
		a.steps = newStepSink(s.CaptureQueueSize, s.EventBatchSize, s.EventFlushInterval, min(s.Timeout, 5*time.Second),
			func(ctx context.Context, steps []CapturedStep) error {
				_, err := a.api.PostCapturedSteps(ctx, steps)
				return err
			}, a.base.Named("steps"))
	}
	if s.refresh > 0 {
		a.wg.Add(1)
		go a.refreshLoop(s.refresh)
	}
	return a, nil
}

// connect does the server part of Init: health check, registration, controls.
func (a *Agent) connect(ctx context.Context) error {
	h, err := a.api.HealthCheck(ctx)
	if err != nil {
		return err
	}
	a.log.Debug("guard server reachable", zap.String("server", a.api.BaseURL()), zap.String("version", h.Version))
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	return a.refreshLocked(ctx)
}

// Name returns the normalised agent name.
func (a *Agent) Name() string { return a.name }

// HTTPClient returns the agent's API client (same server, key and timeout).
func (a *Agent) HTTPClient() *HTTPClient { return a.api }

// Controls returns the controls of the current snapshot (do not modify them).
func (a *Agent) Controls() []guard.Control { return a.pol.Load().controls }

// Source says where the current snapshot came from: SourceServer, SourceFile or SourceNone.
func (a *Agent) Source() string { return a.pol.Load().source }

// DroppedEvents returns how many observability events were dropped: queue full, or a batch the server
// did not take.
func (a *Agent) DroppedEvents() int64 {
	if a.events == nil {
		return 0
	}
	return a.events.dropped.Load()
}

// SentEvents returns how many observability events the server accepted.
func (a *Agent) SentEvents() int64 {
	if a.events == nil {
		return 0
	}
	return a.events.sent.Load()
}

// FlushEvents sends the queued observability events (and captured steps, Config.CaptureSteps) now and
// waits until they are sent or ctx is done.
func (a *Agent) FlushEvents(ctx context.Context) {
	if a.events != nil {
		a.events.flush(ctx)
	}
	if a.steps != nil {
		a.steps.flush(ctx)
	}
}

// SentSteps returns how many captured steps the server took (Config.CaptureSteps).
func (a *Agent) SentSteps() int64 {
	if a.steps == nil {
		return 0
	}
	return a.steps.sent.Load()
}

// DroppedSteps returns how many captured steps were dropped: queue full, a step that does not encode as
// JSON, or a batch the server did not take.
func (a *Agent) DroppedSteps() int64 {
	if a.steps == nil {
		return 0
	}
	return a.steps.dropped.Load()
}

// Close stops the background refresh, sends the queued events and releases connections. No goroutine of
// the agent outlives it. Protected functions keep working after Close with the last snapshot (without
// refresh or events). Close is idempotent and returns nil.
func (a *Agent) Close() error {
	a.closeOnce.Do(func() {
		a.cancel()
		a.wg.Wait()
		if a.events != nil {
			a.events.close()
		}
		if a.steps != nil {
			a.steps.close()
		}
		a.closeTransport()
		_ = a.base.Sync()
	})
	return nil
}

func (a *Agent) closeTransport() {
	if a.own != nil {
		a.own.CloseIdleConnections()
	}
}

// errClosed is returned by Refresh after Close.
var errClosed = errors.New("guard client: agent closed")
