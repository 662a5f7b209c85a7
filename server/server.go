// Package server is the REST service of guard: the /api/v1 control plane (controls, agents, links,
// versions), POST /evaluation over a per-agent compiled engine cache, API-key authentication and
// problem+json errors, on Go's net/http ServeMux.
package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
	"github.com/guardrail-control/guard/llmproxy"
	"github.com/guardrail-control/guard/server/capture"
	"github.com/guardrail-control/guard/server/observability"
	"github.com/guardrail-control/guard/server/problem"
	"github.com/guardrail-control/guard/server/tracing"
)

// DefaultBodyLimit bounds request bodies (413 PAYLOAD_TOO_LARGE beyond).
const DefaultBodyLimit int64 = 1 << 20

// DefaultPolicyPollInterval is how often the server polls the store's policy epoch to notice changes
// made by other replicas.
const DefaultPolicyPollInterval = 250 * time.Millisecond

// VersionHeader is set on every response.
const VersionHeader = "X-Guard-Server-Version"

// Server is the guard REST service. It implements http.Handler; Close stops its background work.
type Server struct {
	store   guard.Store
	cfg     config
	log     *zap.Logger
	mux     *http.ServeMux
	handler http.Handler
	auth    *authenticator
	xsite   *crossSite
	cache   *engineCache
	tracer  trace.Tracer // nil: no spans (WithTracerProvider)
	jobs    *replayJobs  // replay jobs (replay_jobs.go)
	sdks    sdkTracker   // the agents' SDKs last written (agent_sdk.go)
	// approvals holds the waits for decisions and the webhook sender (approvals.go).
	approvals *approvals
	// llmProxy is the LLM API proxy (llmproxy.go); nil when not served.
	llmProxy *llmproxy.Proxy

	stopOnce sync.Once
	stop     context.CancelFunc
	done     chan struct{}
	keysDone chan struct{} // closed when the key poller has stopped (runtime_keys.go)
}

type config struct {
	logger      *zap.Logger
	authEnabled bool
	regularKeys []string
	adminKeys   []string
	namedKeys   []Key // WithKeys (keys.go)
	// keyPollInterval is WithKeyPollInterval (runtime_keys.go) when keyPollSet.
	keyPollInterval time.Duration
	keyPollSet      bool
	bodyLimit       int64
	version         string
	registry        *evaluator.Registry
	pollInterval    time.Duration
	ui              http.Handler
	obs             obsConfig
	// listenAddr and allowedOrigins configure the cross-site checks (crosssite.go).
	listenAddr     string
	allowedOrigins []string
	accessLog      bool
	pprof          bool
	evalTimeout    time.Duration
	tracerProvider trace.TracerProvider
	// capture and replay: step capture (capture.go) and replay jobs (replay_jobs.go).
	capture *capture.Recorder
	replay  replayConfig
	// approvals: the approval webhook and redaction (approvals.go).
	approvals approvalConfig
	// sessions keeps the session state of every agent's engine (sessions.go).
	sessions guard.SessionStore
	// llmProxy configures the LLM API proxy (llmproxy.go); nil: not served.
	llmProxy *llmproxy.Config
}

// Option configures a Server.
type Option func(*config)

// WithLogger sets the logger (children are named agent_control.server). Default: no logging.
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.logger = l } }

// WithAuth turns API-key authentication on or off. regular keys may use the runtime and read routes,
// admin keys every route. New refuses enabled authentication with no key at all.
func WithAuth(enabled bool, regular, admin []string) Option {
	return func(c *config) {
		c.authEnabled = enabled
		c.regularKeys = append([]string(nil), regular...)
		c.adminKeys = append([]string(nil), admin...)
	}
}

// WithBodyLimit sets the maximum request body size in bytes (default 1 MiB).
func WithBodyLimit(n int64) Option { return func(c *config) { c.bodyLimit = n } }

// WithVersion sets the version reported by /health and the X-Guard-Server-Version header.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithRegistry makes the server validate and evaluate with r instead of evaluator.Default.
func WithRegistry(r *evaluator.Registry) Option { return func(c *config) { c.registry = r } }

// WithUI mounts the dashboard handler at /ui/ and redirects / to it.
func WithUI(h http.Handler) Option { return func(c *config) { c.ui = h } }

// WithPolicyPollInterval sets how often the store's policy epoch is polled (default 250 ms); a change
// made by another replica is enforced within about this delay. Zero or negative disables polling.
func WithPolicyPollInterval(d time.Duration) Option { return func(c *config) { c.pollInterval = d } }

// WithEvaluationTimeout sets the deadline of one POST /evaluation (default
// guard.DefaultEvaluationTimeout, 2 s): the controls still to run when it passes are reported as
// evaluator errors (their on_error decides) and the answer is still a complete 200. It must be positive
// and, so that the answer can still be written, below the http.Server's WriteTimeout.
func WithEvaluationTimeout(d time.Duration) Option { return func(c *config) { c.evalTimeout = d } }

