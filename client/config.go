package client

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/evaluator"
)

// DefaultRefreshInterval is how often the agent refreshes its controls when Config.RefreshInterval is 0.
const DefaultRefreshInterval = 60 * time.Second

// NoRefresh turns the background refresh off when given as Config.RefreshInterval (any negative value does). The
// zero value of a Duration means the default, 60 s, so "0 disables" of the other client libraries is
// spelled NoRefresh in Go. Agent.Refresh still works on demand.
const NoRefresh time.Duration = -1

// DefaultControlsFile is the controls file used when Config.ControlsFile is empty and the file exists in
// the working directory.
const DefaultControlsFile = "controls.yaml"

// Environment variables read by Init.
const (
	EnvURL            = "GUARD_URL"
	EnvAPIKey         = "GUARD_API_KEY"
	EnvLogEnabled     = "GUARD_LOG_ENABLED"
	EnvLogSpanStart   = "GUARD_LOG_SPAN_START"
	EnvLogSpanEnd     = "GUARD_LOG_SPAN_END"
	EnvLogControlEval = "GUARD_LOG_CONTROL_EVAL"
	EnvObservability  = "GUARD_OBSERVABILITY_ENABLED"
)

// Config is everything Init needs. Only AgentName is required; every other field has the default its
// comment gives.
type Config struct {
	// AgentName identifies the agent; it is trimmed and lower-cased (guard.NormalizeAgentName).
	AgentName   string
	Description string
	Version     string
	// Metadata is extra agent metadata (team, environment, ...), sent as agent_metadata.
	Metadata map[string]any

	// ServerURL defaults to $GUARD_URL, then http://localhost:8000.
	ServerURL string
	// APIKey defaults to $GUARD_API_KEY; sent as X-API-Key, never logged.
	APIKey string
	// Timeout of each HTTP request; default 30 s.
	Timeout time.Duration
	// HTTPClient, when set, carries the requests (transport, TLS, proxies).
	HTTPClient *http.Client

	// ControlsFile is a YAML file of controls used when the server cannot be reached at Init. Empty means
	// "controls.yaml" if that file exists (and nothing if it does not); a file that is named explicitly
	// must exist.
	ControlsFile string
	// Steps are the step schemas registered with the agent.
	Steps []guard.StepSchema
	// ConflictMode is sent to initAgent; default guard.ConflictOverwrite.
	ConflictMode guard.ConflictMode

	// Observability turns the events of in-process evaluations on or off. Nil means $GUARD_OBSERVABILITY_ENABLED,
	// else on.
	Observability *bool
	// Log switches the library's logging; see LogConfig.
	Log LogConfig
	// Logger receives the library's logs, under the names agent_control.client, agent_control.refresh,
	// agent_control.protect and agent_control.events. Nil means a zap production logger (JSON on stderr,
	// info level) when logging is enabled, and no logging when it is not.
	Logger *zap.Logger

	// RefreshInterval is the period of the background refresh of controls: 0 means 60 s, NoRefresh (or any
	// negative value) disables it.
	RefreshInterval time.Duration
	// LocalServerControls evaluates the server's controls in-process too, always: no network on the hot
	// path. The server stays the source of truth (the controls come from it and are refreshed); events of
	// these evaluations are sent with source "sdk".
	LocalServerControls bool
	// SessionStore keeps the session state of the in-process evaluations (docs/control-language.md,
	// "Sessions"); nil means one in this process's memory. Give a shared store (sessionredis) so that the
	// processes of one agent (its replicas, guard mcp and the agent's own calls) see its sessions together.
	SessionStore guard.SessionStore
	// EvaluationTimeout bounds each in-process evaluation as a whole (the engine reports the controls it
	// could not run in time as evaluator errors: their on_error decides). 0 means
	// guard.DefaultEvaluationTimeout (2 s); negative leaves only the caller's context deadline. A caller's
	// deadline that comes sooner always wins.
	EvaluationTimeout time.Duration
	// ApprovalWait, when positive, makes a step refused by a control with action.approval wait up to this
	// long for a person's decision (docs/approvals.md): approved, the step is evaluated again with the grant
	// and goes on; rejected or still pending, it fails with *ApprovalRequiredError. Zero (the default)
	// fails at once with *ApprovalRequiredError. The caller's context bounds the wait too.
	ApprovalWait time.Duration
	// Registry provides the evaluators for in-process evaluation; default evaluator.Default. Evaluators it
	// does not have make their controls fall to on_error.
	Registry *evaluator.Registry

	// EventQueueSize bounds the queue of events waiting to be sent (default 10000): the events of an
	// evaluation that would take the queue beyond it are dropped and counted (Agent.DroppedEvents), unless
	// the queue is empty. A batch the server refuses with 503 (its buffer full: nothing was taken) is kept
	// and sent again after a backoff of 1 s doubling to 30 s, keeping at most ten batches (older events
	// beyond are dropped and counted); any other failure drops the batch (events are best effort).
	EventQueueSize int
	// EventBatchSize and EventFlushInterval: a batch is sent when it holds this many events (default 100)
	// or after this long (default 5 s).
	EventBatchSize     int
	EventFlushInterval time.Duration

	// TracerProvider, when set, makes Protect record OpenTelemetry spans: guard.protect around each
	// protected call, with children guard.check (stages pre and post) and guard.call (the function, whose
	// context carries it, so the application's own spans nest inside). Nil records none and costs
	// nothing; pass otel.GetTracerProvider() to use the application's global provider. The trace context
	// of the caller's ctx is sent to the server whatever this says.
	TracerProvider trace.TracerProvider
	// CaptureSteps sends every step evaluated in-process, with its decision, to POST /steps/captured, in
	// batches like events (EventBatchSize, EventFlushInterval), so that the server keeps it for the replay
	// of draft controls (POST /controls/replay, guard replay). The server keeps only the steps of the agents
	// it captures (GUARD_CAPTURE_AGENTS) and redacts them (GUARD_CAPTURE_REDACT) before storing them. Off by
	// default: the step's input, output and context leave the process. Each protected stage then pays for
	// one JSON encoding of its step.
	CaptureSteps bool
	// CaptureQueueSize bounds the steps waiting to be sent (default 1000): beyond it, new steps are
	// dropped and counted (Agent.DroppedSteps); a batch the server does not take is dropped too.
	CaptureQueueSize int
}