// New returns a server over st. It starts the policy poller; call Close to stop it.
func New(st guard.Store, opts ...Option) (*Server, error) {
	if st == nil {
		return nil, errors.New("server: nil store")
	}
	cfg := config{
		logger:       zap.NewNop(),
		bodyLimit:    DefaultBodyLimit,
		version:      "dev",
		registry:     evaluator.Default,
		pollInterval: DefaultPolicyPollInterval,
		evalTimeout:  guard.DefaultEvaluationTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.replay.set {
		cfg.replay.syncWait = defaultReplaySyncWait
	}
	if cfg.logger == nil {
		cfg.logger = zap.NewNop()
	}
	if cfg.registry == nil {
		cfg.registry = evaluator.Default
	}
	if cfg.bodyLimit <= 0 {
		return nil, errors.New("server: the body limit must be positive")
	}
	if cfg.evalTimeout <= 0 {
		return nil, errors.New("server: the evaluation timeout must be positive")
	}
	auth, err := newAuthenticator(cfg.authEnabled, cfg.regularKeys, cfg.adminKeys, cfg.namedKeys)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(scopeStore); auth.scoped() && !ok {
		return nil, errors.New("server: a key is limited to agents but the store cannot say which agents a control is linked to")
	}
	xsite, err := newCrossSite(cfg.listenAddr, cfg.allowedOrigins)
	if err != nil {
		return nil, err
	}
	s := &Server{
		store: st,
		cfg:   cfg,
		log:   cfg.logger.Named("agent_control.server"),
		mux:   http.NewServeMux(),
		auth:  auth,
		xsite: xsite,
		done:  make(chan struct{}),
		jobs:  &replayJobs{jobs: map[string]*replayJob{}},
	}
	if cfg.tracerProvider != nil {
		s.tracer = cfg.tracerProvider.Tracer(tracing.TracerName)
	}
	s.cache = newEngineCache(st, cfg.registry, s.log)
	if m := cfg.obs.metrics; m != nil {
		s.cache.onRebuild = m.SnapshotRebuilt
	}
	s.cache.sessions = sessionStoreOf(&cfg)
	if s.llmProxy, err = s.newLLMProxy(); err != nil {
		return nil, err
	}
	for _, rt := range s.routes() {
		// Host and Origin first (a cross-site request is refused whatever its key), then the key, then the
		// body's media type.
		h := s.audited(rt, s.crossSiteInner(rt.method, rt.handler))
		s.mux.Handle(rt.pattern(), s.crossSiteOuter(rt.method, s.auth.wrap(rt.level, rt.reads(), rt.keyHeader, s.scopeRoute(rt, h))))
	}
	s.handler = s.middleware(http.HandlerFunc(s.dispatch))

	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.jobs.base = ctx // Close cancels running replays
	s.approvals = newApprovals(cfg.approvals, s)
	if s.approvals.hook != nil {
		s.approvals.hook.start(ctx)
	}
	s.keysDone = make(chan struct{})
	s.startKeys(ctx, s.keysDone)
	if cfg.pollInterval > 0 {
		go s.cache.poll(ctx, cfg.pollInterval, s.done)
	} else {
		close(s.done)
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close stops the policy poller. It does not close the store.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		s.stop()
		<-s.done
		<-s.keysDone
		if s.approvals.hook != nil {
			s.approvals.hook.wait()
		}
	})
	return nil
}

// dispatch routes r through the mux, answering unknown routes with 404 NOT_FOUND and known paths with a
// wrong method with 405 METHOD_NOT_ALLOWED (and the mux's Allow header), both as problem+json.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	h, _ := s.mux.Handler(r)
	rec := &headerRecorder{header: make(http.Header)}
	h.ServeHTTP(rec, r)
	if rec.status == http.StatusMethodNotAllowed {
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		problem.Write(w, r, s.log, problem.New(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"this method is not allowed on this path"))
		return
	}
	problem.Write(w, r, s.log, problem.New(http.StatusNotFound, problem.CodeNotFound, "no such route"))
}

// headerRecorder captures the status and headers the mux's own 404/405 handler writes, discarding the body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil
}
func (h *headerRecorder) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

// writeErr renders err as problem+json through the one error path.
// decodeLenient decodes the body of a runtime or registration route, skipping unknown fields (counted
// and logged by observability.NoteIgnored). Control-plane routes use problem.DecodeJSON instead.
func (s *Server) decodeLenient(w http.ResponseWriter, r *http.Request, dst any) error {
	ig, err := problem.DecodeLenient(r, dst)
	if err != nil {
		return err
	}
	observability.NoteIgnored(s.cfg.obs.metrics, s.log, w, r, ig)
	return nil
}

func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, s.log, err)
}