// LogConfig holds the logging switches of the client (docs/client.md). A nil field takes its environment variable
// (GUARD_LOG_ENABLED, GUARD_LOG_SPAN_START, GUARD_LOG_SPAN_END, GUARD_LOG_CONTROL_EVAL), and is true when
// that is unset. Enabled false silences all logging of the library, whatever the other switches say.
type LogConfig struct {
	// Enabled is the master switch.
	Enabled *bool
	// SpanStart logs the start of each protected call (debug level).
	SpanStart *bool
	// SpanEnd logs the end of each protected call with its duration and outcome (debug level).
	SpanEnd *bool
	// ControlEval logs each control evaluated in-process (debug level) and each match (info; warn for a
	// warn control).
	ControlEval *bool
}

// Bool returns a pointer to b, for the *bool fields of Config.
func Bool(b bool) *bool { return &b }

// logSwitches are the resolved switches.
type logSwitches struct {
	enabled, spanStart, spanEnd, controlEval bool
}

// resolveBool picks the explicit value, then the environment variable, then def. A malformed variable is
// an error naming it (never its value).
func resolveBool(v *bool, env string, def bool) (bool, error) {
	if v != nil {
		return *v, nil
	}
	s, ok := os.LookupEnv(env)
	if !ok || s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("guard client: %s must be a boolean (true or false)", env)
	}
	return b, nil
}

func (l LogConfig) resolve() (logSwitches, error) {
	var s logSwitches
	var err error
	if s.enabled, err = resolveBool(l.Enabled, EnvLogEnabled, true); err != nil {
		return s, err
	}
	if s.spanStart, err = resolveBool(l.SpanStart, EnvLogSpanStart, true); err != nil {
		return s, err
	}
	if s.spanEnd, err = resolveBool(l.SpanEnd, EnvLogSpanEnd, true); err != nil {
		return s, err
	}
	if s.controlEval, err = resolveBool(l.ControlEval, EnvLogControlEval, true); err != nil {
		return s, err
	}
	if !s.enabled {
		s.spanStart, s.spanEnd, s.controlEval = false, false, false
	}
	return s, nil
}

// settings is a Config with every default applied.
type settings struct {
	Config
	agentName     string
	controlsFile  string // "" for none
	observability bool
	log           logSwitches
	refresh       time.Duration // <= 0: off
}

func (c Config) resolve() (*settings, error) {
	s := &settings{Config: c}
	name, err := guard.NormalizeAgentName(c.AgentName)
	if err != nil {
		return nil, fmt.Errorf("guard client: agent name %s", err)
	}
	s.agentName = name
	if s.ServerURL == "" {
		s.ServerURL = os.Getenv(EnvURL)
	}
	if s.ServerURL == "" {
		s.ServerURL = DefaultServerURL
	}
	if s.APIKey == "" {
		s.APIKey = os.Getenv(EnvAPIKey)
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	switch s.ConflictMode {
	case "":
		s.ConflictMode = guard.ConflictOverwrite
	case guard.ConflictOverwrite, guard.ConflictStrict:
	default:
		return nil, fmt.Errorf("guard client: conflict mode must be %q or %q", guard.ConflictOverwrite, guard.ConflictStrict)
	}
	switch {
	case c.ControlsFile != "":
		s.controlsFile = c.ControlsFile
	default:
		if st, err := os.Stat(DefaultControlsFile); err == nil && !st.IsDir() {
			s.controlsFile = DefaultControlsFile
		}
	}
	if s.observability, err = resolveBool(c.Observability, EnvObservability, true); err != nil {
		return nil, err
	}
	if s.log, err = c.Log.resolve(); err != nil {
		return nil, err
	}
	if s.EvaluationTimeout == 0 {
		s.EvaluationTimeout = guard.DefaultEvaluationTimeout
	}
	switch {
	case c.RefreshInterval == 0:
		s.refresh = DefaultRefreshInterval
	case c.RefreshInterval > 0:
		s.refresh = c.RefreshInterval
	}
	if s.Registry == nil {
		s.Registry = evaluator.Default
	}
	if s.EventQueueSize <= 0 {
		s.EventQueueSize = 10000
	}
	if s.EventBatchSize <= 0 || s.EventBatchSize > 1000 {
		s.EventBatchSize = 100
	}
	if s.CaptureQueueSize <= 0 {
		s.CaptureQueueSize = 1000
	}
	if s.EventFlushInterval <= 0 {
		s.EventFlushInterval = 5 * time.Second
	}
	return s, nil
}

// logger returns the base logger the switches allow.
func (s *settings) logger() (*zap.Logger, error) {
	if !s.log.enabled {
		return zap.NewNop(), nil
	}
	if s.Logger != nil {
		return s.Logger, nil
	}
	l, err := zap.NewProduction()
	if err != nil {
		return nil, fmt.Errorf("guard client: build logger: %w", err)
	}
	return l, nil
}
